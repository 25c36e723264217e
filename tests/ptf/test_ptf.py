"""PTF (p4lang's packet test framework) drives ``ina switch`` as it drives BMv2: the
switch on veth pairs, PTF on their far ends running our PTF tests (ptftests/), which
program the switch over P4Runtime. As root; PTF comes with the dev extras."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ina.switch_under_test import running_switch
from topologies.nodes import ina_command

ROOT = Path(__file__).resolve().parents[2]
TESTS = Path(__file__).resolve().parent / "ptftests"
PROGRAM = ROOT / "p4" / "ipv4_forward.p4"


def ptf_command() -> list[str]:
    script = Path(sys.executable).with_name("ptf")
    if script.exists():
        return [str(script)]
    found = shutil.which("ptf")
    if found is None:
        pytest.skip("PTF is not installed (pip install ptf; it is in the dev extras)")
    return [found]


@pytest.mark.slow
def test_ptf_runs_its_tests_against_ina_switch(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pairs)")
    ptf = ptf_command()
    build = tmp_path / "build"
    compiled = subprocess.run(
        [*ina_command(), "p4c", "--target", "bmv2", "--arch", "v1model", "--p4runtime-files",
         str(build / "forward.p4info.txtpb"), "-o", str(build / "forward.json"),
         str(PROGRAM)], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    with running_switch("--no-p4", 3) as switch:
        assert switch is not None, "ina switch did not start"
        ports = [arg for i, (_, host) in enumerate(switch.pairs)
                 for arg in ("-i", f"{i + 1}@{host}")]
        params = (f"grpcaddr='{switch.address}';device_id='0';"
                  f"p4info='{build / 'forward.p4info.txtpb'}';config='{build / 'forward.json'}'")
        result = subprocess.run(
            [*ptf, "--test-dir", str(TESTS), "--pypath", str(ROOT), *ports,
             f"--test-params={params}"], cwd=tmp_path, capture_output=True, text=True,
            timeout=300)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Ran 3 tests" in out and "OK" in out, out
