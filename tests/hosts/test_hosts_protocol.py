"""The worker protocol, N workers in one process against the switch model, in
virtual time: sizes, loss, duplication, reordering, trees, jobs side by side."""

from __future__ import annotations

import math

import numpy as np
import pytest
from switch_model import (
    ChildRow,
    Impairments,
    Network,
    SwitchModel,
    run_workers,
    star,
    two_level,
)

from hosts.protocol import (
    AllReduceRun,
    AllReduceTimeout,
    NonFiniteInputError,
    WorkerSettings,
    WorkerStats,
)
from hosts.quantize import Scaling
from hosts.wire import FLAG_NACK, FLAG_NAMED, FLAG_RESULT

K = 64
FAST = WorkerSettings(window=16, timeout=1e-3, min_timeout=1e-4, max_timeout=8e-3)
LOSSY = Impairments(loss=0.05, duplicate=0.02, jitter=30e-6)


def inputs(n: int, length: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = np.exp(rng.uniform(-20, 20, size=(n, 1)))
    return [(rng.standard_normal(length) * s).astype(np.float32) for s in scale]


def check_results(runs: list[AllReduceRun], xs: list[np.ndarray]) -> np.ndarray:
    """Bit-identical on every worker, and within the quantizer's bound of the exact
    sum (plus the float32 rounding of the result)."""
    results = [r.result() for r in runs]
    for r in results[1:]:
        assert r.tobytes() == results[0].tobytes()
    got = results[0].astype(np.float64)
    exact = np.array([math.fsum(c) for c in np.array(xs, dtype=np.float64).T])
    run = runs[0]
    bound = np.repeat(run.quantizer.error_bound(run.agreed), run.settings.k)[:got.size]
    allowed = bound + np.spacing(np.abs(exact + bound).astype(np.float32)) + 1e-300
    assert np.all(np.abs(got - exact) <= allowed)
    agreed = np.max([r.proposals for r in runs], axis=0)
    assert np.array_equal(run.agreed, agreed)  # the switch max-combined the proposals
    return results[0]


def total(runs: list[AllReduceRun]) -> WorkerStats:
    t = WorkerStats()
    for r in runs:
        t.add(r.stats)
    return t


@pytest.mark.parametrize("n", [2, 3, 4, 8])
@pytest.mark.parametrize("length", [1, K - 1, K, K + 1])
@pytest.mark.parametrize("impair", [Impairments(), Impairments(loss=0.01),
                                    LOSSY], ids=["clean", "loss1", "loss5dup"])
def test_small_tensors(n: int, length: int, impair: Impairments) -> None:
    xs = inputs(n, length, seed=n * 1000 + length)
    runs = [AllReduceRun(x, 3, n, FAST) for x in xs]
    run_workers(star(3, n, K, impair, seed=length), runs)
    check_results(runs, xs)
    stats = total(runs)
    chunks = -(-length // K)
    assert stats.results == n * (chunks + FAST.window)
    if impair.loss == 0:
        assert stats.retransmitted == stats.timeouts == 0


@pytest.mark.parametrize(("n", "impair"), [
    (2, Impairments()), (3, Impairments(loss=0.01)), (4, Impairments(loss=0.01, duplicate=0.01)),
    (8, LOSSY)])
def test_large_tensor(n: int, impair: Impairments) -> None:
    xs = inputs(n, 10**5, seed=n)
    runs = [AllReduceRun(x, 9, n, WorkerSettings(timeout=1e-3, min_timeout=1e-4, max_timeout=8e-3))
            for x in xs]
    net = star(9, n, K, impair, seed=n)
    run_workers(net, runs)
    check_results(runs, xs)
    stats = total(runs)
    assert stats.retransmitted == stats.timeouts + stats.nacks + stats.fetches
    if impair.loss:
        assert net.dropped > 0 and stats.nacks > 0 and stats.fetches > 0
        # a loss costs about one resend; heavy reordering (jitter three times the
        # latency) makes some timers fire early
        assert stats.retransmitted < (3 if impair.jitter else 1.5) * net.dropped
    else:
        assert stats.retransmitted == 0
    if impair.duplicate:
        assert net.duplicated > 0 and stats.duplicate_results > 0


def test_counters_add_up_under_loss() -> None:
    xs = inputs(4, 5000, seed=1)
    runs = [AllReduceRun(x, 1, 4, FAST) for x in xs]
    run_workers(star(1, 4, K, LOSSY, seed=5), runs)
    for r in runs:
        s = r.stats
        assert s.results == s.wire_chunks == -(-5000 // K) + FAST.window
        assert s.sent == s.wire_chunks + s.retransmitted
        assert s.retransmitted == s.timeouts + s.nacks + s.fetches > 0


@pytest.mark.parametrize("scaling", list(Scaling))
def test_fitting_integers_are_exact_with_pow2(scaling: Scaling) -> None:
    rng = np.random.default_rng(0)
    xs = [rng.integers(-1000, 1000, size=3000).astype(np.float32) for _ in range(4)]
    settings = WorkerSettings(window=8, scaling=scaling, timeout=1e-3, min_timeout=1e-4)
    runs = [AllReduceRun(x, 1, 4, settings) for x in xs]
    run_workers(star(1, 4, K, Impairments(loss=0.02), seed=2), runs)
    got = check_results(runs, xs)
    exact = np.sum(np.array(xs, dtype=np.int64), axis=0)
    if scaling is Scaling.POW2:
        assert np.array_equal(got, exact.astype(np.float32))
    else:  # within the bound, but sums near zero are not exact integers
        assert not np.array_equal(got, exact.astype(np.float32))


def test_consecutive_allreduces_continue_the_slot_versions() -> None:
    """A job runs several all-reduces: stale RESULTs of the previous one are still
    in flight when the next starts, and every slot keeps alternating versions."""
    n = 3
    net = star(4, n, K, LOSSY, seed=3)
    base = 0
    for i, length in enumerate([10, 1000, 1, 4000, 64]):
        xs = inputs(n, length, seed=i)
        runs = [AllReduceRun(x, 4, n, FAST, base=base) for x in xs]
        run_workers(net, runs)
        check_results(runs, xs)
        base = runs[0].end


def test_two_level_tree_with_loss() -> None:
    xs = inputs(5, 3000, seed=7)
    runs = [AllReduceRun(x, 2, 5, FAST) for x in xs]
    net = two_level(2, [2, 3], K, LOSSY, seed=7)
    run_workers(net, runs)
    check_results(runs, xs)
    assert total(runs).retransmitted > 0


def test_jobs_side_by_side_are_isolated() -> None:
    sw = SwitchModel(K)
    for job, ports, base in ((1, (1, 2), 0), (2, (3, 4, 5), 16)):
        for i, p in enumerate(ports):
            sw.add_row(job, p, ChildRow(i, len(ports), True, 0, ports, base))
    links = {(0, p): (("w", p - 1), 0) for p in range(1, 6)}
    net = Network([sw], links, Impairments(loss=0.02), seed=1)
    xs = inputs(5, 2000, seed=11)
    runs = [AllReduceRun(xs[i], 1 if i < 2 else 2, 2 if i < 2 else 3, FAST)
            for i in range(5)]
    run_workers(net, runs)
    check_results(runs[:2], xs[:2])
    check_results(runs[2:], xs[2:])


def test_nonfinite_input_fails_on_every_worker_and_the_job_goes_on() -> None:
    n = 3
    net = star(6, n, K, seed=1)
    xs = inputs(n, 1000, seed=2)
    xs[1][130] = np.nan
    xs[2][900] = -np.inf
    runs = [AllReduceRun(x, 6, n, FAST) for x in xs]
    run_workers(net, runs)
    for i, r in enumerate(runs):
        with pytest.raises(NonFiniteInputError, match=r"chunks \[2, 14\]") as e:
            r.result()
        assert "none on this worker" in str(e.value) if i == 0 else "index" in str(e.value)
        assert np.isnan(e.value.result[128:192]).all()
        assert np.isnan(e.value.result[896:960]).all()
        assert np.isfinite(e.value.result[:128]).all()
    xs = inputs(n, 500, seed=3)
    again = [AllReduceRun(x, 6, n, FAST, base=runs[0].end) for x in xs]
    run_workers(net, again)
    check_results(again, xs)


def test_a_dead_switch_times_out_with_bounded_backoff() -> None:
    settings = WorkerSettings(window=4, timeout=0.01, max_timeout=0.08, max_retries=6)
    runs = [AllReduceRun(np.ones(10, np.float32), 1, 2, settings) for _ in range(2)]
    net = star(1, 2, K, Impairments(loss=1.0))
    with pytest.raises(AllReduceTimeout, match=r"no RESULT for chunk 0 \(slot 0, version "
                                               r"0\) after 6 retransmissions"):
        run_workers(net, runs)
    # 0.01 then 0.02, 0.04, 0.08 (capped), 0.08, 0.08, 0.08: fails at 0.39 s
    assert net.now == pytest.approx(0.39)
    stats = runs[0].stats
    # the oldest chunk probes for the window: the other slots wait for its answer
    assert stats.retransmitted == 6 and stats.sent == 4 + 6
    assert stats.timeouts == 6 + 1 and stats.results == 0


def test_results_of_other_jobs_and_garbage_are_ignored() -> None:
    run = AllReduceRun(np.ones(10, np.float32), 1, 2, FAST)
    out = run.start(0.0)
    assert len(out) == FAST.window
    result = bytearray(out[0])
    result[5] = 1
    other = bytes(result[:1]) + b"\x02" + bytes(result[2:])
    assert run.on_packet(other, 0.0) == []  # job 2
    assert run.on_packet(bytes(result[:20]), 0.0) == []  # truncated
    assert run.on_packet(out[0], 0.0) == []  # not a RESULT
    assert run.stats.ignored == 3 and run.stats.results == 0
    assert len(run.on_packet(bytes(result), 0.0)) == 1  # the awaited one: next chunk
    assert run.on_packet(bytes(result), 0.0) == []
    assert run.stats.duplicate_results == 1


def as_result(packet: bytes) -> bytes:
    return packet[:5] + bytes([packet[5] | FLAG_RESULT]) + packet[6:]


def test_a_batch_is_handled_as_its_datagrams_one_by_one() -> None:
    """Two windows of RESULTs (the exponent round, then sums) handed over as one
    batch each, with a duplicate, a NACK of a slot answered earlier in the batch, a
    foreign job's packet and a truncated one among them: the same packets go out, and
    the same sums, counters and RTT estimate result, as one datagram at a time."""
    x = np.random.default_rng(5).standard_normal(20 * K).astype(np.float32)
    settings = WorkerSettings(window=8)
    one, batched = AllReduceRun(x, 1, 2, settings), AllReduceRun(x, 1, 2, settings)
    sent = one.start(0.0)
    assert batched.start(0.0) == sent
    for now in (0.010, 0.020):
        replies = [as_result(p) for p in sent]
        foreign = replies[0][:1] + b"\x07" + replies[0][2:]
        nack = sent[2][:5] + bytes([FLAG_NACK | FLAG_NAMED]) + sent[2][6:8] + sent[2][8:12]
        replies[3:3] = [replies[1], nack, foreign, replies[4][:40]]
        out: list[bytes] = []
        for reply in replies:
            out += one.on_packets([reply], now)
        assert batched.on_packets(replies, now) == out
        sent = out
    assert np.array_equal(one.sums, batched.sums) and one.stats == batched.stats
    assert one.stats.rtt_samples == 8 and one.stats.duplicate_results == 2
    assert one.stats.ignored == 4 and one.estimator.srtt == batched.estimator.srtt


def test_empty_tensor_needs_no_packets() -> None:
    run = AllReduceRun(np.zeros((0, 3), np.float32), 1, 2, FAST)
    assert run.start(0.0) == [] and run.done
    assert run.result().shape == (0, 3)


def test_shape_is_kept() -> None:
    xs = [np.arange(24, dtype=np.float32).reshape(2, 3, 4) * (i + 1) for i in range(2)]
    runs = [AllReduceRun(x, 1, 2, FAST) for x in xs]
    run_workers(star(1, 2, K), runs)
    assert np.array_equal(runs[0].result(), xs[0] * 3)


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(k=12), "k=12 is not one of"),
    (dict(window=0), "window=0"),
    (dict(timeout=-1.0), "timeout=-1.0 must be a positive"),
    (dict(timeout=2.0, max_timeout=1.0), "max_timeout=1.0 is below"),
    (dict(backoff=0.5), "backoff=0.5"),
    (dict(max_retries=-1), "max_retries=-1"),
])
def test_bad_settings_are_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AllReduceRun(np.ones(3, np.float32), 1, 2, WorkerSettings(**kwargs))  # type: ignore[arg-type]


def test_bad_arguments_are_named() -> None:
    with pytest.raises(TypeError, match="expected a float32 array, got float64"):
        AllReduceRun(np.ones(3), 1, 2)
    with pytest.raises(TypeError, match="expected a numpy array, got list"):
        AllReduceRun([1.0], 1, 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="job_id=70000"):
        AllReduceRun(np.ones(3, np.float32), 70000, 2)
    with pytest.raises(ValueError, match="num_workers=0"):
        AllReduceRun(np.ones(3, np.float32), 1, 0)
