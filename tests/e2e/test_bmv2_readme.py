"""The README's "In-network all-reduce on BMv2" section runs as written: each ``ina run
--target bmv2`` command (with ``sudo`` dropped, as the tests run as root, and a
temporary ``--runs-dir``) passes its check, and the switch's log names its Thrift port
as the section says."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from readme_sections import blocks, section

from experiments.allreduce_net import need_root, target_missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("In-network all-reduce on BMv2")
[RUN_BLOCK] = blocks(SECTION, "")


@pytest.mark.parametrize("command", RUN_BLOCK.strip().splitlines())
def test_ina_run_on_bmv2(command: str, tmp_path: Path) -> None:
    why = need_root() or target_missing("bmv2")
    if why:
        pytest.skip(why)
    argv = command.removeprefix("sudo ").replace(".venv/bin/", f"{ROOT}/.venv/bin/").split()
    proc = subprocess.run([*argv, "--runs-dir", str(tmp_path / "runs")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "check PASSED: bit-identical on every worker" in proc.stdout, proc.stdout
    [results] = (tmp_path / "runs").glob("*/results.json")
    [measurement] = json.loads(results.read_text())["measurements"]
    assert measurement["ok"] and measurement["check"]["ok"]
    [log] = (tmp_path / "runs").rglob("logs/s1.log")
    assert re.search(r"# s1: P4Runtime on 127\.0\.0\.1:\d+, Thrift on port (\d+) "
                     r"\(simple_switch_CLI --thrift-port \1\)", log.read_text())
