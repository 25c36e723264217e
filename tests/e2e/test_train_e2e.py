"""End to end: ``ina train`` on a Mininet star of 2 hosts, the digits MLP trained with
the in-network agent and with ring all-reduce (and PyTorch's Gloo where PyTorch is
installed) beside the local reference, every
step's all-reduce checked and its compute padded to --compute-time; and the in-network
run on BMv2 when it is installed."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from experiments.allreduce_net import need_root, target_missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def train(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str],
                                               list[dict[str, Any]]]:
    proc = subprocess.run([sys.executable, "-m", "ina", "train", "--runs-dir", str(tmp_path),
                           *args], capture_output=True, text=True, timeout=900, cwd=ROOT)
    [run_dir] = tmp_path.iterdir()
    doc = json.loads((run_dir / "results.json").read_text())
    assert doc["kind"] == "train"
    return proc, doc["measurements"]


def by_algo(ms: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["point"]["algo"]: m for m in ms}


def test_ina_and_ring_train_like_local_on_the_builtin_switch(tmp_path: Path) -> None:
    why = need_root()
    if why:
        pytest.skip(why)
    algos = ["ina", "ring", *(["gloo"] if importlib.util.find_spec("torch") else [])]
    proc, ms = train(tmp_path, "--topo", "star,2", "--algo", ",".join([*algos, "local"]),
                     "--steps",
                     "30", "--eval-every", "10", "--bw", "20", "--check",
                     "--compute-time", "0.02")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = by_algo(ms)
    local = runs["local"]
    assert local["evals"]["step"] == [0, 10, 20, 30]
    for algo in algos:
        m = runs[algo]
        assert m["ok"], m["errors"]
        assert m["check"]["ok"] and m["check"]["steps"] == 30, m["check"]
        assert m["max_param_diff"] == 0.0 and m["diverged_at"] is None
        assert len(m["steps"]["loss"]) == 30
        steps = [b - a for a, b in zip([0.0, *m["steps"]["time_s"]], m["steps"]["time_s"],
                                       strict=False)]
        assert min(steps) >= 0.02  # the compute padded to --compute-time, then the sum
        assert m["compute_overruns"] == sum(c > 0.02 for c in m["steps"]["compute_s"])
        assert m["cpu_bound"] or not m["compute_overruns"]
        assert all(b > 0 for b in m["steps"]["bytes_sent"])
        assert m["evals"]["step"] == [0, 10, 20, 30]
        assert m["final_accuracy"] > 0.8
        assert abs(m["final_accuracy"] - local["final_accuracy"]) <= 0.02
        assert [w["host"] for w in m["workers"]] == ["h1", "h2"]
    assert runs["ina"]["workers"][0]["counters"]["chunks"] > 0
    assert runs["ina"]["job"]["window"] == 64 and runs["ina"]["parameters"] == 4810
    assert "speedup over ring" in proc.stdout


def test_ina_trains_on_bmv2(tmp_path: Path) -> None:
    why = need_root() or target_missing("bmv2")
    if why:
        pytest.skip(why)
    proc, ms = train(tmp_path, "--topo", "star,2", "--target", "bmv2", "--algo", "ina",
                     "--steps", "6", "--eval-every", "3", "--k", "256", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [m] = ms
    assert m["ok"] and m["check"]["ok"] and m["max_param_diff"] == 0.0, m["errors"]
    assert m["job"]["window"] == 19 and m["evals"]["step"] == [0, 3, 6]
    assert m["final_accuracy"] > m["evals"]["test_accuracy"][0]
