"""End to end: the host-based all-reduce algorithms on a Mininet star of 4 hosts around
a switch running ``p4/aggregation.p4`` (the built-in switch, and BMv2 when it is
installed), their TCP traffic forwarded by its IPv4 routes
(``experiments.allreduce_net``, one network per target for the module).

Every job is checked (bit-identical results within the float32 summation bound), the
bytes each agent reports are held to the algorithm's model, and the switch's port
counters (on BMv2: its interfaces' kernel counters) to those bytes plus TCP/IP framing.
With 1% of the frames lost on every switch port (on BMv2: in the kernel), TCP
recovers: the jobs complete, correct, after retransmissions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from experiments.allreduce_net import AllReduceNet, need_root, target_missing
from experiments.jobs import JobOutcome, run_jobs
from experiments.jobspec import JobSpec
from hosts.baselines.collective import Settings
from hosts.baselines.registry import COLLECTIVES, get_collective

pytestmark = pytest.mark.slow

SIZE = 100_003
NAMES = list(COLLECTIVES)
_job_ids = iter(range(1, 1 << 16))


@pytest.fixture(scope="module", params=["builtin", "bmv2"])
def net(request: pytest.FixtureRequest,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[AllReduceNet]:
    why = need_root() or target_missing(request.param)
    if why:
        pytest.skip(why)
    with AllReduceNet("star,4", tmp_path_factory.mktemp(f"baselines-{request.param}"),
                      target=request.param, seed=3) as running:
        yield running


def port_counters(net: AllReduceNet) -> dict[int, dict[str, Any]]:
    """Per switch port: bytes received (``rx_bytes``) and, on the built-in switch, the
    frames its impairments dropped (``drops``)."""
    [switch] = net.switches()
    if net.target != "builtin":
        return {port: {"rx_bytes": int(Path(f"/sys/class/net/{intf.name}/statistics/"
                                            "rx_bytes").read_text())}
                for port, intf in switch.intfs.items() if intf.name != "lo"}
    reply = switch.cli("--json", "counters")
    assert reply.returncode == 0, reply.stderr
    return {p["port"]: p for p in json.loads(reply.stdout)["ports"]}


def run(net: AllReduceNet, algo: str, seed: int) -> JobOutcome:
    job = JobSpec(next(_job_ids), tuple(net.hosts), SIZE, seed=seed)
    [outcome] = run_jobs(net, [job], net.work_dir / "agents", algo=algo)
    assert outcome.ok, outcome.errors
    assert outcome.check is not None and outcome.check.ok, outcome.check
    return outcome


@pytest.mark.parametrize("algo", NAMES)
def test_each_algorithm_on_a_star_of_four(net: AllReduceNet, algo: str) -> None:
    net.impair("none")
    before = port_counters(net)
    outcome = run(net, algo, seed=1)
    after = port_counters(net)
    for rank, stats in enumerate(outcome.stats):
        model = get_collective(algo).volume(4, SIZE, rank, Settings())
        assert (stats["bytes_sent"], stats["bytes_received"]) == (4 * model.sent,
                                                                  4 * model.received)
        assert stats["algo"] == algo and stats["seconds"] > 0
        # Host h(rank+1) is on port rank+1: what the switch got from it is the payload
        # plus the TCP/IP framing of every segment and the ACKs of what it received,
        # the connection set-up and the barrier: 66 bytes a segment of 1448 (4.6%),
        # and one ACK for every other segment it received (another 2.3%), and the
        # segments TCP sent again (BMv2's queues drop some at this rate).
        port = rank + 1
        frames = after[port]["rx_bytes"] - before[port]["rx_bytes"]
        sent = stats["bytes_sent"]
        resent = 1514 * stats["counters"]["tcp_retransmits"]
        assert 1.03 * sent < frames < 1.12 * sent + resent + 20_000, (rank, frames, sent)


@pytest.mark.parametrize("algo", NAMES)
def test_tcp_recovers_from_loss(net: AllReduceNet, algo: str) -> None:
    net.impair("loss=0.01,direction=both")
    try:
        before = port_counters(net)
        outcome = run(net, algo, seed=2)
        after = port_counters(net)
    finally:
        net.impair("none")
    if net.target == "builtin":
        lost = sum(after[p]["drops"].get("impairment_loss", 0)
                   - before[p]["drops"].get("impairment_loss", 0) for p in after)
        assert lost > 0
    assert sum(s["counters"]["tcp_retransmits"] for s in outcome.stats) > 0


def test_the_parameter_server_on_another_host_with_small_segments(net: AllReduceNet) -> None:
    """``JobSpec.ps_host`` and ``segment`` (``ina run --ps-host h3 --segment 1000``)
    reach the agents: h3 (rank 2) sums and answers, in messages of 1000 values."""
    net.impair("none")
    job = JobSpec(next(_job_ids), tuple(net.hosts), SIZE, seed=4, ps_host="h3",
                  segment=1000)
    [outcome] = run_jobs(net, [job], net.work_dir / "agents", algo="ps")
    assert outcome.ok, outcome.errors
    assert outcome.check is not None and outcome.check.ok, outcome.check
    settings = Settings(ps_host=2, segment=1000)
    for rank, stats in enumerate(outcome.stats):
        model = get_collective("ps").volume(4, SIZE, rank, settings)
        assert (stats["bytes_sent"], stats["bytes_received"]) == (4 * model.sent,
                                                                  4 * model.received)
        assert stats["settings"]["segment"] == 1000
    assert outcome.stats[2]["bytes_sent"] == 3 * 4 * SIZE
