"""The training worker as a process (``python -m training.worker``), several on the
loopback: ring over the baselines' TCP mesh and, where PyTorch is installed, PyTorch's
own Gloo all-reduce; every worker ends with the same parameters, each step's sum within
the float32 bound, the log complete."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from experiments.algorithms import HostBased
from experiments.run_train import check_steps
from training.sgd import TrainSettings, train_local
from training.worker import WorkerSpec

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = TrainSettings(workers=3, steps=8, eval_every=4, seed=1)


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def run_workers(spec: WorkerSpec, tmp: Path) -> list[dict]:
    spec_path = tmp / "spec.json"
    spec.write(spec_path)
    procs = [subprocess.Popen([sys.executable, "-m", "training.worker", str(spec_path),
                               "--rank", str(r), "--output", str(tmp / f"r{r}.npy"),
                               "--stats", str(tmp / f"r{r}.json")], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(spec.settings.workers)]
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    return [json.loads((tmp / f"r{r}.json").read_text()) for r in range(len(procs))]


@pytest.mark.slow  # three worker processes: 5 to 10 CPU-seconds, more with PyTorch
@pytest.mark.parametrize("algo", ["ring", "gloo"])
def test_workers_train_alike_over_the_loopback(algo: str, tmp_path: Path) -> None:
    if algo == "gloo":
        pytest.importorskip("torch", reason="PyTorch is optional (--algo gloo)")
    ports = free_ports(3)
    spec = WorkerSpec(algo, SETTINGS, peers=tuple(f"127.0.0.1:{p}" for p in ports),
                      interfaces=("lo",) * 3, checkpoints=str(tmp_path),
                      check_dir=str(tmp_path / "check"))
    (tmp_path / "check").mkdir()
    docs = run_workers(spec, tmp_path)
    logs = [d["log"] for d in docs]
    assert all(log["digests"] == logs[0]["digests"] for log in logs)
    assert len(logs[0]["digests"]) == SETTINGS.steps + 1 and len(logs[0]["loss"]) == 8
    finals = [np.load(tmp_path / f"r{r}.npy") for r in range(3)]
    assert all(np.array_equal(f, finals[0]) for f in finals)
    assert sorted(p.name for p in tmp_path.glob("u*.npy")) == [
        "u000000.npy", "u000004.npy", "u000008.npy"]  # rank 0's evaluation snapshots
    local, _ = train_local(SETTINGS)
    assert np.max(np.abs(finals[0] - local.params)) < 1e-4
    assert all(b > 0 for b in logs[1]["bytes_sent"])
    check = check_steps(HostBased(algo), None, tmp_path / "check", SETTINGS)
    assert check["ok"] and check["steps"] == 8, check["message"]


def test_a_bad_spec_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text('{"algo": "ring"}')
    proc = subprocess.run([sys.executable, "-m", "training.worker", str(tmp_path / "spec.json"),
                           "--rank", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"training worker: error: {tmp_path}/spec.json: ")
    assert proc.stderr.count("\n") == 1
