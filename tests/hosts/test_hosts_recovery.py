"""Loss recovery: the NACKs and names of ``hosts.protocol`` against the switch model,
packet by packet (chosen drops) and at scale (seeded loss, reordering, duplication on
shaped links), and the state machine's answers to hand-made NACKs and names."""

from __future__ import annotations

import numpy as np
import pytest
from switch_model import Impairments, Network, run_workers, star

from hosts.protocol import AllReduceRun, WorkerSettings, WorkerStats
from hosts.wire import FLAG_NACK, FLAG_RESULT, HEADER, HEADER_SIZE, naming

K = 64
FAST = WorkerSettings(window=16, timeout=1e-3, min_timeout=1e-4, max_timeout=8e-3)


def inputs(n: int, length: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(length).astype(np.float32) for _ in range(n)]


def check_sum(runs: list[AllReduceRun], xs: list[np.ndarray]) -> None:
    results = [r.result() for r in runs]
    for r in results[1:]:
        assert r.tobytes() == results[0].tobytes()
    exact = np.sum(np.array(xs, dtype=np.float64), axis=0)
    bound = np.repeat(runs[0].quantizer.error_bound(runs[0].agreed), K)[:exact.size]
    rounding = np.spacing(np.abs(exact + bound).astype(np.float32))
    assert np.all(np.abs(results[0] - exact) <= bound + rounding)


def total(runs: list[AllReduceRun]) -> WorkerStats:
    t = WorkerStats()
    for r in runs:
        t.add(r.stats)
    return t


def chunk_of(payload: bytes) -> int:
    return int.from_bytes(payload[8:12], "big")


def drop_once(link: tuple[str, int, int], chunk: int, flags: int) -> object:
    """A drop rule: the first packet of ``chunk`` with all of ``flags`` on ``link``."""
    done: list[bool] = []

    def rule(key: tuple[str, int, int], payload: bytes) -> bool:
        if (done or key != link or chunk_of(payload) != chunk
                or payload[5] & flags != flags):
            return False
        done.append(True)
        return True
    return rule


# ------------------------------------------------------------ chosen drops


def test_a_lost_contribution_is_nacked_and_resent_at_once() -> None:
    n = 3
    xs = inputs(n, 40 * K)
    runs = [AllReduceRun(x, 1, n, FAST) for x in xs]
    net = star(1, n, K)
    net.drop = drop_once(("up", 0, 2), 30, 0)  # worker 1's contribution to chunk 30
    run_workers(net, runs)
    check_sum(runs, xs)
    assert net.dropped == 1 and net.switches[0].nacks == 1
    stats = [r.stats for r in runs]
    assert (stats[1].nacks, stats[1].retransmitted) == (1, 1)
    assert sum(s.timeouts for s in stats) == 0  # no timer was needed
    assert stats[0].retransmitted == stats[2].retransmitted == 0


def test_a_lost_result_is_fetched_when_the_next_result_names_its_cell() -> None:
    n = 3
    xs = inputs(n, 40 * K, seed=1)
    runs = [AllReduceRun(x, 1, n, FAST) for x in xs]
    net = star(1, n, K)
    net.drop = drop_once(("down", 0, 3), 30, FLAG_RESULT)  # worker 2's copy of chunk 30
    run_workers(net, runs)
    check_sum(runs, xs)
    stats = [r.stats for r in runs]
    assert (stats[2].fetches, stats[2].retransmitted, stats[2].duplicate_results) == (1, 1, 0)
    assert sum(s.timeouts for s in stats) == 0
    assert stats[0].retransmitted == stats[1].retransmitted == 0


def test_a_lost_nack_is_left_to_the_timer() -> None:
    n = 3
    xs = inputs(n, 40 * K, seed=2)
    runs = [AllReduceRun(x, 1, n, FAST) for x in xs]
    net = star(1, n, K)
    lose_contribution = drop_once(("up", 0, 2), 30, 0)
    lose_nack = drop_once(("down", 0, 2), 31, FLAG_NACK)

    def rule(key: tuple[str, int, int], payload: bytes) -> bool:
        return bool(lose_contribution(key, payload) or lose_nack(key, payload))  # type: ignore[operator]
    net.drop = rule
    run_workers(net, runs)
    check_sum(runs, xs)
    assert net.dropped == 2 and runs[1].stats.nacks == 0
    assert runs[1].stats.timeouts >= 1


# ----------------------------------------------------------------- at scale


SHAPED = dict(latency=500e-6, rate=20e6)  # 20 Mbit/s links: 124 us per K = 64 packet
DEFAULT = WorkerSettings()


def shaped_run(n: int, impair: Impairments, seed: int, *, nack: bool = True,
               service: float = 0.0, length: int = 30_000, gather: float = 0.0
               ) -> tuple[list[AllReduceRun], Network, float]:
    xs = inputs(n, length, seed)
    runs = [AllReduceRun(x, 1, n, DEFAULT) for x in xs]
    net = star(1, n, K, impair, seed=seed, nack=nack, service=service, **SHAPED)
    seconds = run_workers(net, runs, gather=gather)
    check_sum(runs, xs)
    return runs, net, seconds


@pytest.mark.parametrize("service", [0.0, 70e-6], ids=["link-bound", "switch-bound"])
def test_no_retransmission_without_loss_on_saturated_links(service: float) -> None:
    runs, _, _ = shaped_run(8, Impairments(duplicate=0.02), seed=1, service=service)
    stats = total(runs)
    assert stats.retransmitted == 0 and stats.duplicate_results > 0


def test_eight_workers_at_five_percent_loss_resend_about_once_per_loss() -> None:
    """Every switch port loses 5% in both directions: a chunk of 8 workers crosses 16
    lossy links, so more than half the chunks lose a packet. With the NACKs and names,
    most losses cost one resend, no timer escalates the RTO, and the switch that only
    has timers for it needs more than twice the packets and ends with long RTOs."""
    runs, net, _ = shaped_run(8, Impairments(loss=0.05), seed=3)
    stats = total(runs)
    assert stats.retransmitted < 1.5 * net.dropped
    assert stats.timeouts < stats.nacks + stats.fetches
    assert all(r.stats.rto is not None and r.stats.rto < 0.05 for r in runs)
    timers, timers_net, _ = shaped_run(8, Impairments(loss=0.05), seed=3, nack=False)
    assert total(timers).retransmitted > 2 * stats.retransmitted
    assert total(timers).nacks == total(timers).fetches == 0


@pytest.mark.parametrize("seed", [2, 3])
def test_loss_reordering_and_duplication_on_every_link(seed: int) -> None:
    """Frames overtaken on the way up too: a late copy of a chunk a worker has gone
    past is dropped by the switch, not added to the slot's next round (which then
    never completed: every worker resent until it gave up)."""
    impair = Impairments(loss=0.05, reorder=0.02, duplicate=0.01)
    runs, net, _ = shaped_run(8, impair, seed=seed)
    stats = total(runs)
    assert net.duplicated > 0 and stats.retransmitted < 2 * net.dropped


@pytest.mark.parametrize("gather", [0.5e-3, 2e-3])
def test_workers_that_take_batches_recover_as_those_that_take_packets(gather: float
                                                                      ) -> None:
    """Each worker handles what arrived within ``gather`` as one batch (4 to 16
    packets of 124 us, with losses, overtaken and duplicated frames among them): the
    same sums, a duplicate later in a batch is one, and losses are still repaired by
    the NACKs and names, about once each."""
    impair = Impairments(loss=0.05, reorder=0.02, duplicate=0.01)
    runs, net, _ = shaped_run(8, impair, seed=2, gather=gather, length=20_000)
    stats = total(runs)
    assert stats.duplicate_results > 0 and stats.retransmitted < 2 * net.dropped
    assert stats.timeouts < stats.nacks + stats.fetches
    assert all(r.stats.rto is not None and r.stats.rto < 0.05 for r in runs)
    clean, _, _ = shaped_run(8, Impairments(duplicate=0.02), seed=1, gather=gather,
                             length=20_000)
    assert total(clean).retransmitted == 0 and total(clean).duplicate_results > 0


def test_reordering_costs_few_retransmissions() -> None:
    """Results delayed by up to one packet time swap with their neighbours now and
    then; the fetches wait a quarter of an SRTT for a result that was only overtaken."""
    runs, _, _ = shaped_run(4, Impairments(jitter=150e-6), seed=4)
    stats = total(runs)
    assert stats.retransmitted <= 0.01 * stats.sent


# ----------------------------------------------------------- the state machine


def answer(packet: bytes, flags: int = FLAG_RESULT, named: tuple[int, int] | None = None
           ) -> bytes:
    """The switch's reply to ``packet`` with these flags and this name."""
    name_flags, slot = naming(*named) if named else (0, 0)
    head = bytes([packet[5] & 0xF0 | flags | name_flags, packet[6], slot])
    return packet[:5] + head + packet[8:]


def nack_alone(packet: bytes, named: tuple[int, int]) -> bytes:
    return answer(packet, FLAG_NACK, named)[:HEADER_SIZE]


def first_window() -> tuple[AllReduceRun, list[bytes]]:
    run = AllReduceRun(np.ones(20 * K, np.float32), 1, 2, WorkerSettings(window=4))
    return run, run.start(0.0)


def test_a_nack_resends_the_named_chunk_once() -> None:
    run, sent = first_window()
    # chunk 1 named chunk 0's cell (slot 0, version 0): the switch misses chunk 0
    assert HEADER.unpack_from(sent[1])[3:6:2] == (0x04, 0)
    [again] = run.on_packets([nack_alone(sent[1], (0, 0))], 0.001)
    assert chunk_of(again) == 0 and again[HEADER_SIZE:] == sent[0][HEADER_SIZE:]
    assert again[5:8:2] == bytes([0x04, 3])  # the resend names chunk 3's cell
    assert run.on_packets([nack_alone(sent[1], (0, 0))], 0.002) == []  # a duplicate
    # the resend's NACK: chunk 3 is missing too
    [third] = run.on_packets([nack_alone(again, (3, 0))], 0.003)
    assert chunk_of(third) == 3
    assert (run.stats.nacks, run.stats.retransmitted, run.stats.timeouts) == (2, 2, 0)


def test_a_nack_on_a_result_resends_and_takes_the_result() -> None:
    run, sent = first_window()
    out = run.on_packets([answer(sent[1], FLAG_RESULT | FLAG_NACK, (0, 0))], 0.001)
    assert [chunk_of(p) for p in out] == [0, 5]  # chunk 0 again, then chunk 1 + S
    assert run.stats.results == 1 and run.stats.nacks == 1


def test_a_nack_whose_chunk_was_answered_is_stale() -> None:
    run, sent = first_window()
    run.on_packets([answer(sent[1])], 0.001)
    assert run.on_packets([nack_alone(sent[1], (0, 0))], 0.002) == []
    assert run.stats.nacks == 0


def test_a_result_naming_an_awaited_chunk_fetches_it() -> None:
    run, sent = first_window()
    # before any RTT sample, at once
    out = run.on_packets([answer(sent[1], named=(0, 0))], 0.001)
    assert [chunk_of(p) for p in out] == [0, 5] and run.stats.fetches == 1
    # a RESULT in the same batch as the one naming it is not fetched
    out = run.on_packets([answer(sent[3], named=(2, 0)), answer(sent[2])], 0.002)
    assert [chunk_of(p) for p in out] == [7, 6] and run.stats.fetches == 1


def test_a_fetch_waits_a_quarter_srtt_for_a_result_that_was_only_overtaken() -> None:
    run, sent = first_window()
    run.estimator.sample(0.004)  # SRTT 4 ms
    run.on_packets([answer(sent[1], named=(0, 0))], 0.010)
    assert run.stats.fetches == 0 and run.next_deadline() == pytest.approx(0.011)
    assert run.on_timer(0.0105) == []
    [fetch] = run.on_timer(0.011)
    assert chunk_of(fetch) == 0 and run.stats.fetches == 1 and run.stats.timeouts == 0
    # had it come in time, nothing would have been sent
    run2, sent2 = first_window()
    run2.estimator.sample(0.004)
    run2.on_packets([answer(sent2[1], named=(0, 0))], 0.010)
    [nxt] = run2.on_packets([answer(sent2[0])], 0.0105)
    assert chunk_of(nxt) == 4 and run2.on_timer(0.011) == [] and run2.stats.fetches == 0


def test_a_switch_that_stalls_costs_one_resend_per_worker_not_a_window() -> None:
    """The switch stops for 100 ms (a process without a CPU): every chunk in flight is
    late, none is lost. The oldest one's timer says the RTO is too short; the others
    wait for the answer to its resend instead of expiring in a burst."""
    n = 4
    xs = inputs(n, 40_000, seed=5)
    runs = [AllReduceRun(x, 1, n, DEFAULT) for x in xs]
    net = star(1, n, K, seed=5, service=1e-9, **SHAPED)

    def stall(t: float) -> None:
        net.switch_free[0] = t + 0.1
    net.at(0.05, stall)
    run_workers(net, runs)
    check_sum(runs, xs)
    for r in runs:
        assert r.stats.rtt_samples > 0 and 1 <= r.stats.timeouts <= 3
        assert r.stats.retransmitted == r.stats.timeouts
