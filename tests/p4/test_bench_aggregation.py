"""``tests/p4/bench_aggregation.py`` runs: every chunk completes and is delivered."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from bench_aggregation import measure

ROOT = Path(__file__).resolve().parents[2]


def test_every_chunk_comes_back_to_every_worker() -> None:
    rate, out = measure(k=8, workers=3, slots=4, chunks=20, quiet=True)
    assert out == 3 * 20
    assert rate > 0


@pytest.mark.slow
def test_the_readme_command_prints_its_figures() -> None:
    readme = (ROOT / "README.md").read_text()
    (command,) = re.findall(r"`python (tests/p4/bench_aggregation\.py[^`]*)`", readme)
    proc = subprocess.run([sys.executable, *command.split()], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    for k in command.split()[1:]:
        assert re.search(rf"K={k}, 8 workers: 32000 contributions in [\d.]+ s: [\d,]+ "
                         r"contributions/s \([\d,]+ per CPU-second\), 32000 RESULTs out",
                         proc.stdout), proc.stdout
