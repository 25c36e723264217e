"""``Worker.allreduce`` over real transports: threads over the in-memory transport,
and UDP sockets on the loopback to a switch-model thread."""

from __future__ import annotations

import random
import select
import socket
import threading
from collections.abc import Callable

import numpy as np
import pytest
from switch_model import SwitchModel, single_switch

from hosts.protocol import AllReduceError, AllReduceTimeout, WorkerSettings
from hosts.transport import InMemoryTransport, TransportError, UdpTransport
from hosts.worker import AllReduceResult, Worker, allreduce

K = 64
SETTINGS = WorkerSettings(window=16, timeout=0.005, min_timeout=0.001, max_timeout=0.05)


class Hub:
    """The switch model behind a lock; worker i on port i + 1; random loss."""

    def __init__(self, sw: SwitchModel, n: int, loss: float = 0.0, seed: int = 0) -> None:
        self.sw, self.loss, self.rng = sw, loss, random.Random(seed)
        self.lock = threading.Lock()
        self.transports = [InMemoryTransport(lambda p, port=i + 1: self.deliver(port, p))
                           for i in range(n)]

    def deliver(self, port: int, payload: bytes) -> None:
        with self.lock:
            if self.rng.random() < self.loss:
                return
            for out_port, data in self.sw.process(port, payload):
                if self.rng.random() >= self.loss:
                    self.transports[out_port - 1].put(data)


def run_threads(fns: list[Callable[[], object]]) -> list[object]:
    results: list[object] = [None] * len(fns)

    def body(i: int) -> None:
        try:
            results[i] = fns[i]()
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            results[i] = e

    threads = [threading.Thread(target=body, args=(i,)) for i in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def check(results: list[object], xs: list[np.ndarray]) -> None:
    values = []
    for r in results:
        if isinstance(r, BaseException):
            raise r
        assert isinstance(r, AllReduceResult)
        values.append(r.values)
    exact = np.sum(np.array(xs, dtype=np.float64), axis=0)
    for v in values:
        assert v.tobytes() == values[0].tobytes()
    assert np.allclose(values[0], exact, rtol=1e-5, atol=1e-5)


def test_threads_over_memory_with_loss_and_two_allreduces() -> None:
    n = 4
    hub = Hub(single_switch(5, n, K), n, loss=0.03, seed=1)
    workers = [Worker(t, 5, n, SETTINGS) for t in hub.transports]
    rng = np.random.default_rng(0)
    for length in (3000, 100):
        xs = [rng.standard_normal(length).astype(np.float32) for _ in range(n)]
        check(run_threads([lambda w=w, x=x: w.allreduce(x)
                           for w, x in zip(workers, xs, strict=True)]), xs)
    assert sum(w.stats.retransmitted for w in workers) > 0
    assert all(w.stats.results == w.stats.wire_chunks for w in workers)


def test_allreduce_function() -> None:
    hub = Hub(single_switch(1, 2, K), 2)
    xs = [np.full(10, 1.5, np.float32), np.full(10, 2.0, np.float32)]
    out = run_threads([lambda t=t, x=x: allreduce(x, job_id=1, num_workers=2, transport=t)
                       for t, x in zip(hub.transports, xs, strict=True)])
    for o in out:
        assert isinstance(o, np.ndarray) and o.tolist() == [3.5] * 10


def test_a_failed_allreduce_leaves_the_worker_unusable() -> None:
    hub = Hub(single_switch(1, 2, K), 2, loss=1.0)
    settings = WorkerSettings(window=2, timeout=0.001, min_timeout=0.001, max_timeout=0.002,
                              max_retries=2)
    w = Worker(hub.transports[0], 1, 2, settings)
    with pytest.raises(AllReduceTimeout, match="after 2 retransmissions"):
        w.allreduce(np.ones(4, np.float32))
    with pytest.raises(AllReduceError, match="earlier all-reduce failed .* must be reset"):
        w.allreduce(np.ones(4, np.float32))


class UdpSwitch:
    """The switch model on a loopback UDP socket; the worker at address i is on
    port i + 1."""

    def __init__(self, sw: SwitchModel, loss: float = 0.0) -> None:
        self.sw, self.loss, self.rng = sw, loss, random.Random(2)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.ports: dict[tuple[str, int], int] = {}
        self.addrs: dict[int, tuple[str, int]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def attach(self, addr: tuple[str, int]) -> None:
        port = len(self.ports) + 1
        self.ports[addr], self.addrs[port] = port, addr

    def serve(self) -> None:
        while not self.stop.is_set():
            if not select.select([self.sock], [], [], 0.02)[0]:
                continue
            data, addr = self.sock.recvfrom(2048)
            if self.rng.random() < self.loss:
                continue
            for port, out in self.sw.process(self.ports[addr], data):
                self.sock.sendto(out, self.addrs[port])


def test_workers_over_udp_sockets_with_loss() -> None:
    n = 3
    switch = UdpSwitch(single_switch(8, n, K), loss=0.02)
    port = switch.sock.getsockname()[1]
    transports = [UdpTransport("127.0.0.1", port=port, bind=("127.0.0.1", 0))
                  for _ in range(n)]
    for t in transports:
        switch.attach(t.address)
    switch.thread.start()
    try:
        rng = np.random.default_rng(3)
        xs = [rng.standard_normal(5000).astype(np.float32) for _ in range(n)]
        workers = [Worker(t, 8, n, WorkerSettings(window=32, timeout=0.02)) for t in transports]
        check(run_threads([lambda w=w, x=x: w.allreduce(x)
                           for w, x in zip(workers, xs, strict=True)]), xs)
        assert sum(w.stats.retransmitted for w in workers) > 0
    finally:
        switch.stop.set()
        switch.thread.join(5)
        switch.sock.close()
        for t in transports:
            t.close()


def test_udp_transport_errors_are_named() -> None:
    with pytest.raises(TransportError, match="aggregator address 'switch' is not"):
        UdpTransport("switch", bind=("127.0.0.1", 0))
    with UdpTransport("127.0.0.1", bind=("127.0.0.1", 0)) as t:
        with pytest.raises(TransportError, match=f"cannot bind 127.0.0.1:{t.address[1]}"):
            UdpTransport("127.0.0.1", bind=t.address)
