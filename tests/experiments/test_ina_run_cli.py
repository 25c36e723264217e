"""``ina run``: option errors come before any network is started, as one clear line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from experiments.allreduce_net import RunError
from experiments.run_allreduce import RunOptions, format_summary, impairment_spec


def ina(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ina", *args], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize(("args", "message"), [
    (["--size", "0"], "--size 0: must be in [1,"),
    (["--loss", "1.5"], "--loss 1.5: must be in [0, 1)"),
    (["--loss", "0.1", "--target", "bmv2"], "--loss needs the built-in switch"),
    (["--window", "300"], "--window 300: must be in [1, 256]"),
    (["--bw", "0"], "--bw 0: must be in (0, 10000] Mbit/s"),
])
def test_bad_options(args: list[str], message: str) -> None:
    result = ina("run", *args)
    assert result.returncode == 2, result
    assert f"ina run: error: {message}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_algorithm_is_refused_by_name() -> None:
    with pytest.raises(RunError, match=r"unknown algorithm.*\(algorithms: hd, ina, ps, "
                                       r"ps-sharded, ring\)") as raised:
        RunOptions(algo="nccl").validate()
    assert "nccl" in str(raised.value)
    result = ina("run", "--algo", "nccl")
    assert result.returncode == 2 and "invalid choice: 'nccl'" in result.stderr


def test_bad_topology_spec_is_one_line() -> None:
    result = ina("run", "--topo", "ring,4")
    assert result.returncode == 2
    assert "ina run: error: topology spec 'ring,4': unknown topology 'ring'" in result.stderr
    assert "Traceback" not in result.stderr


def test_impairment_spec() -> None:
    assert impairment_spec(0, 0) is None
    assert impairment_spec(0.01, 0) == "loss=0.01,direction=both"
    assert impairment_spec(0.01, 0.05) == "loss=0.01,duplicate=0.05,direction=both"


def test_summary_names_the_figures_and_the_verdict() -> None:
    results = {
        "job": {"workers": ["h1", "h2"], "size": 10, "dist": "normal", "k": 64,
                "window": 64, "scaling": "tight"},
        "completion_s": 0.5, "goodput_mbps": 1.0, "goodput_fraction": 0.01,
        "link_mbps": 100.0, "errors": [], "run_dir": "runs/x",
        "workers": [{"counters": {"retransmitted": 2, "duplicate_results": 1}}] * 2,
        "check": {"ok": True, "message": "fine", "max_error": 1e-7,
                  "max_error_over_bound": 0.5, "exact": False},
    }
    text = format_summary(results)
    assert "all-reduce (2 workers, 10 float32 values" in text
    assert "completion time 0.500 s, goodput 1.00 Mbit/s = 1.0% of the 100 Mbit/s" in text
    assert "retransmitted 4, duplicate results 2" in text
    assert "check PASSED: fine" in text


def test_a_failed_check_exits_1(monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    import experiments.run_allreduce
    from ina.cli import main

    def failed(options: RunOptions) -> dict[str, object]:
        return {"ok": False, "job": {"workers": ["h1"], "size": 1, "dist": "normal",
                                     "k": 64, "window": 64, "scaling": "tight"},
                "completion_s": None, "errors": ["check failed: workers [1] differ"],
                "check": None, "run_dir": "runs/x"}

    monkeypatch.setattr(experiments.run_allreduce, "run_allreduce", failed)
    assert main(["run", "--topo", "star,2", "--check"]) == 1
    assert "error: check failed: workers [1] differ" in capsys.readouterr().out
