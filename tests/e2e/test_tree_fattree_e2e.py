"""End to end on ``fattree,4`` (20 built-in switches, 16 hosts) in Mininet: jobs of 8
and 16 workers over three levels of switches, the ring baseline over the routes,
the in-network reduction property measured with the port counters, and two jobs on
overlapping trees with different roots at once.

BMv2 is left out here: twenty simple_switch_grpc processes aggregate about 1,500
contributions a second each, and the same tree code runs on BMv2 in the leaf-spine
and torus tests.
"""

from __future__ import annotations

import pytest
from tree_helpers import (
    K,
    PlanRecorder,
    check_one_stream_per_link,
    job,
    measure,
    network_fixture,
    run,
)

from experiments.allreduce_net import AllReduceNet

pytestmark = pytest.mark.slow

HOSTS = [f"h{i}" for i in range(1, 17)]


net = network_fixture("fattree,4", "fattree", targets=["builtin"])


def test_8_workers_in_two_pods(net: AllReduceNet, monkeypatch: pytest.MonkeyPatch) -> None:
    plans = PlanRecorder(net, monkeypatch).plans
    [o] = run(net, job(HOSTS[:8], 20_000, seed=1))
    tree = plans[o.job.job_id].tree
    assert (tree.root, tree.depth, len(tree.switches)) == ("s1", 2, 7)


def test_16_workers_one_stream_on_every_link(net: AllReduceNet,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every link of the tree carries one chunk stream each way: the core's links to
    the aggregation switches (4 workers below each) as much as the edges' uplinks (2)."""
    plans = PlanRecorder(net, monkeypatch).plans
    chunks = 200
    [o], sent = measure(net, [job(HOSTS, chunks * K, seed=2)])
    plan = plans[o.job.job_id]
    assert (plan.tree.root, plan.tree.depth, len(plan.tree.switches)) == ("s1", 2, 13)
    seen = check_one_stream_per_link(plan, sent, chunks, o.job.window)
    assert sorted(below for _, below, _ in seen) == [2] * 8 + [4] * 4
    # the switches outside the tree sent nothing
    for name in ("s2", "s3", "s4", "s6", "s10", "s14", "s18"):
        assert all(sent[name, port].packets == 0 for port in (1, 2, 3, 4)), name
    # each worker's own link: one stream each way too
    assert all(sent["s7", port].packets >= chunks + o.job.window for port in (1, 2))


def test_ring_over_16_hosts(net: AllReduceNet) -> None:
    run(net, job(HOSTS, 8_000, seed=3), algo="ring")


def test_two_jobs_on_overlapping_trees_at_once(net: AllReduceNet,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs on h1, h2, h5, h6 (root s1) and on h3, h4, h7, h8 (asked root s2) share the
    aggregation switches s5 and s9, each in a region of its own there: both results are
    right, and neither job's epoch is found in the other's cells."""
    plans = PlanRecorder(net, monkeypatch).plans
    a = job(["h1", "h2", "h5", "h6"], 30_000, seed=4)
    b = job(["h3", "h4", "h7", "h8"], 20_000, seed=5, dist="uniform", root="s2")
    run(net, a, b)
    pa, pb = plans[a.job_id], plans[b.job_id]
    assert (pa.tree.root, pb.tree.root) == ("s1", "s2")
    shared = set(pa.tree.switches) & set(pb.tree.switches)
    assert shared == {"s5", "s9"}
    for name in shared:
        ra, rb = pa.switches[name].region_base, pb.switches[name].region_base
        assert ra + a.window <= rb or rb + b.window <= ra  # disjoint regions
        epochs = net.ctl.client(name).read_register("ina_epoch")
        in_a = [epochs[c] for c in range(2 * ra, 2 * (ra + a.window))]
        in_b = [epochs[c] for c in range(2 * rb, 2 * (rb + b.window))]
        assert pa.epoch in in_a and pb.epoch in in_b
        assert pb.epoch not in in_a and pa.epoch not in in_b
