"""End to end on a two-tier tree: ``leafspine,2,2,2`` (leaves s1: h1, h2 and s2: h3, h4;
spines s3, s4) in Mininet, on the built-in switch and on BMv2.

An in-network job crosses three switches: each leaf reduces its two workers and sends
one stream up to the root spine, which returns the result down. Results are checked
(bit-identical at every worker, within the quantization bound); the ring baseline runs
over the routes across the spines; on the built-in switch the port counters show one
chunk stream per direction on each leaf-spine link, and loss on a leaf's uplink in
either direction is recovered.
"""

from __future__ import annotations

import json

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

HOSTS = ["h1", "h2", "h3", "h4"]


net = network_fixture("leafspine,2,2,2", "leafspine")


# Port counters (ina switch-cli) and the impairment of one switch port are the built-in
# switch's: these tests run on it alone.
builtin_only = pytest.mark.parametrize("net", ["builtin"], indirect=True)


def test_tree_of_three_switches(net: AllReduceNet, monkeypatch: pytest.MonkeyPatch) -> None:
    plans = PlanRecorder(net, monkeypatch).plans
    [o] = run(net, job(HOSTS, 30_000, seed=1))
    tree = plans[o.job.job_id].tree
    assert tree.root == "s3" and set(tree.switches) == {"s1", "s2", "s3"}
    assert all(s["counters"]["chunks"] == -(-30_000 // K) for s in o.stats)


def test_ring_across_the_spines(net: AllReduceNet) -> None:
    run(net, job(HOSTS, 20_000, seed=2), algo="ring")


def test_odd_sizes_and_a_chosen_root(net: AllReduceNet,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    plans = PlanRecorder(net, monkeypatch).plans
    [o] = run(net, job(["h1", "h3", "h4"], K + 1, seed=3, root="s4"))
    assert plans[o.job.job_id].tree.root == "s4"
    [o] = run(net, job(["h2", "h4"], 1, seed=4, dist="wide"))


@builtin_only
def test_one_stream_per_direction_on_each_leaf_uplink(
        net: AllReduceNet, monkeypatch: pytest.MonkeyPatch) -> None:
    plans = PlanRecorder(net, monkeypatch).plans
    chunks = 300
    [o], sent = measure(net, [job(HOSTS, chunks * K, seed=5)])
    seen = check_one_stream_per_link(plans[o.job.job_id], sent, chunks, o.job.window)
    assert sorted((child, below) for child, below, _ in seen) == [("s1", 2), ("s2", 2)]
    # the other spine carried none of it
    assert sent["s4", 1].packets == sent["s4", 2].packets == 0


@builtin_only
@pytest.mark.parametrize("direction", ["egress", "ingress"])
def test_loss_on_a_leaf_uplink_either_way(net: AllReduceNet, direction: str) -> None:
    """5% of s1's frames to the spine (egress: contributions going up) or from it
    (ingress: results coming down) are lost; the job still completes, correct."""
    s1 = net.net.get("s1")
    try:
        reply = s1.cli("impair", "3", f"loss=0.05,direction={direction},seed=3")
        assert reply.returncode == 0, reply.stderr
        [o] = run(net, job(HOSTS, 20_000, seed=6))
        [port] = [p for p in json.loads(s1.cli("--json", "counters").stdout)["ports"]
                  if p["port"] == 3]
        assert port["drops"]["impairment_loss"] > 0
        assert o.counter("retransmitted") > 0
    finally:
        net.impair("none")
