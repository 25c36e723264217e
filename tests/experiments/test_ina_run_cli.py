"""``ina run``: option errors come before any network is started, as one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from experiment_fakes import FakeRunner

from experiments.allreduce_net import RunError
from experiments.run_allreduce import RunOptions, format_summary, impairment_spec


def ina(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ina", *args], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize(("args", "message"), [
    (["--size", "0"], "--size 0: must be in [1,"),
    (["--loss", "1.5"], "--loss 1.5: must be in [0, 1)"),
    (["--window", "300"], "--window 300: must be in [1, 256]"),
    (["--target", "bmv2", "--topo", "leafspine,2,2,1", "--loss", "0.01"],
     "--loss on leafspine,2,2,1's links between switches needs the built-in switch (on "
     "bmv2, loss comes from the kernel, on host links only)"),
    (["--bw", "0"], "--bw 0: must be in (0, 10000] Mbit/s"),
    (["--algo", "ps", "--ps-host", "h9"],
     "--ps-host h9: not a host of star,4 (hosts: h1, h2, h3, h4)"),
])
def test_bad_options(args: list[str], message: str) -> None:
    result = ina("run", *args)
    assert result.returncode == 2, result
    assert f"ina run: error: {message}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_algorithm_is_refused_by_name() -> None:
    with pytest.raises(RunError, match=r"--algo nccl: unknown algorithm \(algorithms: hd, "
                                       r"ina, ps, ps-sharded, ring\)"):
        RunOptions(algo="nccl").validate()
    result = ina("run", "--algo", "ina,nccl")
    assert result.returncode == 2
    assert "ina run: error: --algo nccl: unknown algorithm (algorithms: hd, ina" in result.stderr


def test_bad_topology_spec_is_one_line() -> None:
    result = ina("run", "--topo", "star,4", "--topo", "ring,4")
    assert result.returncode == 2
    assert result.stderr.startswith("ina run: error: --topo ring,4: unknown topology "
                                    "'ring' (known: star")
    assert result.stderr.count("\n") == 1


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
    assert "all-reduce ina (2 workers, 10 float32 values" in text
    assert "completion time 0.500 s, goodput 1.00 Mbit/s = 1.0% of the 100 Mbit/s" in text
    assert "retransmitted 4, duplicate results 2" in text
    assert "check PASSED: fine" in text


def test_a_failed_point_is_recorded_the_sweep_goes_on_and_exits_1(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    import experiments.run_allreduce
    from ina.cli import main

    monkeypatch.setattr(experiments.run_allreduce, "NetworkRunner", FakeRunner)
    monkeypatch.setattr(FakeRunner, "fail", {("ring", 1000)})
    argv = ["run", "--algo", "ring,ina", "--size", "1e3,1e4", "--bw", "10",
            "--runs-dir", str(tmp_path)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "[1/4] ring star,4 size=1000 bw=10 loss=0 #1: FAILED: h2: exit status 1: " \
           "connection refused" in out
    assert "[4/4] ina star,4 size=1e4 bw=10 loss=0 #1: " in out
    [results] = tmp_path.glob("*-sweep/results.json")
    doc = json.loads(results.read_text())
    assert [m["ok"] for m in doc["measurements"]] == [False, True, True, True]
    assert doc["ok"] is False
    assert doc["command"] == ["ina", *argv]  # the command line given, not this process's
    monkeypatch.setattr(FakeRunner, "fail", set())
    assert main(argv) == 0


def test_one_point_prints_its_summary(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    import experiments.run_allreduce
    from ina.cli import main

    monkeypatch.setattr(experiments.run_allreduce, "NetworkRunner", FakeRunner)
    assert main(["run", "--algo", "ring", "--size", "1e4", "--bw", "10", "--topo",
                 "star,3", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "all-reduce ring (3 workers, 10000 float32 values" in out
    assert "model 0.0" in out
    [run_dir] = tmp_path.glob("*-ring-star3")
    assert f"results: {run_dir}/results.json" in out
