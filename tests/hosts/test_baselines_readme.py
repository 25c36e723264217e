"""The README's "Host-based all-reduce" section, the parts that need no root: the
agents on the loopback (as a shell runs them, with free ports for 48881-48883 and a
temporary directory for ``build/``) and the Python example. ``tests/e2e`` runs its
``ina run`` commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from readme_sections import blocks, section

from experiments.check import check_float32_sum
from hosts.inputs import generate
from topologies.netutil import free_tcp_port

ROOT = Path(__file__).resolve().parents[2]
_RUN, AGENTS, PYTHON = blocks(section("Host-based all-reduce (the baselines)"))


def test_agents_on_the_loopback(tmp_path: Path) -> None:
    script = AGENTS.replace(".venv/bin/", f"{ROOT}/.venv/bin/")
    script = script.replace("build/", f"{tmp_path}/")
    for port in ("48881", "48882", "48883"):
        script = script.replace(port, str(free_tcp_port()))
    proc = subprocess.run(["bash", "-c", f"set -e\n{script}\nwait"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("ina agent: ring rank") == 3, proc.stdout
    outs = [np.load(tmp_path / f"r{rank}.npy") for rank in range(3)]
    inputs = [generate("normal", 1000, 0, rank) for rank in range(3)]
    assert check_float32_sum(inputs, outs).ok


def test_python_example() -> None:
    proc = subprocess.run([sys.executable, "-c", PYTHON], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[15. 15. 15. 15. 15.]"
