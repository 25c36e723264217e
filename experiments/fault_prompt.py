"""The ``fault`` command at the ``mininet>`` prompt of ``ina net`` and ``ina run --cli``.

    mininet> fault link s1-s3 down
    mininet> fault switch s2 restart at 2s
    mininet> fault

A spec (``experiments.faults``, without ``at``: now; with ``at TIME``: that long from
now) is checked against the topology and done by ``experiments.fault_injector``;
``fault`` alone prints what the controller saw and did since the session started
(detections, recoveries, take-overs) and the faults done, with their times.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from mininet.cli import CLI

from experiments.allreduce_net import AllReduceNet
from experiments.fault_injector import FaultInjector
from experiments.faults import FaultError, check_faults, parse_fault


class FaultCLI(CLI):  # type: ignore[misc]
    """Mininet's CLI with the ``fault`` command."""

    def __init__(self, net: AllReduceNet, **kw: Any) -> None:
        self.ina = net
        self.injector = FaultInjector(net, [])
        self.t0 = time.monotonic()
        super().__init__(net.net, **kw)

    def do_fault(self, line: str) -> None:
        """Do a fault now (or at TIME from now): fault link s1-s3 down|up,
        fault switch s2 down|up|restart, fault controller down|up|restart,
        fault host h3 down [at TIME]. Alone: what the controller saw and did."""
        if not line.strip():
            self.stdout.write(self.history() + "\n")
            return
        try:
            fault = parse_fault(line, need_time=False)
            topo = self.ina.ctl_topology
            links = [(link.a.node, link.b.node) for link in topo.links]
            problem = check_faults([fault], sorted(topo.hosts), sorted(topo.switches), links,
                                   float("inf"), sequence=False)
            if problem:
                raise FaultError(problem)
        except FaultError as e:
            self.stdout.write(f"*** {e}\n")
            return
        if fault.at:
            threading.Thread(target=self._later, args=(fault,), daemon=True).start()
            self.stdout.write(f"{fault.subject} {fault.action} in {fault.at:g} s\n")
            return
        record = self.injector.apply(fault)
        self.stdout.write(self._done(record) + "\n")

    def _later(self, fault: Any) -> None:
        time.sleep(fault.at)
        self.injector.apply(fault)

    def _done(self, record: Any) -> str:
        took = (record.ended or 0.0) - (record.started or 0.0)
        if record.error:
            return f"*** {record.fault.subject} {record.fault.action}: {record.error}"
        return (f"{record.fault.subject} {record.fault.action} at "
                f"{(record.started or 0.0) - self.t0:.3f} s (took {took:.3f} s); "
                "'fault' shows what the controller saw")

    def history(self) -> str:
        """The faults done and the controllers' events since the session started."""
        lines = [f"{(r.started or 0.0) - self.t0:8.3f} s  fault {r.fault.subject} "
                 f"{r.fault.action}" + (f": {r.error}" if r.error else "")
                 for r in self.injector.records]
        for sup in self.ina.supervisors:
            for e in sup.events:
                if e["event"] in ("hint",):
                    continue
                detail = e.get("detail") or e.get("by") or ""
                lines.append(f"{e['t'] - self.t0:8.3f} s  {e['event']} {e['subject']}"
                             + (f": {detail}" if detail else ""))
        lines.sort(key=lambda line: float(line.split()[0]))
        return "\n".join(lines) if lines else "no faults yet, and the controller saw nothing"
