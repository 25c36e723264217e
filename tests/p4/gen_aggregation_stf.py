"""Write the STF tests of ``p4/aggregation.p4`` into ``tests/p4/aggregation/``.

    python tests/p4/gen_aggregation_stf.py

Each scenario states its packets and the packets the switch must emit; the expected
sums are written out or computed with plain integer arithmetic (``wrap32``), never by a
model of the switch. The first line of each file names the ``-D`` options it needs.
``test_aggregation_stf.py`` checks that the files are what this script writes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from agg_frames import (
    AGGREGATOR_IP,
    FLAG_NACK,
    FLAG_NAMED,
    FLAG_NAMED_VERSION,
    FLAG_RESULT,
    INA_UDP_PORT,
    SWITCH_MAC,
    Agg,
    Host,
    Stf,
    agg_frame,
    contribution,
    ethernet,
    flow_hash,
    ipv4,
    result_for,
    tcp,
    udp,
    worker,
    wrap32,
)

STF_DIR = Path(__file__).resolve().parent / "aggregation"
K8 = "-D INA_K=8"
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def cell(region_base: int, slot: int, version: int) -> int:
    """The register index of (slot, version) in a region, as the contract fixes it."""
    return (region_base + slot) * 2 + version


def sums(*vectors: list[int]) -> list[int]:
    return [wrap32(sum(lane)) for lane in zip(*vectors, strict=True)]


def exponent_cell(exponent: int) -> int:
    """What ``ina_exponent`` holds for an exponent: exponent + 128 (unsigned)."""
    return exponent + 128


def root_job(stf: Stf, job: int, workers: list[Host], *, region_base: int = 0,
             mcast_grp: int = 1, node: int = 0, epoch: int = 1) -> None:
    """Workers as children 0, 1, ... of job ``job`` on a root switch, one multicast
    group on their ports and the RESULT rewrite towards each of them."""
    for index, w in enumerate(workers):
        stf.add_child(job, w.port, child_index=index, fan_in=len(workers),
                      mcast_grp=mcast_grp, region_base=region_base, epoch=epoch)
    stf.multicast_group(mcast_grp, [w.port for w in workers], node)


def rewrites(stf: Stf, workers: list[Host]) -> None:
    for w in workers:
        stf.add_rewrite(w)


def expect_results(stf: Stf, workers: list[Host], agg: Agg) -> None:
    for w in workers:
        stf.expect(w.port, result_for(w, agg))


# ----------------------------------------------------------------------------- scenarios


def two_workers() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "Two workers complete slot 3, version 0 of job 7: the values are summed\n"
                "with int32 wrap-around, the exponent is the larger one (signed), and the\n"
                "RESULT goes to both workers, rewritten to each.")
    w1, w2 = worker(1), worker(2)
    root_job(stf, 7, [w1, w2])
    rewrites(stf, [w1, w2])
    a = [1, -1, INT_MAX, INT_MIN, 100, -100, 0x12345678, 0]
    b = [2, -1, 1, -1, -300, 50, 5, 0]
    total = sums(a, b)
    assert total[2] == INT_MIN and total[3] == INT_MAX
    stf.blank()
    stf.comment("Worker 1 first: absorbed, nothing comes out.")
    stf.packet(1, contribution(w1, Agg(7, 3, 0, chunk=3, values=a, exponent=-1)))
    stf.wait()
    stf.register_read("ina_bitmap", cell(0, 3, 0), 0b01)
    stf.register_read("ina_count", cell(0, 3, 0), 1)
    stf.register_read("ina_lane_0", cell(0, 3, 0), 1)
    stf.blank()
    stf.comment("Worker 2 completes the slot: RESULT to ports 1 and 2 (with UDP checksum 0\n"
                "although this contribution has one).")
    stf.packet(2, contribution(w2, Agg(7, 3, 0, chunk=3, values=b, exponent=1),
                               udp_checksum=0xABCD))
    expect_results(stf, [w1, w2], Agg(7, 3, 0, chunk=3, values=total, exponent=1,
                                      flags=FLAG_RESULT))
    stf.wait()
    stf.register_read("ina_bitmap", cell(0, 3, 0), 0b11)
    stf.register_read("ina_count", cell(0, 3, 0), 2)
    stf.register_read("ina_lane_0", cell(0, 3, 0), 3)
    stf.blank()
    stf.comment("The root accepts no RESULT (it has no parent), not even from a child.")
    stf.packet(1, contribution(w1, Agg(7, 4, 0, chunk=4, values=a, flags=FLAG_RESULT)))
    stf.wait()
    return stf


def three_workers() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "Three workers, two slots filled in interleaved orders; a slot completes\n"
                "only with the third contribution and then goes to all three workers.\n"
                "Reserved flag bits are carried through; a named slot without the NAMED\n"
                "flag names nothing (each RESULT names the cell completed before it).")
    ws = [worker(1), worker(2), worker(3)]
    root_job(stf, 1, ws)
    rewrites(stf, ws)
    vals = {
        (1, 0): [10, 20, 30, 40, 50, 60, 70, 80],
        (2, 0): [-1, -2, -3, -4, -5, -6, -7, -8],
        (3, 0): [1000, 0, INT_MAX, 0, 7, 7, 7, 7],
        (1, 1): [1, 1, 1, 1, 1, 1, 1, 1],
        (2, 1): [2, 2, 2, 2, 2, 2, 2, 2],
        (3, 1): [INT_MIN, 3, 3, 3, 3, 3, 3, 3],
    }
    order = [(1, 0), (3, 1), (2, 0), (1, 1), (2, 1), (3, 0)]
    done = {(2, 1): 1, (3, 0): 0}
    for n, s in order:
        stf.blank()
        sender = ws[n - 1]
        flags = 0x80 if s == 1 else 0
        stf.packet(n, contribution(sender, Agg(1, s, 0, chunk=s, values=vals[n, s],
                                               flags=flags, named_slot=0x5A)))
        if (n, s) in done:
            total = sums(vals[1, s], vals[2, s], vals[3, s])
            result = Agg(1, s, 0, chunk=s, values=total, flags=flags | FLAG_RESULT)
            expect_results(stf, ws, result if s == 1 else result.naming(1, 0))
        stf.wait()
    stf.register_read("ina_count", cell(0, 0, 0), 3)
    stf.register_read("ina_bitmap", cell(0, 1, 0), 0b111)
    return stf


def first_writer() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "Slot 2 used three times (versions 0, 1, 0): the first contribution of a\n"
                "round replaces the stale values and exponent of the cell, and a child\n"
                "that sends one version clears its bit in the other.")
    w1, w2 = worker(1), worker(2)
    root_job(stf, 3, [w1, w2])
    rewrites(stf, [w1, w2])
    c0, c1 = cell(0, 2, 0), cell(0, 2, 1)
    stf.blank()
    stf.comment("Leftovers in the version-1 cell (e.g. from an earlier job).")
    stf.raw(f"register_write ina_lane_0 {c1} 12345")
    stf.raw(f"register_write ina_exponent {c1} {exponent_cell(100)}")
    rounds = [
        (0, 2, [1, 2, 3, 4, 5, 6, 7, 8], [10, 20, 30, 40, 50, 60, 70, 80], (5, 5)),
        (1, 6, [9, -1, -1, -1, -1, -1, -1, -1], [3, 3, 3, 3, 3, 3, 3, 3], (2, -9)),
        (0, 10, [7, 0, 0, 0, 0, 0, 0, 9], [0, 7, 0, 0, 0, 0, 9, 0], (-3, -4)),
    ]
    previous: tuple[int, int] | None = None  # the cell completed last: RESULTs name it
    for version, chunk, a, b, (ea, eb) in rounds:
        this, other = (c0, c1) if version == 0 else (c1, c0)
        stf.blank()
        stf.comment(f"Chunk {chunk}: version {version}.")
        stf.packet(1, contribution(w1, Agg(3, 2, version, chunk, a, exponent=ea)))
        stf.wait()
        stf.register_read("ina_lane_0", this, a[0])
        stf.register_read("ina_bitmap", this, 0b01)
        stf.register_read("ina_bitmap", other, 0b10 if chunk > 2 else 0)
        stf.packet(2, contribution(w2, Agg(3, 2, version, chunk, b, exponent=eb)))
        result = Agg(3, 2, version, chunk, sums(a, b), exponent=max(ea, eb),
                     flags=FLAG_RESULT)
        expect_results(stf, [w1, w2], result.naming(*previous) if previous else result)
        previous = (2, version)
        stf.wait()
        stf.register_read("ina_bitmap", this, 0b11)
        stf.register_read("ina_bitmap", other, 0)
    return stf


def earlier_epoch() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "Cells left by a job of another epoch count as empty: job 4 (epoch 2) uses\n"
                "the region job 3 (epoch 1) left half full, with no register written in\n"
                "between. A cell never written (epoch 0) is empty too.")
    w1, w2 = worker(1), worker(2)
    root_job(stf, 3, [w1, w2], epoch=1)
    root_job(stf, 4, [w1, w2], mcast_grp=2, node=1, epoch=2)
    rewrites(stf, [w1, w2])
    a, b = [1, 2, 3, 4, 5, 6, 7, 8], [10, 10, 10, 10, 10, 10, 10, 10]
    c0, c1 = cell(0, 1, 0), cell(0, 1, 1)
    stf.blank()
    stf.comment("Job 3: w1 contributes to both versions of slot 1; w2 never comes.")
    stf.packet(1, contribution(w1, Agg(3, 1, 0, 1, [100] * 8, exponent=50)))
    stf.packet(1, contribution(w1, Agg(3, 1, 1, 9, [200] * 8, exponent=60)))
    stf.wait()
    stf.register_read("ina_epoch", c0, 1)
    stf.register_read("ina_bitmap", c1, 0b01)
    stf.blank()
    stf.comment("Job 4, same cells: w1's contribution is new (not a duplicate), replaces\n"
                "the values and the exponent, and takes the cell for epoch 2.")
    stf.packet(1, contribution(w1, Agg(4, 1, 0, 1, a, exponent=-3)))
    stf.wait()
    stf.register_read("ina_epoch", c0, 2)
    stf.register_read("ina_bitmap", c0, 0b01)
    stf.register_read("ina_count", c0, 1)
    stf.register_read("ina_exponent", c0, exponent_cell(-3))
    stf.packet(2, contribution(w2, Agg(4, 1, 0, 1, b, exponent=-5)))
    expect_results(stf, [w1, w2], Agg(4, 1, 0, 1, sums(a, b), exponent=-3,
                                      flags=FLAG_RESULT))
    stf.wait()
    stf.blank()
    stf.comment("Version 1 still holds job 3's half: job 4's first round there is fresh.\n"
                "Its RESULT names the cell job 4 completed before (job 3 completed none).")
    stf.packet(2, contribution(w2, Agg(4, 1, 1, 9, b, exponent=0)))
    stf.packet(1, contribution(w1, Agg(4, 1, 1, 9, a, exponent=-1)))
    expect_results(stf, [w1, w2], Agg(4, 1, 1, 9, sums(a, b), exponent=0,
                                      flags=FLAG_RESULT).naming(1, 0))
    stf.wait()
    stf.register_read("ina_epoch", c1, 2)
    return stf


def exponent_max() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "The exponent is max-combined as a signed int8, whatever the order.")
    ws = [worker(1), worker(2), worker(3)]
    root_job(stf, 5, ws)
    rewrites(stf, ws)
    zeros = [0] * 8
    cases = [(0, (-5, 3, -128)), (1, (-1, -2, -7)), (2, (127, -1, 0)), (3, (-128, -128, -128))]
    for slot, exps in cases:
        stf.blank()
        for n, e in enumerate(exps, start=1):
            stf.packet(n, contribution(ws[n - 1], Agg(5, slot, 0, slot, zeros, exponent=e)))
        result = Agg(5, slot, 0, slot, zeros, exponent=max(exps), flags=FLAG_RESULT)
        expect_results(stf, ws, result.naming(slot - 1, 0) if slot else result)
        stf.wait()
    return stf


def duplicate_incomplete() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "A duplicate contribution to a slot that is not complete is dropped and\n"
                "not added twice.")
    w1, w2 = worker(1), worker(2)
    root_job(stf, 2, [w1, w2])
    rewrites(stf, [w1, w2])
    a = [5, 6, 7, 8, 9, 10, 11, 12]
    b = [100, 100, 100, 100, 100, 100, 100, 100]
    first = contribution(w1, Agg(2, 0, 0, 0, a, exponent=1))
    stf.blank()
    stf.packet(1, first)
    stf.packet(1, first)
    stf.packet(1, contribution(w1, Agg(2, 0, 0, 0, [1] * 8, exponent=9)))
    stf.wait()
    stf.register_read("ina_count", cell(0, 0, 0), 1)
    stf.register_read("ina_lane_0", cell(0, 0, 0), 5)
    stf.register_read("ina_exponent", cell(0, 0, 0), exponent_cell(1))
    stf.blank()
    stf.packet(2, contribution(w2, Agg(2, 0, 0, 0, b, exponent=0)))
    expect_results(stf, [w1, w2], Agg(2, 0, 0, 0, sums(a, b), exponent=1, flags=FLAG_RESULT))
    stf.wait()
    return stf


def retransmit_complete() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "A retransmission to a complete slot gets the RESULT back, by unicast out\n"
                "of its ingress port only; still so after the other worker has moved on\n"
                "to the slot's other version (which clears its bit in this one).")
    w1, w2, w3 = worker(1), worker(2), worker(3)
    root_job(stf, 4, [w1, w2])
    rewrites(stf, [w1, w2, w3])
    a = [1, 2, 3, 4, 5, 6, 7, 8]
    b = [-8, -7, -6, -5, -4, -3, -2, -1]
    result = Agg(4, 1, 0, 1, sums(a, b), exponent=6, flags=FLAG_RESULT)
    stf.blank()
    stf.packet(1, contribution(w1, Agg(4, 1, 0, 1, a, exponent=6)))
    stf.packet(2, contribution(w2, Agg(4, 1, 0, 1, b, exponent=2)))
    expect_results(stf, [w1, w2], result)
    stf.wait()
    stf.blank()
    stf.comment("Worker 1 lost its RESULT and retransmits (with the same values).")
    stf.packet(1, contribution(w1, Agg(4, 1, 0, 1, a, exponent=6)))
    stf.expect(1, result_for(w1, result))
    stf.wait()
    stf.blank()
    stf.comment("Worker 2 lost its RESULT too, but worker 1 has moved on to version 1.")
    c = [50] * 8
    stf.packet(1, contribution(w1, Agg(4, 1, 1, 5, c, exponent=0)))
    stf.wait()
    stf.register_read("ina_bitmap", cell(0, 1, 0), 0b10)
    stf.packet(2, contribution(w2, Agg(4, 1, 0, 1, b, exponent=2)))
    stf.expect(2, result_for(w2, result))
    stf.wait()
    stf.blank()
    stf.comment("Worker 2's version 1 completes that round; a retransmission of worker\n"
                "1's version 1 is answered as well.")
    d = [-50] * 8
    stf.packet(2, contribution(w2, Agg(4, 1, 1, 5, d, exponent=-3)))
    result1 = Agg(4, 1, 1, 5, sums(c, d), exponent=0, flags=FLAG_RESULT)
    expect_results(stf, [w1, w2], result1.naming(1, 0))
    stf.packet(1, contribution(w1, Agg(4, 1, 1, 5, c, exponent=0)))
    stf.expect(1, result_for(w1, result1))
    stf.wait()
    return stf


def nack() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "A contribution names the cell of its sender's previous transmission; if\n"
                "the sender's bit is not there, the switch tells it with a NACK naming\n"
                "that cell: the header alone when the packet is absorbed or dropped, the\n"
                "NACK flag on a unicast RESULT, and on the sender's copy of a multicast\n"
                "RESULT (the others' copies name the cell completed before).")
    w1, w2 = worker(1), worker(2)
    root_job(stf, 2, [w1, w2])
    rewrites(stf, [w1, w2])
    a, b = [1] * 8, [2] * 8

    def nack_for(w: Host, trigger: Agg, slot: int, version: int) -> bytes:
        alone = replace(trigger, values=[], flags=trigger.flags | FLAG_NACK)
        return result_for(w, alone.naming(slot, version))

    stf.blank()
    stf.comment("w1's packet to (0, 0) is lost; its next one, to (1, 0), names (0, 0): it\n"
                "is absorbed and w1 hears that (0, 0) misses its contribution.")
    to1 = Agg(2, 1, 0, 1, a, exponent=3).naming(0, 0)
    stf.packet(1, contribution(w1, to1))
    stf.expect(1, nack_for(w1, to1, 0, 0))
    stf.wait()
    stf.register_read("ina_bitmap", cell(0, 1, 0), 0b01)
    stf.blank()
    stf.comment("w1's next packets name cells that have its bit: absorbed, no NACK.")
    stf.packet(1, contribution(w1, Agg(2, 2, 0, 2, a).naming(1, 0)))
    stf.packet(1, contribution(w1, Agg(2, 0, 0, 0, a).naming(2, 0)))
    stf.wait()
    stf.register_read("ina_bitmap", cell(0, 0, 0), 0b01)
    stf.blank()
    stf.comment("w2 completes (0, 0), then (1, 0): that RESULT names (0, 0).")
    stf.packet(2, contribution(w2, Agg(2, 0, 0, 0, b)))
    expect_results(stf, [w1, w2], Agg(2, 0, 0, 0, sums(a, b), flags=FLAG_RESULT))
    stf.packet(2, contribution(w2, Agg(2, 1, 0, 1, b).naming(0, 0)))
    result1 = Agg(2, 1, 0, 1, sums(a, b), exponent=3, flags=FLAG_RESULT)
    expect_results(stf, [w1, w2], result1.naming(0, 0))
    stf.wait()
    stf.blank()
    stf.comment("A retransmission to a cell that waits for w1, naming a cell w2 never\n"
                "sent to: dropped, but w2 gets the NACK (a cell of another epoch, here\n"
                "one never written, misses every bit).")
    to3 = Agg(2, 3, 1, 67, b).naming(1, 0)
    stf.packet(2, contribution(w2, to3))
    stf.wait()
    again = Agg(2, 3, 1, 67, b).naming(4, 1)
    stf.packet(2, contribution(w2, again))
    stf.expect(2, nack_for(w2, again, 4, 1))
    stf.wait()
    stf.register_read("ina_count", cell(0, 3, 1), 1)
    stf.blank()
    stf.comment("w1 retransmits to the complete (1, 0), naming (5, 1) where it never sent:\n"
                "the RESULT comes back by unicast with the NACK naming (5, 1).")
    stf.packet(1, contribution(w1, Agg(2, 1, 0, 1, a, exponent=3).naming(5, 1)))
    stf.expect(1, result_for(w1, replace(result1, flags=FLAG_RESULT | FLAG_NACK
                                         ).naming(5, 1)))
    stf.wait()
    stf.blank()
    stf.comment("w2 completes (2, 0) naming (6, 0), where it never sent: w1's copy of the\n"
                "RESULT names (1, 0), completed before; w2's carries the NACK for (6, 0).")
    stf.packet(2, contribution(w2, Agg(2, 2, 0, 2, b, exponent=-1).naming(6, 0)))
    result2 = Agg(2, 2, 0, 2, sums(a, b), exponent=0, flags=FLAG_RESULT)
    stf.expect(1, result_for(w1, result2.naming(1, 0)))
    stf.expect(2, result_for(w2, replace(result2, flags=FLAG_RESULT | FLAG_NACK
                                         ).naming(6, 0)))
    stf.wait()
    assert FLAG_NAMED | FLAG_NAMED_VERSION == 0x0C
    return stf


def stale() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "A contribution of a chunk earlier than the cell's round, or than its\n"
                "sender's contribution in the other version, is stale (a link that\n"
                "reorders delivers some): dropped, never added to another round.")
    w1, w2 = worker(1), worker(2)
    root_job(stf, 5, [w1, w2])
    rewrites(stf, [w1, w2])
    a, b, c, d = [1] * 8, [2] * 8, [30] * 8, [400] * 8
    stf.blank()
    stf.comment("Chunk 1 completes slot 1, version 0; w1 goes on to chunk 5 (version 1).")
    stf.packet(1, contribution(w1, Agg(5, 1, 0, 1, a)))
    stf.packet(2, contribution(w2, Agg(5, 1, 0, 1, b)))
    expect_results(stf, [w1, w2], Agg(5, 1, 0, 1, sums(a, b), flags=FLAG_RESULT))
    stf.packet(1, contribution(w1, Agg(5, 1, 1, 5, c)))
    stf.wait()
    stf.blank()
    stf.comment("A late copy of w1's chunk 1: w1 is at chunk 5 already. Dropped, with no\n"
                "RESULT back and nothing changed (before, it counted as new and was\n"
                "added to the finished sum).")
    stf.packet(1, contribution(w1, Agg(5, 1, 0, 1, a)))
    stf.wait()
    stf.register_read("ina_bitmap", cell(0, 1, 0), 0b10)
    stf.register_read("ina_count", cell(0, 1, 0), 2)
    stf.register_read("ina_round", cell(0, 1, 0), 1)
    stf.blank()
    stf.comment("w2 completes chunk 5; chunk 9 starts a new round in version 0.")
    stf.packet(2, contribution(w2, Agg(5, 1, 1, 5, d)))
    expect_results(stf, [w1, w2], Agg(5, 1, 1, 5, sums(c, d), flags=FLAG_RESULT
                                      ).naming(1, 0))
    stf.packet(2, contribution(w2, Agg(5, 1, 0, 9, d)))
    stf.wait()
    stf.register_read("ina_round", cell(0, 1, 0), 9)
    stf.register_read("ina_count", cell(0, 1, 0), 1)
    stf.blank()
    stf.comment("Late copies of chunk 1 from either worker: the cell holds chunk 9 now.")
    stf.packet(1, contribution(w1, Agg(5, 1, 0, 1, a)))
    stf.packet(2, contribution(w2, Agg(5, 1, 0, 1, b)))
    stf.wait()
    stf.register_read("ina_count", cell(0, 1, 0), 1)
    stf.packet(1, contribution(w1, Agg(5, 1, 0, 9, c)))
    expect_results(stf, [w1, w2], Agg(5, 1, 0, 9, sums(c, d), flags=FLAG_RESULT
                                      ).naming(1, 1))
    stf.wait()
    stf.blank()
    stf.comment("Chunk numbers wrap around: 4294967295 comes before 3 (slot 3, version 1\n"
                "holds 4294967295 first, then 3).")
    stf.packet(1, contribution(w1, Agg(5, 3, 1, 0xFFFFFFFF, a)))
    stf.packet(2, contribution(w2, Agg(5, 3, 1, 0xFFFFFFFF, b)))
    expect_results(stf, [w1, w2], Agg(5, 3, 1, 0xFFFFFFFF, sums(a, b), flags=FLAG_RESULT
                                      ).naming(1, 0))
    stf.packet(1, contribution(w1, Agg(5, 3, 1, 3, c)))
    stf.wait()
    stf.register_read("ina_round", cell(0, 3, 1), 3)
    stf.packet(2, contribution(w2, Agg(5, 3, 1, 0xFFFFFFFF, b)))  # late: dropped
    stf.packet(2, contribution(w2, Agg(5, 3, 1, 3, d)))
    expect_results(stf, [w1, w2], Agg(5, 3, 1, 3, sums(c, d), flags=FLAG_RESULT
                                      ).naming(3, 1))
    stf.wait()
    return stf


def nack_non_root() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "A non-root switch NACKs its children as a root does, and sends its\n"
                "aggregate upstream naming nothing (a sender whose previous transmission\n"
                "is missing and whose packet completes the cell is left to its timer).")
    w1, w2 = worker(1), worker(2)
    for index, w in enumerate([w1, w2]):
        stf.add_child(6, w.port, child_index=index, fan_in=2, is_root=False, parent_port=4)
    stf.multicast_group(1, [1, 2], 0)
    rewrites(stf, [w1, w2])
    a, b = [1, 2, 3, 4, 5, 6, 7, 8], [10] * 8
    stf.blank()
    first = Agg(6, 2, 0, 2, a).naming(1, 0)
    stf.packet(1, contribution(w1, first))
    stf.expect(1, result_for(w1, replace(first, values=[], flags=FLAG_NACK | first.flags)))
    stf.wait()
    stf.blank()
    stf.packet(2, contribution(w2, Agg(6, 2, 0, 2, b, exponent=1).naming(3, 1)))
    stf.expect(4, contribution(w2, Agg(6, 2, 0, 2, sums(a, b), exponent=1)))
    stf.wait()
    return stf


def isolation() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "Jobs are isolated: a packet from a port that is not a child of its job\n"
                "and a packet of an unknown job are dropped (even if addressed to a host\n"
                "the routes know); jobs 7 (ports 1, 2; region 0) and 9 (ports 2, 3; region\n"
                "base 4) use the same slot without mixing.")
    w1, w2, w3 = worker(1), worker(2), worker(3)
    root_job(stf, 7, [w1, w2], region_base=0, mcast_grp=1, node=0)
    root_job(stf, 9, [w2, w3], region_base=4, mcast_grp=2, node=1)
    rewrites(stf, [w1, w2, w3])
    stf.raw("add ipv4_lpm hdr.ipv4.dst_addr:0x0A000000/24 "
            f"forward(port:1, dst_mac:0x{w1.mac:012X})")
    a, b = [1] * 8, [2] * 8
    x, y = [1000] * 8, [3000] * 8
    stf.blank()
    stf.comment("Port 3 is not a child of job 7; job 8 does not exist.")
    stf.packet(3, contribution(w3, Agg(7, 0, 0, 0, a)))
    stf.packet(1, contribution(w1, Agg(8, 0, 0, 0, a)))
    stf.packet(1, agg_frame(Agg(8, 0, 0, 0, a), eth_dst=SWITCH_MAC, eth_src=w1.mac,
                            ip_src=w1.ip, ip_dst=w2.ip))
    stf.wait()
    stf.register_read("ina_bitmap", cell(0, 0, 0), 0)
    stf.comment("A miss drops whatever the default action is.")
    stf.raw("setdefault ina_job ina_child(child_index:5, fan_in:1, is_root:1, parent_port:0, "
            "mcast_grp:1, region_base:0, epoch:1)")
    stf.packet(3, contribution(w3, Agg(7, 0, 0, 0, a)))
    stf.wait()
    stf.raw("setdefault ina_job drop()")
    stf.blank()
    stf.comment("Both jobs fill their slot 0.")
    stf.packet(2, contribution(w2, Agg(9, 0, 0, 0, x)))
    stf.packet(1, contribution(w1, Agg(7, 0, 0, 0, a)))
    stf.packet(2, contribution(w2, Agg(7, 0, 0, 0, b)))
    expect_results(stf, [w1, w2], Agg(7, 0, 0, 0, sums(a, b), flags=FLAG_RESULT))
    stf.packet(3, contribution(w3, Agg(9, 0, 0, 0, y)))
    expect_results(stf, [w2, w3], Agg(9, 0, 0, 0, sums(x, y), flags=FLAG_RESULT))
    stf.wait()
    stf.register_read("ina_lane_0", cell(0, 0, 0), 3)
    stf.register_read("ina_lane_0", cell(4, 0, 0), 4000)
    stf.register_read("ina_bitmap", cell(4, 0, 0), 0b11)
    return stf


def non_root() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "A non-root switch: workers on ports 1 and 2, parent on port 4. The\n"
                "aggregate goes upstream as one contribution (not a RESULT, addresses\n"
                "unchanged); a retransmission to the complete slot re-sends it upstream;\n"
                "the parent's RESULT is multicast to the children and rewritten.")
    w1, w2 = worker(1), worker(2)
    parent = Host(port=4, mac=0x0200000000F0, ip=0x0A0000F0)
    for index, w in enumerate([w1, w2]):
        stf.add_child(6, w.port, child_index=index, fan_in=2, is_root=False, parent_port=4)
    stf.comment("The parent's entry: RESULTs are accepted on its port.")
    stf.add_child(6, parent.port, child_index=31, fan_in=2, is_root=False, parent_port=4)
    stf.multicast_group(1, [1, 2], 0)
    rewrites(stf, [w1, w2])
    a = [1, 2, 3, 4, 5, 6, 7, 8]
    b = [INT_MAX, 1, 1, 1, 1, 1, 1, -9]
    agg = Agg(6, 9, 1, 4242, sums(a, b), exponent=3)
    upstream = contribution(w2, agg)
    stf.blank()
    stf.packet(1, contribution(w1, Agg(6, 9, 1, 4242, a, exponent=-2)))
    stf.packet(2, contribution(w2, Agg(6, 9, 1, 4242, b, exponent=3)))
    stf.expect(4, upstream)
    stf.wait()
    stf.blank()
    stf.comment("Worker 1 retransmits: the stored aggregate goes upstream again.")
    stf.packet(1, contribution(w1, Agg(6, 9, 1, 4242, a, exponent=-2)))
    stf.expect(4, contribution(w1, agg))
    stf.wait()
    stf.blank()
    stf.comment("A contribution from the parent port is dropped.")
    stf.packet(4, contribution(parent, Agg(6, 9, 1, 4242, a)))
    stf.wait()
    stf.register_read("ina_bitmap", cell(0, 9, 1), 0b11)
    stf.register_read("ina_count", cell(0, 9, 1), 2)
    stf.blank()
    stf.comment("The parent's RESULT (addressed as the parent left it) goes to both workers.")
    result = Agg(6, 9, 1, 4242, [11] * 8, exponent=3, flags=FLAG_RESULT)
    stf.packet(4, agg_frame(result, eth_dst=SWITCH_MAC, eth_src=parent.mac, ip_src=w2.ip,
                            ip_dst=AGGREGATOR_IP))
    expect_results(stf, [w1, w2], result)
    stf.wait()
    return stf


def result_filter() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "A RESULT is accepted only from the parent port of its job: not from a\n"
                "child, not from a port outside the job, not for another job.")
    w1, w2, w3 = worker(1), worker(2), worker(3)
    parent = Host(port=4, mac=0x0200000000F0, ip=0x0A0000F0)
    for index, w in enumerate([w1, w2]):
        stf.add_child(6, w.port, child_index=index, fan_in=2, is_root=False, parent_port=4)
    stf.add_child(6, parent.port, child_index=0, fan_in=2, is_root=False, parent_port=4)
    stf.multicast_group(1, [1, 2], 0)
    rewrites(stf, [w1, w2, w3])
    result = Agg(6, 0, 0, 0, [1, 2, 3, 4, 5, 6, 7, 8], flags=FLAG_RESULT)
    stf.blank()
    stf.packet(1, contribution(w1, result))
    stf.packet(2, contribution(w2, result))
    stf.packet(3, contribution(w3, result))
    stf.packet(4, agg_frame(Agg(5, 0, 0, 0, [1] * 8, flags=FLAG_RESULT), eth_dst=SWITCH_MAC,
                            eth_src=parent.mac, ip_src=parent.ip, ip_dst=AGGREGATOR_IP))
    stf.wait()
    stf.blank()
    stf.comment("From the parent: delivered to both children.")
    stf.packet(4, agg_frame(result, eth_dst=SWITCH_MAC, eth_src=parent.mac, ip_src=parent.ip,
                            ip_dst=AGGREGATOR_IP))
    expect_results(stf, [w1, w2], result)
    stf.wait()
    return stf


def rejects() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8} -D INA_SLOTS=4\n"
                "Malformed aggregation packets are dropped: version other than 0/1,\n"
                "values cut short, a cell beyond the register arrays (4 slots here), a\n"
                "child index beyond the 32-bit bitmap.")
    w1, w2, w3 = worker(1), worker(2), worker(3)
    stf.add_child(1, 1, child_index=0, fan_in=1, region_base=2)
    stf.add_child(1, 3, child_index=32, fan_in=1, region_base=0)
    stf.multicast_group(1, [1], 0)
    rewrites(stf, [w1, w2, w3])
    v = [1] * 8
    stf.blank()
    stf.packet(1, contribution(w1, Agg(1, 0, 2, 0, v)))
    stf.packet(1, contribution(w1, Agg(1, 0, 0, 0, v))[:-4])
    stf.packet(1, contribution(w1, Agg(1, 2, 0, 2, v)))
    stf.packet(3, contribution(w3, Agg(1, 0, 0, 0, v)))
    stf.wait()
    stf.blank()
    stf.comment("The last slot of the arrays works (fan-in 1: the RESULT comes at once).")
    stf.packet(1, contribution(w1, Agg(1, 1, 1, 1, v)))
    stf.expect(1, result_for(w1, Agg(1, 1, 1, 1, v, flags=FLAG_RESULT)))
    stf.wait()
    stf.register_read("ina_bitmap", cell(2, 1, 1), 1)
    return stf


def ipv4_forwarding() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "Ordinary IPv4 is forwarded by longest-prefix match (TTL - 1, new checksum,\n"
                "Ethernet source = the old destination); TTL 1, no route or IPv4 options:\n"
                "dropped.")
    mac1, mac2 = 0x0200000000A1, 0x0200000000A2
    for prefix, port, mac in ((0x0A000100, 1, mac1), (0x0A000000, 2, mac2)):
        length = 24 if port == 1 else 16
        stf.raw(f"add ipv4_lpm hdr.ipv4.dst_addr:0x{prefix:08X}/{length} "
                f"forward(port:{port}, dst_mac:0x{mac:012X})")
    src_mac, src_ip = 0x020000000009, 0x0A000909
    payload = bytes(range(16))

    def frame(dst_ip: int, *, eth_dst: int = SWITCH_MAC, eth_src: int = src_mac,
              ttl: int = 64, protocol: int = 17, dport: int = 5000,
              options: bytes = b"") -> bytes:
        l4 = udp(1234, dport, len(payload)) + payload if protocol == 17 else payload
        return (ethernet(eth_dst, eth_src, 0x0800)
                + ipv4(src_ip, dst_ip, len(l4), protocol=protocol, ttl=ttl, options=options)
                + l4)

    stf.blank()
    stf.packet(3, frame(0x0A000105))
    stf.expect(1, frame(0x0A000105, eth_dst=mac1, eth_src=SWITCH_MAC, ttl=63))
    stf.packet(3, frame(0x0A000303, protocol=1))
    stf.expect(2, frame(0x0A000303, eth_dst=mac2, eth_src=SWITCH_MAC, ttl=63, protocol=1))
    stf.packet(3, frame(0x0A000107, ttl=2))
    stf.expect(1, frame(0x0A000107, eth_dst=mac1, eth_src=SWITCH_MAC, ttl=1))
    stf.packet(3, frame(0x0A000108, dport=INA_UDP_PORT - 1))
    stf.expect(1, frame(0x0A000108, dport=INA_UDP_PORT - 1, eth_dst=mac1,
                        eth_src=SWITCH_MAC, ttl=63))
    stf.wait()
    stf.blank()
    stf.comment("TTL 1, TTL 0, no route; IPv4 options (here to the aggregation port and to\n"
                "another one), which the switch does not take apart.")
    stf.packet(3, frame(0x0A000105, ttl=1))
    stf.packet(3, frame(0x0A000105, ttl=0))
    stf.packet(3, frame(0xC0A80101))
    opts = bytes([1, 1, 1, 0])  # NOP NOP NOP EOL
    stf.packet(3, frame(0x0A000106, dport=INA_UDP_PORT, options=opts))
    stf.packet(3, frame(0x0A000106, options=opts))
    stf.wait()
    return stf


def ecmp() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "ECMP: ipv4_lpm's ecmp_group(group, size) picks member crc16(src, dst,\n"
                "protocol, L4 source port, L4 destination port) % size of the group, and\n"
                "ecmp_nhop forwards to it (TTL - 1 once). TCP and UDP hash with their ports,\n"
                "other protocols and fragments with ports 0; the bytes after the IPv4\n"
                "header leave unchanged.")
    group1 = {0: (2, 0x0200000000A2), 1: (3, 0x0200000000A3)}
    group2 = {0: (2, 0x0200000000A2), 1: (3, 0x0200000000A3), 2: (4, 0x0200000000A4)}
    net1, host2, net3 = 0x0A000100, 0x0A000209, 0x0A000300
    stf.raw(f"add ipv4_lpm hdr.ipv4.dst_addr:0x{net1:08X}/24 ecmp_group(group:1, size:2)")
    stf.raw(f"add ipv4_lpm hdr.ipv4.dst_addr:0x{host2:08X}/32 ecmp_group(group:2, size:3)")
    stf.raw(f"add ipv4_lpm hdr.ipv4.dst_addr:0x{net3:08X}/24 ecmp_group(group:3, size:2)")
    stf.raw("add ipv4_lpm hdr.ipv4.dst_addr:0x0A000400/24 ecmp_group(group:1, size:0)")
    for group, members in ((1, group1), (2, group2), (3, {0: group1[0]})):
        for index, (port, mac) in members.items():
            stf.raw(f"add ecmp_nhop meta.ecmp_group:{group} meta.ecmp_index:{index} "
                    f"forward(port:{port}, dst_mac:0x{mac:012X})")
    src_mac, src_ip = 0x020000000009, 0x0A000909
    payload = bytes(range(24))

    def frame(dst_ip: int, protocol: int, sport: int = 0, dport: int = 0, *,
              ttl: int = 64, flags_frag: int = 0x4000, l4: bytes | None = None,
              eth_dst: int = SWITCH_MAC, eth_src: int = src_mac) -> bytes:
        if l4 is None:
            l4 = {6: tcp(sport, dport), 17: udp(sport, dport, len(payload))}.get(
                protocol, b"") + payload
        return (ethernet(eth_dst, eth_src, 0x0800)
                + ipv4(src_ip, dst_ip, len(l4), protocol=protocol, ttl=ttl,
                       flags_frag=flags_frag)
                + l4)

    def send(dst_ip: int, protocol: int, sport: int, dport: int,
             members: dict[int, tuple[int, int]], size: int, *, hashed_ports: bool = True,
             **kw: int) -> int:
        """One packet; the member its hash picks receives it (the index)."""
        ports = (sport, dport) if hashed_ports else (0, 0)
        index = flow_hash(src_ip, dst_ip, protocol, *ports) % max(size, 1)
        stf.packet(1, frame(dst_ip, protocol, sport, dport, **kw))
        port, mac = members[index]
        stf.expect(port, frame(dst_ip, protocol, sport, dport, ttl=kw.get("ttl", 64) - 1,
                               eth_dst=mac, eth_src=SWITCH_MAC,
                               **{k: v for k, v in kw.items() if k != "ttl"}))
        return index

    stf.blank()
    stf.comment("TCP flows to 10.0.1.5 (group 1, two members) from eight source ports: the\n"
                "hash spreads them over both members.")
    picked = [send(net1 | 5, 6, sport, 5001, group1, 2) for sport in range(40000, 40008)]
    assert set(picked) == {0, 1}, picked
    stf.wait()
    stf.comment("UDP flows (not to the aggregation port) to 10.0.2.9 (group 2, three members).")
    picked = [send(host2, 17, 7000, dport, group2, 3) for dport in range(9000, 9012)]
    assert set(picked) == {0, 1, 2}, picked
    stf.wait()
    stf.blank()
    stf.comment("ICMP hashes with ports 0.")
    send(net1 | 7, 1, 0, 0, group1, 2)
    stf.comment("Fragments hash with ports 0: the first (MF) and a later one (offset 3), with\n"
                "ports that would hash to the other member.")
    sport = next(p for p in range(50000, 50100)
                 if flow_hash(src_ip, net1 | 5, 6, p, 80) % 2
                 != flow_hash(src_ip, net1 | 5, 6, 0, 0) % 2)
    send(net1 | 5, 6, sport, 80, group1, 2, hashed_ports=False, flags_frag=0x2000)
    send(net1 | 5, 6, sport, 80, group1, 2, hashed_ports=False, flags_frag=0x0003)
    stf.comment("A TCP packet too short for the ports (2 bytes of TCP) hashes with ports 0,\n"
                "and its bytes leave as they came.")
    send(net1 | 5, 6, 0, 0, group1, 2, l4=b"\x9c\x40")
    stf.comment("TTL 2 leaves with TTL 1; size 0 picks member 0, as size 1 does.")
    send(net1 | 5, 6, 40001, 5001, group1, 2, ttl=2)
    send(0x0A000405, 6, 40001, 5001, group1, 0)
    stf.wait()
    stf.blank()
    stf.comment("Group 3 has only member 0: a flow that hashes to member 1 is dropped, one\n"
                "that hashes to member 0 goes out. TTL 1 is dropped before ECMP.")
    to_member = {flow_hash(src_ip, net3 | 1, 6, p, 443) % 2: p for p in range(41000, 41010)}
    stf.packet(1, frame(net3 | 1, 6, to_member[1], 443))
    send(net3 | 1, 6, to_member[0], 443, {0: group1[0]}, 2)
    stf.packet(1, frame(net1 | 5, 6, 40000, 5001, ttl=1))
    stf.comment("An aggregation packet to an address that ECMP routes is still the job's\n"
                "(here there is no job: dropped).")
    stf.packet(1, frame(net1 | 5, 17, INA_UDP_PORT, INA_UDP_PORT, l4=udp(
        INA_UDP_PORT, INA_UDP_PORT, 12 + 32) + Agg(1, 0, 0, 0, [1] * 8).payload()))
    stf.wait()
    return stf


def non_ipv4() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "Everything that is not IPv4 is dropped, even with a default route.")
    stf.raw("add ipv4_lpm hdr.ipv4.dst_addr:0/0 forward(port:2, dst_mac:0x0200000000A2)")
    arp = (ethernet(0xFFFFFFFFFFFF, 0x020000000001, 0x0806)
           + bytes.fromhex("0001080006040001" "020000000001" "0A000001"
                           "000000000000" "0A0000FE"))
    ipv6 = ethernet(SWITCH_MAC, 0x020000000001, 0x86DD) + bytes.fromhex(
        "60000000000811400000000000000000000000000000000100000000000000000000000000000002"
        "1234BEEF00080000")
    vlan = ethernet(SWITCH_MAC, 0x020000000001, 0x8100) + bytes.fromhex("00010800") + ipv4(
        0x0A000001, 0x0A000002, 0, protocol=253)
    stf.blank()
    stf.packet(1, arp)
    stf.packet(1, ipv6)
    stf.packet(1, vlan)
    stf.packet(1, ethernet(SWITCH_MAC, 0x020000000001, 0x0800))
    stf.packet(1, ethernet(SWITCH_MAC, 0x020000000001, 0x0800)[:10])
    stf.comment("An IPv4 packet on the same port does go out (the route works).")
    ok = ethernet(SWITCH_MAC, 0x020000000001, 0x0800) + ipv4(0x0A000001, 0x0A000002, 0,
                                                             protocol=253)
    stf.packet(1, ok)
    stf.expect(2, ethernet(0x0200000000A2, SWITCH_MAC, 0x0800)
               + ipv4(0x0A000001, 0x0A000002, 0, protocol=253, ttl=63))
    stf.wait()
    return stf


CPU_PORT = 255  # INA_CPU_PORT's default
LLDP_MULTICAST = 0x0180C200000E


def packet_in_header(ingress_port: int) -> bytes:
    """``packet_in_t``: ingress_port (9 bits), then 7 zero bits."""
    return (ingress_port << 7).to_bytes(2, "big")


def packet_out_header(egress_port: int) -> bytes:
    """``packet_out_t``: egress_port (9 bits), then 7 padding bits."""
    return (egress_port << 7).to_bytes(2, "big")


def controller_packets() -> Stf:
    stf = Stf()
    stf.comment(f"defines: {K8}\n"
                "Packet I/O through the CPU port (255): a PacketOut's frame leaves on the "
                "port its\npacket_out header names, unchanged; an LLDP frame (a probe "
                "from a neighbour)\nand an IPv4 packet routed to to_cpu() go to the CPU "
                "port behind a packet_in\nheader that names their ingress port.")
    stf.raw(f"add ipv4_lpm hdr.ipv4.dst_addr:0x{AGGREGATOR_IP:08X}/32 to_cpu()")
    stf.raw("add ipv4_lpm hdr.ipv4.dst_addr:0x0A000002/32 "
            "forward(port:2, dst_mac:0x020000000002)")
    probe = ethernet(LLDP_MULTICAST, 0x020000FF0001, 0x88CC) + bytes(range(40))
    stf.blank()
    stf.comment("A probe sent by the controller out of port 3, and one out of port 1.")
    stf.packet(CPU_PORT, packet_out_header(3) + probe)
    stf.expect(3, probe)
    stf.packet(CPU_PORT, packet_out_header(1) + probe)
    stf.expect(1, probe)
    stf.wait()
    stf.comment("A neighbour's probe arriving on port 2 goes to the controller.")
    stf.packet(2, probe)
    stf.expect(CPU_PORT, packet_in_header(2) + probe)
    stf.wait()
    echo = (ethernet(0x020000000001, SWITCH_MAC, 0x0800)
            + ipv4(AGGREGATOR_IP, 0x0A000001, 12, protocol=1) + bytes.fromhex(
                "0800F7FA0001000400000000"))
    stf.comment("An ICMP echo request the controller sends to the host on port 1 leaves "
                "as it is\n(its TTL too), and the host's reply to the aggregator address "
                "comes back.")
    stf.packet(CPU_PORT, packet_out_header(1) + echo)
    stf.expect(1, echo)
    reply = (ethernet(SWITCH_MAC, 0x020000000001, 0x0800)
             + ipv4(0x0A000001, AGGREGATOR_IP, 12, protocol=1) + bytes.fromhex(
                 "0000FFFA0001000400000000"))
    stf.packet(1, reply)
    stf.expect(CPU_PORT, packet_in_header(1) + reply)
    stf.wait()
    stf.comment("Other traffic is routed as before, and an aggregation packet with no "
                "job is dropped.")
    routed = ethernet(SWITCH_MAC, 0x020000000001, 0x0800) + ipv4(0x0A000001, 0x0A000002,
                                                                 0, protocol=253)
    stf.packet(1, routed)
    stf.expect(2, ethernet(0x020000000002, SWITCH_MAC, 0x0800)
               + ipv4(0x0A000001, 0x0A000002, 0, protocol=253, ttl=63))
    stf.packet(1, contribution(worker(1), Agg(job=9, slot=0, version=0, chunk=0, values=[1] * 8)))
    stf.wait()
    return stf


def two_workers_k64() -> Stf:
    stf = Stf()
    stf.comment("defines: -D INA_K=64\n"
                "The default K = 64: two workers complete a slot (the last cell of the\n"
                "arrays); a retransmission is answered by unicast.")
    w1, w2 = worker(1), worker(2)
    root_job(stf, 11, [w1, w2], region_base=100)
    rewrites(stf, [w1, w2])
    a = [i * 1000003 - 7 for i in range(64)]
    b = [INT_MAX - i if i % 2 else -i * 65537 for i in range(64)]
    result = Agg(11, 155, 1, 0xDEADBEEF, sums(a, b), exponent=-20, flags=FLAG_RESULT)
    stf.blank()
    stf.packet(2, contribution(w2, Agg(11, 155, 1, 0xDEADBEEF, b, exponent=-20)))
    stf.wait()
    stf.packet(1, contribution(w1, Agg(11, 155, 1, 0xDEADBEEF, a, exponent=-21)))
    expect_results(stf, [w1, w2], result)
    stf.wait()
    assert sums(a, b)[62] > 0 > sums(a, b)[63]
    assert cell(100, 155, 1) == 2 * 256 - 1
    stf.register_read("ina_lane_62", cell(100, 155, 1), sums(a, b)[62])
    stf.blank()
    stf.packet(2, contribution(w2, Agg(11, 155, 1, 0xDEADBEEF, b, exponent=-20)))
    stf.expect(2, result_for(w2, result))
    stf.wait()
    return stf


SCENARIOS: dict[str, Callable[[], Stf]] = {
    "two_workers": two_workers,
    "three_workers": three_workers,
    "first_writer": first_writer,
    "earlier_epoch": earlier_epoch,
    "exponent_max": exponent_max,
    "duplicate_incomplete": duplicate_incomplete,
    "retransmit_complete": retransmit_complete,
    "nack": nack,
    "stale": stale,
    "nack_non_root": nack_non_root,
    "isolation": isolation,
    "non_root": non_root,
    "result_filter": result_filter,
    "rejects": rejects,
    "ipv4_forwarding": ipv4_forwarding,
    "ecmp": ecmp,
    "non_ipv4": non_ipv4,
    "two_workers_k64": two_workers_k64,
    "controller_packets": controller_packets,
}


def render_all() -> dict[str, str]:
    """File name -> STF text, for every scenario."""
    header = "# Generated by tests/p4/gen_aggregation_stf.py; edit that, not this file.\n"
    return {f"{name}.stf": header + make().text() for name, make in SCENARIOS.items()}


def main() -> int:
    STF_DIR.mkdir(exist_ok=True)
    for name, text in render_all().items():
        (STF_DIR / name).write_text(text)
    print(f"wrote {len(SCENARIOS)} STF files to {STF_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
