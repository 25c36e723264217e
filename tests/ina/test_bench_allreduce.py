"""``ina bench allreduce``: its options reach the run, bad ones are clear errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.allreduce_net import need_root
from ina.bench_allreduce import wire_fraction

ROOT = Path(__file__).resolve().parents[2]


def ina(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ina", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_wire_fraction_is_values_over_values_headers_and_framing() -> None:
    assert wire_fraction(64) == pytest.approx(256 / 310)
    assert wire_fraction(8) == pytest.approx(32 / 86)


@pytest.mark.parametrize(("option", "message"), [
    (["--k", "7"], "--k 7: not one of 8, 16, 32, 64, 128, 256"),
    (["--window", "0"], "--window 0: must be in [1, 256]"),
    (["--bw", "0"], "--bw 0: must be in (0, 10000] Mbit/s"),
])
def test_bad_options_are_named(option: list[str], message: str) -> None:
    result = ina("bench", "allreduce", *option)
    assert result.returncode == 1
    assert f"ina bench allreduce: error: {message}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_window_and_k_reach_the_run(tmp_path: Path) -> None:
    why = need_root()
    if why:
        pytest.skip(why)
    result = ina("bench", "allreduce", "--bw", "50", "--size", "3000", "--window", "8",
                 "--k", "16", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "links 50 Mbit/s, built-in switch, K=16, window 8" in result.stdout
    assert re.search(r"goodput: [\d.]+ Mbit/s = [\d.]+% of the link rate \([\d.]+% of the "
                     r"wire maximum, 54\.2%\)", result.stdout), result.stdout
    [results] = (tmp_path / "runs").glob("*/results.json")
    [m] = json.loads(results.read_text())["measurements"]
    assert m["options"]["window"] == 8 and m["options"]["k"] == 16
    assert m["ok"] and m["check"]["ok"]
