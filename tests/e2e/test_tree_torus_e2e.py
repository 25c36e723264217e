"""End to end on ``torus,2,2`` (a ring of four switches, one host on each) in Mininet,
on the built-in switch and on BMv2: the routes and the aggregation tree must cope with
the cycle. Results checked as everywhere (bit-identical, within the bound)."""

from __future__ import annotations

import pytest
from tree_helpers import PlanRecorder, job, network_fixture, run

from experiments.allreduce_net import AllReduceNet

pytestmark = pytest.mark.slow

HOSTS = ["h1", "h2", "h3", "h4"]


net = network_fixture("torus,2,2", "torus")


def test_all_four(net: AllReduceNet, monkeypatch: pytest.MonkeyPatch) -> None:
    plans = PlanRecorder(net, monkeypatch).plans
    [o] = run(net, job(HOSTS, 20_000, seed=1))
    tree = plans[o.job.job_id].tree
    # s4 is two hops from the root s1: through s3, which passes h3's and s4's up
    assert tree.root == "s1" and tree.depth == 2 and tree.parent("s4") == "s3"


def test_opposite_corners_with_each_root(net: AllReduceNet,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    plans = PlanRecorder(net, monkeypatch).plans
    for root in ("s2", "s3"):  # two ways round the ring
        [o] = run(net, job(["h1", "h4"], 5_000, seed=2, root=root))
        assert plans[o.job.job_id].tree.root == root


def test_ring_around_the_torus(net: AllReduceNet) -> None:
    run(net, job(HOSTS, 10_000, seed=3), algo="ring")
