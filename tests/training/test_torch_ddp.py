"""PyTorch DistributedDataParallel with its buckets all-reduced by the in-network agent
(``training.torch_ddp``): two DDP processes whose agents talk over loopback UDP to the
switch model, against the same two processes with DDP's own all-reduce. Skipped where
PyTorch (optional) is not installed."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from switch_model import SwitchModel, single_switch

pytest.importorskip("torch", reason="PyTorch is optional (training.torch_ddp)")
pytestmark = pytest.mark.slow  # four processes that import PyTorch

ROOT = Path(__file__).resolve().parents[2]
JOB, K = 9, 64
CHILD = r'''
import json, sys
import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from hosts.protocol import WorkerSettings
from training.comm import InNetworkComm
from training.data import batch_indices, load_dataset
from training.torch_ddp import register_comm_hook

rank, n, store, switch, bind, out = sys.argv[1:7]
rank, n = int(rank), int(n)
torch.set_num_threads(1)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{store}", rank=rank,
                        world_size=n)
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 10)))
state = None
if switch != "-":
    comm = InNetworkComm("127.0.0.1", 9, n, WorkerSettings(k=64, window=16, timeout=0.05),
                         port=int(switch), bind=("127.0.0.1", int(bind)))
    state = register_comm_hook(model, comm, n)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = load_dataset("digits")
for step in range(6):
    rows = batch_indices(data.train_size, 0, step, n, 16, rank)
    loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(data.x_train[rows])),
                                             torch.from_numpy(data.y_train[rows]))
    opt.zero_grad()
    loss.backward()
    opt.step()
np.save(out, torch.cat([p.detach().flatten() for p in model.parameters()]).numpy())
print(json.dumps({"buckets": state.buckets if state else 0,
                  "chunks": comm.worker.stats.chunks if state else 0}))
dist.destroy_process_group()
'''


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class UdpSwitch(threading.Thread):
    """The switch model on a loopback UDP socket; worker i's socket is its port i + 1."""

    def __init__(self, sw: SwitchModel, workers: list[tuple[str, int]]) -> None:
        super().__init__(daemon=True)
        self.sw = sw
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.ports = {addr: i + 1 for i, addr in enumerate(workers)}
        self.addrs = {i + 1: addr for i, addr in enumerate(workers)}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                data, addr = self.sock.recvfrom(2048)
            except TimeoutError:
                continue
            for port, out in self.sw.process(self.ports[addr], data):
                self.sock.sendto(out, self.addrs[port])


def train(tmp: Path, name: str, switch: UdpSwitch | None, binds: list[int]
          ) -> tuple[list[np.ndarray], list[dict[str, int]]]:
    store = free_port()
    procs = [subprocess.Popen(
        [sys.executable, "-c", CHILD, str(r), "2", str(store),
         str(switch.sock.getsockname()[1]) if switch else "-", str(binds[r]),
         str(tmp / f"{name}{r}.npy")], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for r in range(2)]
    stats = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        stats.append(json.loads(out.strip().splitlines()[-1]))
    return [np.load(tmp / f"{name}{r}.npy") for r in range(2)], stats


def test_ddp_buckets_through_the_in_network_agent(tmp_path: Path) -> None:
    binds = [free_port(socket.SOCK_DGRAM) for _ in range(2)]
    switch = UdpSwitch(single_switch(JOB, 2, K), [("127.0.0.1", b) for b in binds])
    switch.start()
    try:
        hooked, stats = train(tmp_path, "hook", switch, binds)
    finally:
        switch.done.set()
    plain, _ = train(tmp_path, "plain", None, binds)
    assert np.array_equal(hooked[0], hooked[1])  # every rank holds the same parameters
    assert stats[0]["buckets"] == 6 and stats[0]["chunks"] == 6 * -(-2410 // K)
    assert np.max(np.abs(hooked[0] - plain[0])) < 1e-4  # quantized sums, not gloo's
    assert not np.array_equal(hooked[0], plain[0])
