"""End to end on a topology file whose links are lossy and slow,
``topologies/examples/two_racks.yaml``: two racks (s1: h1, h2; s2: h3, h4) under a
spine s3, 1% loss on every host link and on the s1 - s3 link (both directions), and
delays on the spine links. The delay and loss become the built-in switch's port
impairments; a job is still right, a ping takes the delays' time, and a run's own loss
compounds with the links'."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tree_helpers import job, network_fixture, run

from experiments.allreduce_net import AllReduceNet

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RACKS = ROOT / "topologies" / "examples" / "two_racks.yaml"


net = network_fixture(str(RACKS), "racks", targets=["builtin"])


def impairments(net: AllReduceNet, switch: str) -> dict[int, str]:
    reply = net.net.get(switch).cli("--json", "impair", "show")
    assert reply.returncode == 0, reply.stderr
    return {p["port"]: p["impairment"] for p in json.loads(reply.stdout)["ports"]}


def test_the_links_impairments_are_on_the_switch_ports(net: AllReduceNet) -> None:
    assert impairments(net, "s1") == {
        1: "loss=0.01,seed=7,direction=both", 2: "loss=0.01,seed=7,direction=both",
        3: "loss=0.01,delay=2.0ms,seed=7,direction=both"}
    assert impairments(net, "s2")[3] == "delay=1.0ms,seed=7,direction=both"
    assert impairments(net, "s3") == {1: "none", 2: "none"}


def test_a_job_over_lossy_links(net: AllReduceNet) -> None:
    [o] = run(net, job(["h1", "h2", "h3", "h4"], 30_000, seed=1))
    assert o.counter("retransmitted") > 0
    s1 = json.loads(net.net.get("s1").cli("--json", "counters").stdout)["ports"]
    assert all(p["drops"].get("impairment_loss", 0) > 0 for p in s1), s1


def test_a_ping_takes_the_links_delays(net: AllReduceNet) -> None:
    out = net.net.get("h1").cmd("ping -c 3 -i 0.2 -W 2 10.0.0.3")
    rtts = [float(x) for x in re.findall(r"time=([0-9.]+) ms", out)]
    assert rtts, out
    assert min(rtts) >= 2 * (2 + 1), out  # s1 - s3 and s3 - s2, both ways


def test_a_runs_loss_compounds_with_the_links(net: AllReduceNet) -> None:
    try:
        net.impair("loss=0.02,direction=both")
        assert impairments(net, "s1")[3] == "loss=0.0298,delay=2.0ms,seed=7,direction=both"
        assert impairments(net, "s3")[1] == "loss=0.02,seed=7,direction=both"
    finally:
        net.impair("none")
    assert impairments(net, "s1")[3] == "loss=0.01,delay=2.0ms,seed=7,direction=both"


def test_bmv2_refuses_link_impairments(tmp_path: Path) -> None:
    from experiments.allreduce_net import need_root, target_missing
    from experiments.options import RunError

    why = need_root() or target_missing("bmv2")
    if why:
        pytest.skip(why)
    with pytest.raises(RunError, match="target bmv2: the topology's links have delays or "
                                       "losses, which need the built-in switch"):
        AllReduceNet(str(RACKS), tmp_path, target="bmv2").start()
