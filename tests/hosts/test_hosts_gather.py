"""Letting RESULTs gather before a worker handles them (``AllReduceRun.gather_time``,
``Worker``): when, how long, and that the all-reduce is the same with it."""

from __future__ import annotations

import numpy as np
import pytest
from switch_model import single_switch
from test_hosts_worker import Hub, check, run_threads

from hosts.protocol import AllReduceRun, WorkerSettings
from hosts.worker import Worker

K = 64


def started(length: int, **settings: object) -> AllReduceRun:
    run = AllReduceRun(np.ones(length, np.float32), 1, 2,
                       WorkerSettings(window=8, **settings))  # type: ignore[arg-type]
    run.start(0.0)
    return run


def test_no_gathering_before_the_first_rtt_sample() -> None:
    assert started(100 * K).gather_time() == 0.0


def test_a_quarter_of_the_srtt_at_most_max_gather() -> None:
    run = started(100 * K)
    run.estimator.sample(0.008)
    assert run.gather_time() == pytest.approx(0.002)
    run.estimator.sample(1.0)  # SRTT 132 ms
    assert run.gather_time() == pytest.approx(0.02)  # the default max_gather
    assert started(100 * K, max_gather=0.0).gather_time() == 0.0


def test_no_gathering_while_fewer_than_half_the_slots_are_busy() -> None:
    run = started(100 * K)
    run.estimator.sample(0.008)
    run.active = 4  # the run's tail: half the window of 8 still busy
    assert run.gather_time() == pytest.approx(0.002)
    run.active = 3
    assert run.gather_time() == 0.0


@pytest.mark.parametrize("value", [-0.001, 1.5, True])
def test_a_bad_max_gather_is_named(value: object) -> None:
    with pytest.raises(ValueError, match=f"max_gather={value!r} is not in"):
        WorkerSettings(max_gather=value).check()  # type: ignore[arg-type]


@pytest.mark.parametrize("max_gather", [0.0, 0.0005])
def test_workers_that_gather_get_the_same_sums(max_gather: float) -> None:
    n = 4
    hub = Hub(single_switch(5, n, K), n, loss=0.02, seed=4)
    settings = WorkerSettings(window=16, timeout=0.005, min_timeout=0.001,
                              max_timeout=0.05, max_gather=max_gather)
    naps: list[float] = []
    workers = [Worker(t, 5, n, settings, sleep=naps.append) for t in hub.transports]
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(20_000).astype(np.float32) for _ in range(n)]
    check(run_threads([lambda w=w, x=x: w.allreduce(x)
                       for w, x in zip(workers, xs, strict=True)]), xs)
    assert all(0 < nap <= max_gather for nap in naps)
    assert bool(naps) == (max_gather > 0)
