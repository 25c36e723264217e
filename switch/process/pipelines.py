"""Several pipelines of one switch (``ina switch --pipelines N``), as the main process
sees them.

A program that annotates a header field ``@pipeline_key`` (``switch.v1model.partition``)
promises that packets that share state share that field's value. The switch then runs
N pipelines: this process is pipeline 0 (the P4Runtime server, the control socket and
the packets of other protocols), and pipelines 1..N-1 are processes of their own
(``pipeline_worker``), each with its own copy of the program's state, as a hardware
switch's pipes have their own registers. Each port's frames are spread over the
pipelines by the kernel (a PACKET_FANOUT group per interface, ``switch.ports.fanout``):
a frame goes to the pipeline its key picks, so the pipelines never touch one another's
register elements.

P4Runtime still sees one switch (``PipelineGroup``): every change (table entries,
multicast groups, action profiles, register and counter writes, meters, value sets)
goes to every pipeline, in the same order, so they hold the same tables. A register
element is read from the pipeline that owns it: the one whose copy the data plane
changed since the controller last wrote it (the others still hold what the controller
wrote, or 0). A counter reads as the sum of the pipelines' counts. Meters meter each
pipeline's packets apart, as a hardware switch's per-pipe meters do. PacketOuts go
through pipeline 0. ``ina switch-cli`` sets impairments on every pipeline's ports and
counts their frames together.
"""

from __future__ import annotations

import logging
import pickle
import socket
import struct
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from switch.ports import PortSet
from switch.ports.counters import PortCounters
from switch.process.dataplane import DataplaneStats

log = logging.getLogger("switch.process")

#: V1Switch methods that change its state: every pipeline runs them, in order
CHANGES = (
    "table_add", "table_modify", "table_delete", "table_clear", "table_set_default",
    "table_reset_default", "profile_member_add", "profile_member_modify",
    "profile_member_delete", "profile_group_add", "profile_group_modify",
    "profile_group_delete", "mc_group_set", "mc_group_delete", "clone_session_set",
    "clone_session_delete", "meter_set_rates", "direct_meter_set_rates", "value_set_set",
)


class PipelineError(Exception):
    """A pipeline process failed or disagreed; the message says which and how."""


# ----------------------------------------------------------------------- messages


def send_message(sock: socket.socket, obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(struct.pack("!I", len(data)) + data)


def _read(sock: socket.socket, n: int) -> bytes:
    parts = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise EOFError("the other end closed the connection")
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def receive_message(sock: socket.socket) -> Any:
    (n,) = struct.unpack("!I", _read(sock, 4))
    return pickle.loads(_read(sock, n))  # noqa: S301 - our own processes


# ------------------------------------------------------------------------ workers


@dataclass
class Worker:
    """One pipeline process and the socket to it (one request at a time: P4Runtime's
    threads and the control socket's share it)."""

    index: int
    proc: subprocess.Popen[bytes]
    sock: socket.socket
    lock: threading.Lock = field(default_factory=threading.Lock)

    def request(self, message: tuple[Any, ...]) -> Any:
        """Send a request and wait for its answer (the answer's exception is raised)."""
        try:
            with self.lock:
                send_message(self.sock, message)
                kind, value = receive_message(self.sock)
        except (OSError, EOFError) as e:
            raise PipelineError(f"pipeline {self.index} (process {self.proc.pid}) is gone: "
                                f"{e}") from None
        if kind == "error":
            raise value
        return value


@dataclass
class Pipelines:
    """Pipelines 1..N-1 of a switch (pipeline 0 is the caller)."""

    workers: list[Worker] = field(default_factory=list)

    @classmethod
    def start(cls, count: int, setup: dict[str, Any]) -> Pipelines:
        """Start ``count`` pipeline processes and wait until each serves its ports
        (``setup``: what ``pipeline_worker`` needs, see there); PipelineError with the
        first failure, after stopping the others."""
        group = cls()
        try:
            for index in range(1, count + 1):
                mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                proc = subprocess.Popen(
                    [sys.executable, "-m", "switch.process.pipeline_worker",
                     str(theirs.fileno())], pass_fds=(theirs.fileno(),))
                theirs.close()
                worker = Worker(index, proc, mine)
                group.workers.append(worker)
                send_message(mine, dict(setup, index=index))
            for w in group.workers:
                w.request(("ready",))
        except BaseException:
            group.stop()
            raise
        return group

    def each(self, message: tuple[Any, ...]) -> list[Any]:
        return [w.request(message) for w in self.workers]

    def ended(self) -> Worker | None:
        """A pipeline whose process has ended, if any."""
        return next((w for w in self.workers if w.proc.poll() is not None), None)

    def stop(self) -> None:
        for w in self.workers:
            try:
                send_message(w.sock, ("stop",))
            except OSError:
                pass
            w.sock.close()
        for w in self.workers:
            try:
                w.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()
        self.workers = []


# ---------------------------------------------------------------- P4Runtime's view


class PipelineGroup:
    """The switch P4Runtime sees when it runs several pipelines (see the module's
    docstring): ``local`` is pipeline 0 (a V1Switch); ``pipelines`` the others."""

    def __init__(self, local: Any, pipelines: Pipelines):
        self.local = local
        self.pipelines = pipelines
        # (register, index) -> the value the controller wrote last (else 0)
        self._written: dict[tuple[str, int], int] = {}
        self._ambiguous_logged: set[str] = set()
        for name in CHANGES:
            setattr(self, name, self._everywhere(name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.local, name)  # packets, reads of the tables' contents

    def _everywhere(self, name: str) -> Callable[..., Any]:
        method = getattr(self.local, name)

        def change(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            for other in self.pipelines.each(("switch", name, args, kwargs)):
                if other != result:
                    raise PipelineError(f"{name}: pipeline 0 gave {result!r}, another "
                                        f"{other!r}")
            return result

        change.__name__ = name
        return change

    # registers: read from the owner, written everywhere

    def register_read(self, name: str, index: int) -> int:
        values = [self.local.register_read(name, index),
                  *self.pipelines.each(("switch", "register_read", (name, index), {}))]
        written = self._written.get((self.local.register_fqn(name), index), 0)
        changed = {v for v in values if v != written}
        if not changed:
            return written
        if len(changed) > 1 and name not in self._ambiguous_logged:
            self._ambiguous_logged.add(name)
            log.warning("register %s[%d]: several pipelines changed it (%s); the program's "
                        "@pipeline_key does not partition it", name, index,
                        ", ".join(str(v) for v in sorted(changed)))
        return next(v for v in values if v != written)

    def register_write(self, name: str, index: int, value: int) -> None:
        self.local.register_write(name, index, value)
        self.pipelines.each(("switch", "register_write", (name, index, value), {}))
        self._written[(self.local.register_fqn(name), index)] = \
            self.local.register_read(name, index)

    def register_reset(self, name: str) -> None:
        self.local.register_reset(name)
        self.pipelines.each(("switch", "register_reset", (name,), {}))
        full = self.local.register_fqn(name)
        for key in [k for k in self._written if k[0] == full]:
            del self._written[key]

    # counters: each pipeline counts its packets; the switch's count is their sum

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        return _sum([self.local.counter_read(name, index),
                     *self.pipelines.each(("switch", "counter_read", (name, index), {}))])

    def counter_write(self, name: str, index: int, packets: int, nbytes: int) -> None:
        self.local.counter_write(name, index, packets, nbytes)
        self.pipelines.each(("switch", "counter_write", (name, index, 0, 0), {}))

    def counter_reset(self, name: str) -> None:
        self.local.counter_reset(name)
        self.pipelines.each(("switch", "counter_reset", (name,), {}))

    def direct_counter_read(self, table: str, handle: int) -> tuple[int, int]:
        return _sum([self.local.direct_counter_read(table, handle), *self.pipelines.each(
            ("switch", "direct_counter_read", (table, handle), {}))])

    def direct_counter_write(self, table: str, handle: int, packets: int, nbytes: int) -> None:
        self.local.direct_counter_write(table, handle, packets, nbytes)
        self.pipelines.each(("switch", "direct_counter_write", (table, handle, 0, 0), {}))


def _sum(pairs: list[tuple[int, int]]) -> tuple[int, int]:
    return sum(p for p, _ in pairs), sum(b for _, b in pairs)


# ------------------------------------------------------------ ina switch-cli's view


class GroupPorts:
    """The ports as ``ina switch-cli`` sees them: an impairment goes to every
    pipeline's port, and a port's counters are the sum over the pipelines."""

    def __init__(self, local: PortSet, pipelines: Pipelines):
        self.local = local
        self.pipelines = pipelines

    @property
    def ports(self) -> list[tuple[int, str]]:
        return self.local.ports

    def __iter__(self) -> Iterator[int]:
        return iter(self.local)

    def __contains__(self, port: object) -> bool:
        return port in self.local

    def impairment(self, port: int) -> Any:
        return self.local.impairment(port)

    def set_impairment(self, port: int | None, config: Any) -> None:
        self.local.set_impairment(port, config)
        self.pipelines.each(("ports", "set_impairment", (port, config), {}))

    def counters(self, port: int) -> PortCounters:
        rows = [self.local.counters(port),
                *self.pipelines.each(("ports", "counters", (port,), {}))]
        drops: Counter[str] = Counter()
        impaired: Counter[str] = Counter()
        errors: Counter[str] = Counter()
        for r in rows:
            drops.update(r.drops)
            impaired.update(r.impaired)
            errors.update(r.errors)
        return PortCounters(sum(r.rx_packets for r in rows), sum(r.rx_bytes for r in rows),
                            sum(r.tx_packets for r in rows), sum(r.tx_bytes for r in rows),
                            dict(drops), dict(impaired), dict(errors))


class GroupStats:
    """The data path's counters summed over the pipelines (``Dataplane.stats``)."""

    def __init__(self, local: Any, pipelines: Pipelines):
        self.local = local
        self.pipelines = pipelines

    @property
    def stats(self) -> DataplaneStats:
        total = DataplaneStats()
        for s in [self.local.stats, *self.pipelines.each(("stats",))]:
            for port, drops in s.ingress_drops.items():
                total.ingress_drops[port].update(drops)
            total.no_port.update(s.no_port)
            total.packet_in += s.packet_in
            total.packet_out += s.packet_out
        return total
