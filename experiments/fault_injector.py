"""Doing faults to a running network (``experiments.faults`` says what they are).

``FaultInjector(net, faults).start(t0)`` applies each fault at ``t0`` + its time, from
a thread of its own per fault (a switch that restarts takes seconds to answer again;
the next fault does not wait for it); ``apply(fault)`` does one now (the ``fault``
command at the ``mininet>`` prompt). What happens, on both switch targets:

- a link goes down (up) as both of its interfaces do: ``ip link set dev IF down``
  (``up``) on each end, in the nodes' namespaces. BMv2 stops receiving on all its ports
  when one of its interfaces goes down (``topologies.kernel_impair``), so there a link
  between two switches is cut by dropping every frame either end sends (nftables), and
  a host's link goes down at the host's end only (the switch's end loses its carrier).
  A host whose link comes back up gets its static ARP entries again (the kernel
  flushes them when the interface goes down);
- a switch goes down as its process is killed (SIGKILL: no goodbye to the
  controller), and up as a fresh process starts on the same ports with no program,
  tables or registers; a restart is both;
- the controller goes down as ``AllReduceNet.kill_controller`` ends it, and up as a new
  one takes over (``start_controller``);
- a host goes down as its link does, and its agent (if one runs) is killed.

Every application is recorded (``records``): the fault, when it started and ended
(the clock's time), and the error if it could not be done.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from controller.routes import compute_arp
from experiments.allreduce_net import AllReduceNet
from experiments.faults import Fault
from topologies.kernel_impair import KernelImpairError, cut_interface


@dataclass
class Injection:
    fault: Fault
    started: float | None = None
    ended: float | None = None
    error: str | None = None


class FaultInjector:
    def __init__(self, net: AllReduceNet, faults: Sequence[Fault],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.net = net
        self.clock = clock
        self.records = [Injection(f) for f in faults]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._cut: set[str] = set()  # switch interfaces cut by nftables

    def start(self, t0: float) -> FaultInjector:
        """Apply every fault at ``t0`` + its time."""
        for record in self.records:
            t = threading.Thread(target=self._at, args=(record, t0), daemon=True,
                                 name=f"fault {record.fault.text}")
            t.start()
            self._threads.append(t)
        return self

    def _at(self, record: Injection, t0: float) -> None:
        delay = t0 + (record.fault.at or 0.0) - self.clock()
        if self._stop.wait(max(delay, 0.0)):
            return
        self._apply(record)

    def stop(self, timeout: float = 60.0) -> None:
        """No more faults; waits for those under way, and restores the links it cut
        (``topologies.kernel_impair``: a cut outlives the network)."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout)
        for intf in sorted(self._cut):
            with contextlib.suppress(KernelImpairError):
                cut_interface(intf, False)
        self._cut.clear()

    def apply(self, fault: Fault) -> Injection:
        record = Injection(fault)
        self.records.append(record)
        self._apply(record)
        return record

    def _apply(self, record: Injection) -> None:
        f = record.fault
        record.started = self.clock()
        try:
            if f.kind == "link":
                self._link(f.target[0], f.target[1], f.action)
            elif f.kind == "switch":
                if f.action in ("down", "restart"):
                    self._switch_down(f.target[0])
                if f.action in ("up", "restart"):
                    self._switch_up(f.target[0])
            elif f.kind == "controller":
                if f.action in ("down", "restart"):
                    self.net.kill_controller()
                if f.action in ("up", "restart"):
                    self.net.start_controller()
            elif f.kind == "host":
                self._host_down(f.target[0])
        except Exception as e:  # noqa: BLE001 - recorded for the run's record
            record.error = f"{type(e).__name__}: {e}"
        record.ended = self.clock()

    # ----------------------------------------------------------------- doing

    def _links(self, a: str, b: str) -> list[Any]:
        mn = self.net.net
        found = mn.linksBetween(mn.get(a), mn.get(b))
        if not found:
            raise ValueError(f"no link between {a} and {b}")
        return list(found)

    def _link(self, a: str, b: str, state: str) -> None:
        switches = set(self.net.ctl_topology.switches)
        for link in self._links(a, b):
            ends = [link.intf1, link.intf2]
            on_switch = [i for i in ends if i.node.name in switches]
            if self.net.target == "bmv2" and len(on_switch) == 2:
                for intf in ends:
                    cut_interface(intf.name, state == "down")
                    (self._cut.add if state == "down" else self._cut.discard)(intf.name)
                continue
            if self.net.target == "bmv2":
                ends = [i for i in ends if i not in on_switch]
            for intf in ends:
                out = intf.node.cmd(f"ip link set dev {intf.name} {state} 2>&1")
                if out.strip():
                    raise RuntimeError(f"ip link set dev {intf.name} {state}: {out.strip()}")
            if state == "up":
                for intf in ends:
                    if intf.node.name not in switches:
                        self._arp(intf.node.name)

    def _arp(self, host: str) -> None:
        node = self.net.net.get(host)
        for entry in compute_arp(self.net.ctl_topology)[host]:
            out = node.cmd(" ".join(entry.command()) + " 2>&1")
            if out.strip():
                raise RuntimeError(f"host {host}: {' '.join(entry.command())}: {out.strip()}")

    def _switch_down(self, name: str) -> None:
        sw = self.net.net.get(name)
        proc = sw.process
        if proc is None or proc.poll() is not None:
            raise RuntimeError(f"switch {name} is not running")
        proc.kill()
        proc.wait()

    def _switch_up(self, name: str) -> None:
        self.net.start_switch(name)

    def _host_down(self, name: str) -> None:
        proc = self.net.agent_procs.get(name)
        if proc is not None and proc.poll() is None:
            proc.kill()
        host = self.net.net.get(name)
        for intf in host.intfList():
            if intf.link is not None:
                a, b = intf.link.intf1.node.name, intf.link.intf2.node.name
                self._link(a, b, "down")
