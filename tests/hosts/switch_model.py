"""A pure-Python model of the aggregation switch (design doc + packet contract), and
a discrete-event network that runs worker state machines against it.

The model works on UDP payloads. Its state follows ``p4/aggregation.p4``: per cell
(slot, version) the chunk it holds, a bitmap of contributors, a count (complete when
it equals the fan-in, kept until the cell's next first writer), the max exponent and K
int32 lanes (a contribution of an earlier chunk than the cell's, or than its sender's
in the other version, is stale and dropped: a link that reorders delivers some); per job
(region) the cell completed last, which every multicast RESULT names; and the NACK of
a contribution whose named cell lacks its sender's bit (see ``hosts.protocol``).
``nack=False`` models a switch that neither NACKs nor names cells: recovery by the
workers' timers alone.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from hosts.frame import FRAME_OVERHEAD
from hosts.protocol import AllReduceRun
from hosts.wire import (
    FLAG_NACK,
    FLAG_NAMED,
    FLAG_NAMED_VERSION,
    FLAG_RESULT,
    HEADER,
    HEADER_SIZE,
    MAX_NAMED_SLOT,
    NAMING_FLAGS,
)

Out = list[tuple[int, bytes]]


@dataclass(frozen=True)
class ChildRow:
    """One ``ina_job`` entry: what the switch knows about (job, ingress port)."""

    child_index: int
    fan_in: int
    is_root: bool
    parent_port: int
    group: tuple[int, ...]  # the job's multicast replicas: one per child port
    region_base: int = 0


@dataclass
class Cell:
    bitmap: int = 0
    count: int = 0
    exponent: int = 0
    values: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    chunk: int | None = None  # the round (the chunk) the cell holds; None: never written


def later(a: int, b: int) -> bool:
    """Whether chunk ``a`` comes after ``b`` (serial numbers modulo 2**32)."""
    return 0 < (a - b) % (1 << 32) < (1 << 31)


class SwitchModel:
    def __init__(self, k: int, slots: int = 256, nack: bool = True) -> None:
        self.k = k
        self.slots = slots
        self.nack = nack
        self.rows: dict[tuple[int, int], ChildRow] = {}
        self.cells: dict[int, Cell] = {}
        self.last_done: dict[int, tuple[int, int]] = {}  # region base -> slot, version
        self.processed = 0
        self.nacks = 0

    def add_row(self, job: int, port: int, row: ChildRow) -> None:
        self.rows[(job, port)] = row

    def process(self, port: int, payload: bytes) -> Out:
        self.processed += 1
        if len(payload) != HEADER_SIZE + 4 * self.k:
            return []
        job, slot, version, flags, exponent, named, chunk = HEADER.unpack_from(payload)
        row = self.rows.get((job, port))
        if row is None or version > 1:
            return []  # isolation
        from_parent = not row.is_root and port == row.parent_port
        if flags & FLAG_RESULT:
            return [(p, payload) for p in row.group] if from_parent else []
        if from_parent or row.child_index >= 32:
            return []
        index = ((row.region_base + slot) << 1) | version
        if index >= self.slots * 2:
            return []
        me = 1 << row.child_index
        missing = False  # the sender's previous transmission (the named cell) is not here
        if self.nack and flags & FLAG_NAMED:
            named_index = ((row.region_base + named) << 1) | int(bool(flags & FLAG_NAMED_VERSION))
            if named_index != index and named_index < self.slots * 2:
                named_cell = self.cells.get(named_index)
                missing = named_cell is None or not named_cell.bitmap & me
        cell = self.cells.setdefault(index, Cell(values=np.zeros(self.k, dtype=np.int32)))
        other = self.cells.get(index ^ 1)
        if (cell.chunk is not None and later(cell.chunk, chunk)) or (
                other is not None and other.chunk is not None and other.bitmap & me
                and later(other.chunk, chunk)):
            return []  # stale: the cell, or its sender, has gone on to a later chunk
        if cell.chunk is None or later(chunk, cell.chunk):
            cell.bitmap, cell.count, cell.chunk = 0, 0, chunk  # a new round
        values = np.frombuffer(payload, dtype=">i4", offset=HEADER_SIZE).astype(np.int32)
        fresh = not cell.bitmap & me
        if fresh:
            if other is not None:
                other.bitmap &= ~me
            if cell.bitmap == 0:
                cell.count, cell.exponent, cell.values = 1, exponent, values
            else:
                cell.count += 1
                cell.exponent = max(cell.exponent, exponent)
                with np.errstate(over="ignore"):
                    cell.values = (cell.values.astype(np.int64) + values).astype(np.int32)
            cell.bitmap |= me
        if cell.count != row.fan_in:  # absorbed, or a retransmission to an open cell
            if not missing:
                return []
            self.nacks += 1
            head = payload[:5] + bytes([flags & ~FLAG_RESULT | FLAG_NACK]) + payload[6:HEADER_SIZE]
            return [(port, head)]
        body = cell.values.astype(">i4").tobytes()
        if not row.is_root:  # upstream as this switch's contribution: no names
            plain = flags & ~(FLAG_NACK | NAMING_FLAGS)
            return [(row.parent_port,
                     HEADER.pack(job, slot, version, plain, cell.exponent, 0, chunk) + body)]
        nacked = (HEADER.pack(job, slot, version, flags | FLAG_RESULT | FLAG_NACK, cell.exponent,
                              named, chunk) + body) if missing else None
        if not fresh:  # the RESULT back to the retransmitter
            if nacked is not None:
                self.nacks += 1
                return [(port, nacked)]
            plain = flags & ~(FLAG_NACK | NAMING_FLAGS) | FLAG_RESULT
            return [(port, HEADER.pack(job, slot, version, plain, cell.exponent, 0, chunk) + body)]
        last = self.last_done.get(row.region_base)
        self.last_done[row.region_base] = (slot, version)
        rflags = flags & ~(FLAG_NACK | NAMING_FLAGS) | FLAG_RESULT
        rnamed = 0
        if self.nack and last is not None and last[0] <= MAX_NAMED_SLOT:
            rflags |= FLAG_NAMED | (FLAG_NAMED_VERSION if last[1] else 0)
            rnamed = last[0]
        result = HEADER.pack(job, slot, version, rflags, cell.exponent, rnamed, chunk) + body
        if nacked is not None:
            self.nacks += 1
        return [(p, nacked if nacked is not None and p == port else result) for p in row.group]


def single_switch(job: int, n: int, k: int, slots: int = 256, base: int = 0,
                  nack: bool = True) -> SwitchModel:
    """One root switch, worker i behind port i + 1."""
    sw = SwitchModel(k, slots, nack)
    group = tuple(range(1, n + 1))
    for i in range(n):
        sw.add_row(job, i + 1, ChildRow(i, n, True, 0, group, base))
    return sw


# ------------------------------------------------------------------- network


@dataclass
class Impairments:
    """Per traversal of a link: loss and duplication probabilities; ``jitter``
    reorders packets going down (switch -> worker or child switch) by delaying each by
    up to that much; with probability ``reorder`` a frame on any link, up or down, is
    held back ``hold`` seconds while the frames behind it go on (as ``ina switch-cli
    impair reorder=P`` does on a port)."""

    loss: float = 0.0
    duplicate: float = 0.0
    jitter: float = 0.0
    reorder: float = 0.0
    hold: float = 300e-6


Endpoint = tuple[str, int]  # ("w", worker) or ("s", switch)


@dataclass
class Network:
    """Workers and switches joined by links, simulated in virtual time.

    Every traversal takes ``latency``; with a ``rate`` (bits/s, 0: unlimited) a link
    also sends one frame (payload + Ethernet/IPv4/UDP framing) at a time, so packets
    queue behind each other as on a shaped Mininet link; with a ``service`` time
    (seconds per packet) a switch handles one packet at a time, as a switch that is
    short of CPU does. Links are named ("up" | "down" | "sw", switch, port)."""

    switches: list[SwitchModel]
    # (switch, port) -> what is behind it; and each worker's (switch, port)
    links: dict[tuple[int, int], tuple[Endpoint, int]]
    impair: Impairments = field(default_factory=Impairments)
    latency: float = 10e-6
    seed: int = 0
    up_ports: set[tuple[int, int]] = field(default_factory=set)  # switch -> parent
    rate: float = 0.0
    service: float = 0.0
    # Drops chosen by a test: (link, payload) -> True to lose the packet there.
    drop: Callable[[tuple[str, int, int], bytes], bool] | None = None
    dropped: int = 0
    duplicated: int = 0
    now: float = 0.0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.heap: list[tuple[float, int, Callable[[float], None]]] = []
        self.seq = 0
        self.fifo: dict[tuple[str, int, int], float] = {}
        self.busy: dict[tuple[str, int, int], float] = {}  # link free again at
        self.uplink: dict[int, tuple[int, int]] = {}
        self.switch_free = [0.0] * len(self.switches)
        for (sw, port), (ep, _) in self.links.items():
            if ep[0] == "w":
                self.uplink[ep[1]] = (sw, port)

    def at(self, t: float, fn: Callable[[float], None]) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, fn))

    def _transmit(self, now: float, key: tuple[str, int, int], down: bool, payload: bytes,
                  deliver: Callable[[float], None]) -> None:
        size = len(payload)
        if self.drop is not None and self.drop(key, payload):
            self.dropped += 1
            return
        copies = 1
        if self.rng.random() < self.impair.duplicate:
            copies = 2
            self.duplicated += 1
        for _ in range(copies):
            sent = now
            if self.rate:
                sent = max(now, self.busy.get(key, 0.0)) + (size + FRAME_OVERHEAD) * 8 / self.rate
                self.busy[key] = sent
            if self.rng.random() < self.impair.loss:
                self.dropped += 1
                continue
            t = sent + self.latency
            if self.impair.reorder and self.rng.random() < self.impair.reorder:
                t += self.impair.hold  # overtaken by what follows
            elif down and self.impair.jitter:
                t += self.rng.random() * self.impair.jitter
            else:
                t = max(t, self.fifo.get(key, 0.0) + 1e-9)
                self.fifo[key] = t
            self.at(t, deliver)

    def worker_send(self, now: float, worker: int, payloads: Sequence[bytes]) -> None:
        sw, port = self.uplink[worker]
        for p in payloads:
            self._transmit(now, ("up", sw, port), False, p,
                           lambda t, p=p: self._at_switch(t, sw, port, p))

    def _at_switch(self, now: float, sw: int, port: int, payload: bytes) -> None:
        if self.service:  # one packet at a time, as the switch's single thread
            done = max(now, self.switch_free[sw]) + self.service
            self.switch_free[sw] = done
            self.at(done, lambda t: self._process(t, sw, port, payload))
        else:
            self._process(now, sw, port, payload)

    def _process(self, now: float, sw: int, port: int, payload: bytes) -> None:
        for out_port, data in self.switches[sw].process(port, payload):
            ep, peer_port = self.links[(sw, out_port)]
            if ep[0] == "w":
                self._transmit(now, ("down", sw, out_port), True, data,
                               lambda t, w=ep[1], d=data: self.on_worker(t, w, d))
            else:
                up = (sw, out_port) in self.up_ports
                self._transmit(now, ("sw", sw, out_port), not up, data,
                               lambda t, s=ep[1], pp=peer_port, d=data:
                               self._at_switch(t, s, pp, d))

    on_worker: Callable[[float, int, bytes], None] = lambda t, w, d: None  # noqa: E731


def run_workers(net: Network, runs: Sequence[AllReduceRun], *,
                time_limit: float = 1e4, gather: float = 0.0) -> float:
    """Run the state machines to completion in virtual time (continuing the
    network's clock); returns how long they took. Packets still in flight stay queued
    and reach the next runs. With ``gather`` a worker handles what arrives within
    that long of a first datagram as one batch, in arrival order (as
    ``hosts.worker.Worker`` does); else each datagram on its own."""
    armed: list[float] = [float("inf")] * len(runs)
    pending: list[list[bytes]] = [[] for _ in runs]

    def arm(i: int) -> None:
        d = runs[i].next_deadline()
        if d is not None and d < armed[i]:
            armed[i] = d
            net.at(d, lambda t, i=i: timer(t, i))

    def timer(t: float, i: int) -> None:
        armed[i] = float("inf")
        net.worker_send(t, i, runs[i].on_timer(t))
        arm(i)

    def handle(t: float, i: int) -> None:
        batch, pending[i] = pending[i], []
        out = runs[i].on_packets(batch, t)
        if gather:  # as the worker's loop: then the timers due
            out += runs[i].on_timer(t)
        net.worker_send(t, i, out)
        arm(i)

    def on_worker(t: float, i: int, data: bytes) -> None:
        pending[i].append(data)
        if not gather:
            handle(t, i)
        elif len(pending[i]) == 1:
            net.at(t + gather, lambda t, i=i: handle(t, i))

    net.on_worker = on_worker
    start = net.now
    for i, r in enumerate(runs):
        net.worker_send(start, i, r.start(start))
        arm(i)
    while net.heap and not all(r.done for r in runs):
        net.now, _, fn = heapq.heappop(net.heap)
        if net.now - start > time_limit:
            raise AssertionError(f"simulation passed {time_limit} s of virtual time")
        fn(net.now)
    return net.now - start


def star(job: int, n: int, k: int, impair: Impairments | None = None, seed: int = 0,
         slots: int = 256, latency: float = 10e-6, rate: float = 0.0, service: float = 0.0,
         nack: bool = True) -> Network:
    sw = single_switch(job, n, k, slots, nack=nack)
    links = {(0, i + 1): (("w", i), 0) for i in range(n)}
    return Network([sw], links, impair or Impairments(), latency=latency, seed=seed,
                   rate=rate, service=service)


def two_level(job: int, leaves: Sequence[int], k: int, impair: Impairments | None = None,
              seed: int = 0) -> Network:
    """A root switch 0 with one leaf switch per entry of ``leaves`` (its worker
    count) behind root port j + 1; the leaf's workers are behind its ports 1.. and
    its parent is on port 100. Workers are numbered leaf by leaf."""
    root = SwitchModel(k)
    switches = [root]
    links: dict[tuple[int, int], tuple[Endpoint, int]] = {}
    rgroup = tuple(range(1, len(leaves) + 1))
    w = 0
    for j, count in enumerate(leaves):
        leaf = SwitchModel(k)
        s = len(switches)
        switches.append(leaf)
        root.add_row(job, j + 1, ChildRow(j, len(leaves), True, 0, rgroup))
        links[(0, j + 1)] = (("s", s), 100)
        links[(s, 100)] = (("s", 0), j + 1)
        group = tuple(range(1, count + 1))
        leaf.add_row(job, 100, ChildRow(0, count, False, 100, group))
        for c in range(count):
            leaf.add_row(job, c + 1, ChildRow(c, count, False, 100, group))
            links[(s, c + 1)] = (("w", w), 0)
            w += 1
    return Network(switches, links, impair or Impairments(), seed=seed,
                   up_ports={(s, 100) for s in range(1, len(switches))})
