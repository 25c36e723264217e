"""``python -m hosts.bench`` runs and prints its figures."""

from __future__ import annotations

import pytest

from hosts.bench import main


def test_bench_prints_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--values", "2000", "--k", "16"]) == 0
    out = capsys.readouterr().out
    for what in ("quantize", "dequantize", "encode", "decode", "protocol"):
        assert f"{what}" in out
    assert out.count("/s") == 6


def test_bench_rejects_a_bad_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--values", "0"]) == 2
    assert "--values must be at least 1" in capsys.readouterr().err
