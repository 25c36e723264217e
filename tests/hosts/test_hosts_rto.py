"""The adaptive retransmission timeout: the estimator alone, Karn's rule in a driven
run, and workers on slow or distant links in virtual time against the switch model."""

from __future__ import annotations

import numpy as np
import pytest
from switch_model import Impairments, Network, run_workers, star

from hosts.agent_cli import main as agent_main
from hosts.protocol import PATIENCE, AllReduceRun, WorkerSettings
from hosts.rto import RtoEstimator
from hosts.wire import FLAG_RESULT

K = 64


def inputs(n: int, length: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(length).astype(np.float32) for _ in range(n)]


def check_sum(runs: list[AllReduceRun], xs: list[np.ndarray]) -> None:
    results = [r.result() for r in runs]
    for r in results[1:]:
        assert r.tobytes() == results[0].tobytes()
    exact = np.sum(np.array(xs, dtype=np.float64), axis=0)
    assert np.allclose(results[0], exact, rtol=1e-5, atol=1e-5)


def retransmitted(runs: list[AllReduceRun]) -> int:
    return sum(r.stats.retransmitted for r in runs)


# ----------------------------------------------------------------- estimator


def test_estimator_follows_rfc6298() -> None:
    e = RtoEstimator(timeout=0.1, min_timeout=0.001, max_timeout=1.0)
    assert e.rto == 0.1 and e.srtt is None  # the configured timeout until a sample
    e.sample(0.04)
    assert e.srtt == 0.04 and e.rttvar == 0.02
    assert e.rto == pytest.approx(0.04 + 4 * 0.02)
    e.sample(0.06)
    assert e.rttvar == pytest.approx(0.75 * 0.02 + 0.25 * 0.02)
    assert e.srtt == pytest.approx(0.875 * 0.04 + 0.125 * 0.06)
    assert e.rto == pytest.approx(e.srtt + 4 * e.rttvar) and e.samples == 2


def test_rto_is_clamped_to_min_and_max() -> None:
    e = RtoEstimator(timeout=0.1, min_timeout=0.01, max_timeout=0.3)
    for _ in range(100):
        e.sample(1e-5)  # an idle LAN: far below the floor
    assert e.rto == pytest.approx(0.01 + 1e-5)  # SRTT + the least margin, min_timeout
    for _ in range(100):
        e.sample(2.0)
    assert e.rto == 0.3
    # a constant RTT: RTTVAR decays, but the margin above SRTT stays min_timeout
    for _ in range(300):
        e.sample(0.2)
    assert e.rttvar < 1e-6 and e.rto == pytest.approx(0.21)


def test_backoff_holds_until_a_fresh_sample() -> None:
    e = RtoEstimator(timeout=0.1, min_timeout=0.01, max_timeout=1.0)
    e.sample(0.02)
    assert e.rto == pytest.approx(0.06)
    e.back_off(0.12)
    e.back_off(0.12)  # a burst of slots expiring together: one step, not two
    assert e.rto == 0.12
    e.back_off(0.05)  # never lowers it
    assert e.rto == 0.12
    e.sample(0.02)
    assert e.rto == pytest.approx(0.02 + 4 * 0.75 * 0.01)


def test_fixed_timeout_measures_but_does_not_adapt() -> None:
    e = WorkerSettings(timeout=0.1, adaptive=False).estimator()
    assert (e.rto, e.min_timeout, e.max_timeout, e.adaptive) == (0.1, 0.01, 1.0, False)
    e.sample(0.5)
    e.back_off(0.4)
    assert e.srtt == 0.5 and e.rto == 0.1


# --------------------------------------------------------- a driven run


def answer(packet: bytes) -> bytes:
    """The switch's RESULT for a one-worker job: the packet with the RESULT flag."""
    return packet[:5] + bytes([packet[5] | FLAG_RESULT]) + packet[6:]


def unnamed(packet: bytes) -> bytes:
    """A packet without the name of the previous transmission (flags 0x0C, byte 7)."""
    return packet[:5] + bytes([packet[5] & ~0x0C, packet[6], 0]) + packet[8:]


def test_karn_no_samples_from_retransmitted_chunks_nor_the_first_window() -> None:
    settings = WorkerSettings(window=1, timeout=0.1, min_timeout=0.001)
    run = AllReduceRun(np.ones(3 * K, np.float32), 1, 1, settings)
    [p0] = run.start(0.0)
    [p1] = run.on_packet(answer(p0), 0.01)  # the start burst: no sample
    assert run.stats.rtt_samples == 0 and run.stats.srtt is None
    assert run.next_deadline() == pytest.approx(0.11)
    [again] = run.on_timer(0.11)  # p1 resent: its RTT is ambiguous
    assert unnamed(again) == unnamed(p1)
    assert (p1[5], p1[7], again[5], again[7]) == (0x04, 0, 0x0C, 0)  # p0's cell, then p1's
    assert run.stats.rto == pytest.approx(0.2)  # backed off
    [p2] = run.on_packet(answer(p1), 0.115)
    assert run.stats.rtt_samples == 0 and run.stats.srtt is None
    assert run.next_deadline() == pytest.approx(0.115 + 0.2)  # the backoff holds
    [p3] = run.on_packet(answer(p2), 0.145)  # sent once: a sample of 30 ms
    assert run.stats.rtt_samples == 1
    assert run.stats.srtt == pytest.approx(0.03)
    assert run.stats.rto == pytest.approx(0.03 + 4 * 0.015)
    # the next chunk waits its RTO and, while the window is busy, PATIENCE smoothed RTTs
    assert run.next_deadline() == pytest.approx(0.145 + 0.09 + PATIENCE * 0.03)
    assert run.on_packet(answer(p3), 0.16) == [] and run.done
    assert run.stats.rtt_samples == 2 and run.stats.retransmitted == 1


# ------------------------------------------------- workers in virtual time


def far_star(n: int, impair: Impairments | None = None, seed: int = 0) -> Network:
    """A star whose one-way delay (50 ms) is above the 20 ms first timeout."""
    return star(1, n, K, impair, seed=seed, latency=0.05)


FAR = dict(window=16, timeout=0.02, min_timeout=0.005, max_timeout=1.0)


def test_delay_above_the_first_timeout_converges() -> None:
    n, length = 3, 20000  # 313 chunks, 329 wire chunks
    xs = inputs(n, length)
    fixed = [AllReduceRun(x, 1, n, WorkerSettings(**FAR, adaptive=False)) for x in xs]
    run_workers(far_star(n), fixed)
    check_sum(fixed, xs)
    wire = fixed[0].stats.wire_chunks
    assert retransmitted(fixed) >= n * wire  # every chunk resent (twice: 20 + 40 ms)
    runs = [AllReduceRun(x, 1, n, WorkerSettings(**FAR)) for x in xs]
    run_workers(far_star(n), runs)
    check_sum(runs, xs)
    # the first windows pay for the short first timeout, then none is resent
    assert retransmitted(runs) <= n * 4 * 16 < retransmitted(fixed) / 10
    for r in runs:
        assert r.stats.srtt == pytest.approx(0.1, rel=1e-3)  # 2 x 50 ms
        assert r.stats.rto == pytest.approx(r.stats.srtt + 0.005, rel=1e-3)


def test_a_worker_keeps_its_estimate_for_the_next_allreduce() -> None:
    n = 2
    net = far_star(n)
    estimators = [WorkerSettings(**FAR).estimator() for _ in range(n)]
    base = 0
    counts = []
    for seed in range(2):
        xs = inputs(n, 3000, seed)
        runs = [AllReduceRun(x, 1, n, WorkerSettings(**FAR), base=base, rto=e)
                for x, e in zip(xs, estimators, strict=True)]
        run_workers(net, runs)
        check_sum(runs, xs)
        counts.append(retransmitted(runs))
        base = runs[0].end
    assert counts[0] > 0 and counts[1] == 0


def test_slow_link_full_window_queue() -> None:
    """1 Mbit/s links and a window of 64: about 160 ms of packets queued per link,
    above the 100 ms default first timeout (the Mininet case)."""
    n, length = 4, 30000
    xs = inputs(n, length)
    fixed = [AllReduceRun(x, 1, n, WorkerSettings(adaptive=False)) for x in xs]
    t_fixed = run_workers(star(1, n, K, rate=1e6), fixed)
    adaptive = [AllReduceRun(x, 1, n, WorkerSettings()) for x in xs]
    t_adaptive = run_workers(star(1, n, K, rate=1e6), adaptive)
    check_sum(adaptive, xs)
    wire = adaptive[0].stats.wire_chunks
    assert retransmitted(fixed) > n * wire
    assert retransmitted(adaptive) <= n * 2 * 64  # the start only
    assert t_adaptive < t_fixed / 2
    for r in adaptive:
        assert r.stats.srtt == pytest.approx(0.16, rel=0.05)


@pytest.mark.parametrize("rate", [0.0, 1e6])
def test_backoff_recovers_at_5_percent_loss(rate: float) -> None:
    n = 4
    xs = inputs(n, 20000, seed=3)
    settings = WorkerSettings(window=32, timeout=0.02, min_timeout=0.005)
    runs = [AllReduceRun(x, 1, n, settings) for x in xs]
    net = star(1, n, K, Impairments(loss=0.05, duplicate=0.01), seed=4, latency=0.01,
               rate=rate)
    run_workers(net, runs)
    check_sum(runs, xs)
    assert net.dropped > 0 and retransmitted(runs) > 0
    for r in runs:
        s = r.stats
        assert s.sent == s.wire_chunks + s.retransmitted
        assert s.rtt_samples > 0 and s.srtt is not None and s.srtt >= 0.02
        assert s.rto is not None and settings.min_timeout <= s.rto <= settings.max_timeout


# ------------------------------------------------------------------ settings


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(min_timeout=0.0), "min_timeout=0.0 must be a positive"),
    (dict(timeout=0.005), "min_timeout=0.01 is above timeout=0.005"),
    (dict(adaptive=1), "adaptive=1 is not a bool"),
])
def test_bad_rto_settings_are_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        WorkerSettings(**kwargs).check()  # type: ignore[arg-type]


@pytest.mark.parametrize(("argv", "message"), [
    (["--timeout", "5", "--min-timeout", "8"],
     "--min-timeout 8 <= --timeout 5 <= --max-timeout 1000 does not hold"),
    (["--timeout", "50", "--max-timeout", "20"],
     "--min-timeout 10 <= --timeout 50 <= --max-timeout 20 does not hold"),
    (["--min-timeout", "-1"], "--min-timeout -1: must be a positive number of ms"),
])
def test_agent_timeout_options_are_checked(argv: list[str], message: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = agent_main(["--job", "1", "--workers", "2", "--aggregator", "127.0.0.1",
                       "--size", "10", *argv])
    assert code == 2
    assert capsys.readouterr().err == f"ina agent: error: {message}\n"
