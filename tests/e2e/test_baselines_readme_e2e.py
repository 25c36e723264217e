"""The README's "Host-based all-reduce" section: its ``ina run`` commands run as
written (as root), with a temporary ``--runs-dir``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from readme_sections import blocks, section

from experiments.allreduce_net import need_root

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RUN_BLOCK = blocks(section("Host-based all-reduce (the baselines)"), "")[0]


@pytest.mark.parametrize("command", RUN_BLOCK.strip().splitlines())
def test_ina_run_commands(command: str, tmp_path: Path) -> None:
    why = need_root()
    if why:
        pytest.skip(why)
    assert " --algo " in command and " --check" in command
    argv = command.replace(".venv/bin/", f"{ROOT}/.venv/bin/").split()
    argv += ["--runs-dir", str(tmp_path)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "check PASSED: bit-identical on every worker and within the float32 " \
           "summation bound" in proc.stdout, proc.stdout
    [results] = tmp_path.glob("*/results.json")
    text = results.read_text()
    assert '"tcp_retransmits"' in text and json.loads(text)
