"""A Mininet network for tests: any topology (a spec such as ``leafspine,2,2,2`` or a
topology file) around ``ina switch`` or BMv2, with the project's controller, the IPv4
routes, static ARP, and in-network jobs run and checked.

    with test_network("star,3") as net:
        assert net.pingall() == 0
        outcome = net.allreduce(size=10_000)          # every host a worker, checked
        net.host("h1").cmd("ping -c1 10.0.0.2")

The ``ina_network`` fixture of the pytest plugin (``ina.pytest_plugin``) makes these.
One Mininet network runs on a machine at a time (``topologies.netutil.mininet_lock``):
a second one waits for the first to end; a second one asked for in the same process
while the first runs is an error, since it would wait for ever. Needs root.
"""

from __future__ import annotations

import contextlib
import itertools
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

_running: list[str] = []  # the spec of this process's running network, if any


class NetworkError(Exception):
    """The network cannot start here, or a job failed; the message says why."""


@dataclass
class TestNetwork:
    """A running network (see the module docstring); ``allreduce_net`` is the
    ``experiments.allreduce_net.AllReduceNet`` underneath (``.net`` is Mininet's,
    ``.ctl`` the controller)."""

    __test__ = False  # not a test class, for pytest

    allreduce_net: Any
    _job_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def hosts(self) -> list[str]:
        return list(self.allreduce_net.hosts)

    @property
    def mininet(self) -> Any:
        return self.allreduce_net.net

    @property
    def ctl(self) -> Any:
        return self.allreduce_net.ctl

    def host(self, name: str) -> Any:
        return self.mininet.get(name)

    def pingall(self, timeout: str = "2") -> float:
        """Every host pings every other once; the percentage of pings lost."""
        return float(self.mininet.pingAll(timeout=timeout))

    def allreduce(self, workers: Sequence[str] | None = None, size: int = 10_000,
                  algo: str = "ina", **job: Any) -> Any:
        """All-reduce a generated float32 tensor of ``size`` values on ``workers``
        (default: every host) with ``algo`` (``ina``: in the switches; ``ring``,
        ``ps``, ...: host-based); ``job`` sets other ``JobSpec`` fields (``k``,
        ``window``, ``root``, ``dist``, ``seed``). Fails unless every worker succeeded,
        the result passed its check against the exact sum and every worker holds the
        same bits; returns the ``experiments.jobs.JobOutcome``."""
        from experiments.jobs import run_jobs
        from experiments.jobspec import JobSpec

        net = self.allreduce_net
        spec = JobSpec(next(self._job_ids), tuple(workers or self.hosts), size,
                       **{"k": net.k, **job})
        outcome = run_jobs(net, [spec], net.work_dir / "agents", algo)[0]
        if not outcome.ok:
            raise NetworkError(f"{algo} job on {', '.join(spec.workers)} failed: "
                               f"{'; '.join(outcome.errors)}")
        if outcome.check is None or not outcome.check.ok:
            raise NetworkError(f"{algo} job: the results fail their check: {outcome.check}")
        first = outcome.outputs[0].view(np.uint32)
        if not all(np.array_equal(first, x.view(np.uint32)) for x in outcome.outputs[1:]):
            raise NetworkError(f"{algo} job: the workers' results differ")
        return outcome


@contextlib.contextmanager
def test_network(topo: str = "star,3", target: str = "builtin", k: int = 64,
                 bw: float | None = None, ecmp: bool = True,
                 work_dir: Path | None = None) -> Iterator[TestNetwork]:
    """Start the network (see the module docstring); torn down on exit."""
    from experiments.allreduce_net import AllReduceNet, need_root, target_missing
    from experiments.options import RunError

    why = need_root() or target_missing(target)
    if why:
        raise NetworkError(why)
    if _running:
        raise NetworkError(f"a Mininet network ({_running[0]}) is running in this process "
                           "already, and only one runs at a time: stop it first")
    with contextlib.ExitStack() as stack:
        work = work_dir or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="ina-test-net-")))
        net = AllReduceNet(topo, work, target=target, bw=bw, k=k, ecmp=ecmp)
        _running.append(topo)
        stack.callback(_running.clear)
        try:
            stack.enter_context(net)
        except RunError as e:
            raise NetworkError(str(e)) from None
        yield TestNetwork(net)


test_network.__test__ = False  # type: ignore[attr-defined]
