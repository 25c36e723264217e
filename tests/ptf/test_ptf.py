"""PTF (p4lang's packet test framework) drives ``ina switch`` as it drives BMv2: the
switch on veth pairs (the ina_switch fixture of the project's pytest plugin), PTF on
their far ends running our PTF tests (ptftests/), which program the switch over
P4Runtime; the same on BMv2. As root; PTF comes with the dev extras."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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
@pytest.mark.parametrize("target", ["builtin", "bmv2"])
def test_ptf_runs_its_tests_against_the_switch(target: str, ina_switch: Any,
                                                tmp_path: Path) -> None:
    ptf = ptf_command()
    sw = ina_switch(PROGRAM, ports=3, target=target)
    ports = [arg for i, (_, host) in enumerate(sw.pairs) for arg in ("-i", f"{i + 1}@{host}")]
    params = (f"grpcaddr='{sw.address}';device_id='{sw.device_id}';p4info='{sw.p4info}';"
              f"config='{sw.config}'")
    sw.client.close()  # the PTF tests' own client becomes the primary
    result = subprocess.run(
        [*ptf, "--test-dir", str(TESTS), "--pypath", str(ROOT), *ports,
         f"--test-params={params}"], cwd=tmp_path, capture_output=True, text=True,
        timeout=300)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "Ran 3 tests" in out and "OK" in out, out
