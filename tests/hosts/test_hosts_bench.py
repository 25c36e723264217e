"""``python -m hosts.bench`` runs and prints its figures."""

from __future__ import annotations

import re

import pytest

from hosts.bench import main


def test_bench_prints_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--values", "2000", "--k", "16"]) == 0
    out = capsys.readouterr().out
    for what in ("quantize", "dequantize", "encode", "decode", "protocol"):
        assert f"{what}" in out
    assert out.count("/s") == 6
    assert re.search(r"protocol .* CPU [\d.]+ us/chunk", out)


def test_bench_rejects_a_bad_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--values", "0"]) == 2
    assert "--values must be at least 1" in capsys.readouterr().err
    assert main(["--batch", "-1"]) == 2
    assert "--batch must be at least 1" in capsys.readouterr().err


def test_batches_of_one_give_the_same_result() -> None:
    """The reflected run checks its sum itself: one RESULT at a time, a window, all."""
    for batch in ("1", "64", "1000"):
        assert main(["--values", "3000", "--k", "64", "--batch", batch]) == 0
