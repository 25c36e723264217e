"""``python -m hosts.bench`` runs and prints its figures."""

from __future__ import annotations

import re

import numpy as np
import pytest

import hosts.bench
from experiments.check import check_allreduce
from hosts.bench import main, run_reflected
from hosts.protocol import AllReduceRun, WorkerSettings


def test_bench_prints_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--values", "2000", "--k", "16"]) == 0
    out = capsys.readouterr().out
    for what in ("quantize", "dequantize", "encode", "decode", "protocol"):
        assert f"{what}" in out
    assert out.count("/s") == 6
    assert re.search(r"protocol .* CPU [\d.]+ us/chunk", out)


def test_bench_over_udp_prints_the_figure_of_a_worker_process(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--udp``: a Worker over its UDP socket, the reflector in a process of its own;
    the sum is checked by the bench itself (exit status 1 otherwise)."""
    assert main(["--values", "5000", "--k", "256", "--udp"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"protocol over UDP .* CPU [\d.]+ us/chunk, \d+ resent", out)


def test_bench_rejects_a_bad_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--values", "0"]) == 2
    assert "--values must be at least 1" in capsys.readouterr().err
    assert main(["--batch", "-1"]) == 2
    assert "--batch must be at least 1" in capsys.readouterr().err


def test_batches_of_one_give_the_same_result() -> None:
    """The reflector hands the RESULTs back one at a time, a window at a time or all
    at once: the same bits each time, and the right ones: a one-worker job's sum is
    its own input quantized (within the quantizer's bound of the float64 input)."""
    x = np.random.default_rng(5).standard_normal(3000).astype(np.float32)
    settings = WorkerSettings(k=64)
    results = {batch: run_reflected(x, settings, batch).result() for batch in (1, 64, 1000)}
    for batch, got in results.items():
        assert got.view(np.uint32).tobytes() == results[1].view(np.uint32).tobytes(), batch
    check = check_allreduce([x], [results[1]], 64, settings.scaling)
    assert check.ok, check.message
    assert not check.exact  # quantized: not the input's bits
    for text in ("1", "64", "1000"):  # the bench's own check of its sum passes too
        assert main(["--values", "3000", "--k", "64", "--batch", text]) == 0


def test_the_bench_refuses_a_wrong_sum(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    def wrong(x: np.ndarray, settings: WorkerSettings, batch: int = 0) -> AllReduceRun:
        run = run_reflected(x, settings, batch)
        run.sums[1] = run.sums[2]  # chunk 1 comes back with chunk 2's sum
        return run

    monkeypatch.setattr(hosts.bench, "run_reflected", wrong)
    assert main(["--values", "3000", "--k", "64"]) == 1
    assert "the reflected all-reduce gave a wrong result" in capsys.readouterr().err
