"""Helpers for the multi-switch end-to-end tests: run checked jobs, read the switches'
port counters, and measure what a job put on every link of its tree."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from controller.jobs import Job
from experiments.allreduce_net import AllReduceNet, need_root, target_missing
from experiments.jobs import JobOutcome, run_jobs
from experiments.jobspec import JobSpec
from experiments.run_allreduce import counter_delta, switch_counters

K = 64
FRAME = 54 + 4 * K  # Ethernet, IPv4, UDP, the aggregation header and K values
_job_ids = itertools.count(1)


@contextmanager
def started(spec: str, target: str, work: Path) -> Iterator[AllReduceNet]:
    why = need_root() or target_missing(target)
    if why:
        pytest.skip(why)
    with AllReduceNet(spec, work, target=target, k=K, seed=7) as net:
        yield net


def network_fixture(spec: str, name: str,
                    targets: Sequence[str] = ("builtin", "bmv2")) -> Any:
    """A module's ``net`` fixture: the network ``spec`` (``started``) on each of
    ``targets`` in turn, its files in a temporary directory named ``name-TARGET``."""

    @pytest.fixture(scope="module", params=list(targets))
    def net(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[AllReduceNet]:
        with started(spec, request.param,
                     tmp_path_factory.mktemp(f"{name}-{request.param}")) as running:
            yield running

    return net


def job(workers: list[str], size: int, **kw: Any) -> JobSpec:
    return JobSpec(next(_job_ids), tuple(workers), size, k=K, **kw)


def run(net: AllReduceNet, *jobs: JobSpec, algo: str = "ina") -> list[JobOutcome]:
    """Run the jobs at once; each must succeed, pass its check and end with the same
    bits at every worker."""
    out = run_jobs(net, list(jobs), net.work_dir / "agents", algo)
    for o in out:
        assert o.ok, (o.job, o.errors)
        assert o.check is not None and o.check.ok, o.check
        first = o.outputs[0].view(np.uint32)
        assert all(np.array_equal(first, x.view(np.uint32)) for x in o.outputs[1:])
    return out


class PlanRecorder:
    """Keeps the plan of every job the network creates (``run_jobs`` deletes them)."""

    def __init__(self, net: AllReduceNet, monkeypatch: pytest.MonkeyPatch) -> None:
        self.plans: dict[int, Job] = {}
        create = net.create_job

        def recording(job_id: int, workers: list[str], slots: int,
                      root: str | None = None, shrink: bool = False) -> Job:
            self.plans[job_id] = create(job_id, workers, slots, root, shrink=shrink)
            return self.plans[job_id]

        monkeypatch.setattr(net, "create_job", recording)


@dataclass(frozen=True)
class LinkUse:
    """What one direction of a link carried: frames and bytes sent."""

    packets: int
    bytes: int


def measure(net: AllReduceNet, jobs: list[JobSpec], algo: str = "ina"
            ) -> tuple[list[JobOutcome], dict[tuple[str, int], LinkUse]]:
    """Run the jobs; what every switch port sent meanwhile, by (switch, port)."""
    before = switch_counters(net)
    outcomes = run(net, *jobs, algo=algo)
    delta = counter_delta(before, switch_counters(net))
    sent = {(name, p["port"]): LinkUse(p["tx_packets"], p["tx_bytes"])
            for name, reply in delta.items() for p in reply["ports"]}
    return outcomes, sent


def tree_links(plan: Job) -> list[tuple[str, int, str, int]]:
    """(child switch, its parent port, parent switch, the parent's port) for every
    link between two switches of the job's tree."""
    out = []
    for name, node in plan.tree.switches.items():
        for child in node.children:
            if child.node in plan.tree.switches:
                parent_port = plan.tree.switches[child.node].parent_port
                assert parent_port is not None
                out.append((child.node, parent_port, name, child.port))
    return out


def workers_below(plan: Job, switch: str) -> int:
    node = plan.tree.switches[switch]
    return sum(workers_below(plan, c.node) if c.node in plan.tree.switches else 1
               for c in node.children)


def check_one_stream_per_link(plan: Job, sent: dict[tuple[str, int], LinkUse],
                              chunks: int, window: int) -> list[tuple[str, int, int]]:
    """On every link between two switches of the tree, each direction carried one
    chunk stream: the job's chunks plus the first window's exponent round (a few more
    if a retransmission timer fired), every frame a full chunk frame, whatever the
    number of workers below. Returns (child, workers below, frames up) per link."""
    stream = chunks + window
    seen = []
    for child, up_port, parent, down_port in tree_links(plan):
        for where, use in (("up", sent[child, up_port]), ("down", sent[parent, down_port])):
            assert stream <= use.packets <= stream * 1.05, (child, parent, where, use, stream)
            assert use.bytes == use.packets * FRAME, (child, parent, where, use)
        seen.append((child, workers_below(plan, child), sent[child, up_port].packets))
    return seen
