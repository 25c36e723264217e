"""The step loop: deterministic, every worker holding the same parameters whatever the
all-reduce (the float64 reference, a real ring over in-process sockets, the in-network
agent against the switch model), compute padding, and divergence reported."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from switch_model import single_switch

from experiments.train_results import divergence
from hosts.baselines.collective import Settings
from hosts.baselines.local import run_ranks
from hosts.baselines.registry import get_collective
from hosts.protocol import WorkerSettings
from hosts.transport import InMemoryTransport
from hosts.worker import Worker
from training.sgd import Clock, StepLog, TrainSettings, build, train_local, train_worker

SETTINGS = TrainSettings(model="mlp", dataset="digits", seed=3, workers=4, steps=24,
                         eval_every=8)


def accuracy(settings: TrainSettings, params: np.ndarray) -> float:
    model, data = build(settings)
    return model.evaluate(params, data.x_test, data.y_test)[0]


def test_local_is_deterministic_and_learns() -> None:
    a, log_a = train_local(SETTINGS)
    b, log_b = train_local(SETTINGS)
    assert log_a.digests == log_b.digests and len(log_a.digests) == SETTINGS.steps + 1
    assert log_a.loss == log_b.loss
    np.testing.assert_array_equal(a.params, b.params)
    assert log_a.loss[-1] < log_a.loss[0] / 3
    assert accuracy(SETTINGS, a.params) > 0.85
    other, _ = train_local(TrainSettings(**{**SETTINGS.to_json(), "seed": 4}))
    assert not np.array_equal(other.params, a.params)


def test_ring_workers_hold_the_same_parameters_close_to_local() -> None:
    ring = get_collective("ring")

    def body(mesh: Any) -> tuple[np.ndarray, StepLog]:
        sgd, log = train_worker(SETTINGS, mesh.rank,
                                lambda g: ring.run(mesh, g, Settings(segment=1000)).values)
        return sgd.params, log

    results = run_ranks(SETTINGS.workers, body)
    digests = [log.digests for _, log in results]
    assert all(d == digests[0] for d in digests)
    local, local_log = train_local(SETTINGS)
    params = results[0][0]
    assert np.max(np.abs(params - local.params)) < 1e-3
    losses = [log.loss for _, log in results]
    mean_loss = np.mean(losses, axis=0)
    np.testing.assert_allclose(mean_loss, local_log.loss, rtol=1e-3)


class Hub:
    """The switch model behind a lock; worker i on port i + 1."""

    def __init__(self, n: int, k: int) -> None:
        self.sw = single_switch(7, n, k, slots=64)
        self.lock = threading.Lock()
        self.transports = [InMemoryTransport(lambda p, port=i + 1: self.deliver(port, p))
                           for i in range(n)]

    def deliver(self, port: int, payload: bytes) -> None:
        with self.lock:
            for out_port, data in self.sw.process(port, payload):
                self.transports[out_port - 1].put(data)


def run_threads(fns: list[Callable[[], Any]]) -> list[Any]:
    out: list[Any] = [None] * len(fns)

    def body(i: int) -> None:
        try:
            out[i] = fns[i]()
        except BaseException as e:  # noqa: BLE001 - re-raised in the test thread
            out[i] = e

    threads = [threading.Thread(target=body, args=(i,)) for i in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for r in out:
        if isinstance(r, BaseException):
            raise r
    return out


def test_in_network_workers_hold_the_same_parameters_close_to_local() -> None:
    settings = TrainSettings(**{**SETTINGS.to_json(), "steps": 12})
    n = settings.workers
    hub = Hub(n, 64)
    ws = WorkerSettings(k=64, window=16, timeout=0.05, min_timeout=0.005)
    workers = [Worker(t, 7, n, ws) for t in hub.transports]

    def train(rank: int) -> tuple[np.ndarray, StepLog]:
        w = workers[rank]
        sgd, log = train_worker(settings, rank, lambda g: w.allreduce(g).values)
        return sgd.params, log

    results = run_threads([lambda r=r: train(r) for r in range(n)])
    assert all(log.digests == results[0][1].digests for _, log in results)
    local, _ = train_local(settings)
    assert np.max(np.abs(results[0][0] - local.params)) < 1e-3  # quantized, not exact
    assert not np.array_equal(results[0][0], local.params)
    assert workers[0].next_base > 0  # one chunk sequence through the whole run


class FakeTime:
    """A clock that ``sleep`` moves on, on top of the real one."""

    def __init__(self) -> None:
        self.offset = 0.0
        self.slept: list[float] = []

    def now(self) -> float:
        return time.monotonic() + self.offset

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.offset += seconds


def test_compute_time_pads_every_step_and_reports_overruns() -> None:
    settings = TrainSettings(**{**SETTINGS.to_json(), "steps": 5, "compute_time": 0.5})
    fake = FakeTime()
    _, log = train_worker(settings, 0, lambda g: g * np.float32(4), sleep=fake.sleep,
                          clock=Clock(fake.now))
    assert log.overruns == 0 and len(fake.slept) == 5
    steps = np.diff([0.0, *log.time_s])
    assert np.all(steps >= 0.5) and np.all(steps < 0.6)
    assert all(c < 0.5 for c in log.compute_s)
    tight = TrainSettings(**{**settings.to_json(), "compute_time": 1e-9})
    _, log = train_worker(tight, 0, lambda g: g * np.float32(4), sleep=fake.sleep)
    assert log.overruns == 5


def test_a_diverging_worker_is_named_with_the_update() -> None:
    settings = TrainSettings(**{**SETTINGS.to_json(), "steps": 6, "workers": 2})
    finals, digests = [], []
    for rank in range(2):
        calls: list[int] = []

        def allreduce(g: np.ndarray, rank: int = rank, calls: list[int] = calls
                      ) -> np.ndarray:
            total = g * np.float32(2)
            if rank == 1 and len(calls) == 3:
                total[0] += np.float32(1e-3)
            calls.append(1)
            return total

        sgd, log = train_worker(settings, 0, allreduce)
        finals.append(sgd.params)
        digests.append(log.digests)
    diff, first, error = divergence(digests, finals, ["h1", "h2"])
    assert first == 4 and diff > 0
    assert error is not None and error.startswith(
        "the workers' parameters diverged after update 4: h2 differ from h1's")
    assert divergence(digests[:1] * 2, finals[:1] * 2, ["h1", "h2"]) == (0.0, None, None)


@pytest.mark.parametrize("eval_every,expected", [(8, [0, 8, 16, 24]), (10, [0, 10, 20, 24]),
                                                  (30, [0, 24])])
def test_evaluation_steps(eval_every: int, expected: list[int]) -> None:
    settings = TrainSettings(**{**SETTINGS.to_json(), "eval_every": eval_every})
    assert settings.eval_steps() == expected
