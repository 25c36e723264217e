"""Aggregation jobs: the tree of a job, its switch resources, and the entries to install.

A job is an id (``bit<16>``), its workers (hosts) and a number of slots S (the workers'
window must not exceed it). ``JobTable.create`` computes everything the switches need
and ``JobTable.delete`` what to remove; both are pure (no switch is touched), the
controller (``controller.controller``) applies the result.

Tree: the root is the switch in the topology that minimises the largest hop distance to
the workers' switches (then the sum of distances, then the natural name order); every
switch on the shortest paths (``controller.routes.next_hops``) from a worker's switch to
the root is in the tree. A switch's children are its worker ports and the ports of its
child switches, numbered ``child_index`` 0, 1, ... by port; at most 32. For a star the
root is the one switch and the children are the worker ports.

Per switch of the tree:
 - ``ina_job`` (job_id, port) -> ``ina_child(child_index, fan_in, is_root, parent_port,
   mcast_grp, region_base, epoch)``: one row per child port, and on a non-root switch one
   more for the parent port (child_index = fan_in, unused: RESULTs come in there);
 - multicast group ``mcast_grp`` with one replica per child port (instance 0);
 - ``ina_result_rewrite`` (port) -> ``set_dst(dmac, dip, sip)`` for each worker port:
   the worker's MAC and address, and its switch's aggregator address (where the worker
   sends to). These rows depend on the port only, so jobs share them: a job installs
   the rows no other job has installed, and deleting a job removes the rows that no
   remaining job uses.

Resources: a region of S consecutive slots out of ``total_slots`` (``INA_SLOTS`` of the
program; first fit, ``JobError`` when no free range is large enough), one multicast
group id for the whole job (the lowest id >= 1 that no job uses), and an epoch: the
program tags every register cell with the epoch of the job that wrote it and treats a
cell of another epoch as empty, so a region is reused without zeroing its cells (which
needs register writes, and BMv2's P4Runtime server has none). Epochs count up from 1
and are never reused while the pipeline runs (the count is saved with the jobs; pushing
the pipeline again resets the registers and the count).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.entities import MulticastGroup, TableEntry
from controller.routes import next_hops
from controller.topology import Topology, sorted_names

JOB_TABLE = "ina_job"
JOB_ACTION = "ina_child"
REWRITE_TABLE = "ina_result_rewrite"
REWRITE_ACTION = "set_dst"
CELL_REGISTER = "ina_bitmap"  # its size is the program's cell count (2 per slot)
DEFAULT_TOTAL_SLOTS = 256  # INA_SLOTS of p4/aggregation.p4
DEFAULT_JOB_SLOTS = 64  # the workers' default window
MAX_CHILDREN = 32  # the bits of a cell's bitmap
MAX_JOB_ID = 0xFFFF
MAX_MCAST_GRP = 0xFFFF
MAX_EPOCH = 0xFFFF_FFFF  # bit<32>; 0 is a cell no job has written


class JobError(ValueError):
    """A job that cannot be created or deleted; the message says why."""


# ----------------------------------------------------------------------- the tree


@dataclass(frozen=True)
class Child:
    port: int
    node: str  # a worker host or a child switch


@dataclass(frozen=True)
class TreeSwitch:
    switch: str
    children: tuple[Child, ...]
    parent_port: int | None  # None at the root


@dataclass(frozen=True)
class Tree:
    root: str
    switches: dict[str, TreeSwitch]  # the root first, then the others by name


def _distances(topo: Topology, source: str) -> dict[str, int]:
    dist = {source: 0}
    frontier = [source]
    while frontier:
        nxt = []
        for node in frontier:
            for _, peer in topo.switch_neighbours(node):
                if peer not in dist:
                    dist[peer] = dist[node] + 1
                    nxt.append(peer)
        frontier = nxt
    return dist


def compute_tree(topo: Topology, workers: Sequence[str]) -> Tree:
    """The aggregation tree of ``workers`` (see the module docstring)."""
    leaves = sorted({topo.attachment(w).switch for w in workers})
    best: tuple[int, int, int] | None = None
    root = ""
    order = {name: i for i, name in enumerate(sorted_names(topo.switches))}
    for candidate in topo.switches:
        dist = _distances(topo, candidate)
        if not all(leaf in dist for leaf in leaves):
            continue
        key = (max(dist[x] for x in leaves), sum(dist[x] for x in leaves), order[candidate])
        if best is None or key < best:
            best, root = key, candidate
    if best is None:
        raise JobError(f"the workers {', '.join(workers)} are not connected to one another "
                       "through the switches")
    hops = next_hops(topo)
    parent_port: dict[str, int | None] = {root: None}
    children: dict[str, list[Child]] = {root: []}
    for leaf in leaves:
        node = leaf
        while node not in parent_port:  # climb towards the root
            up = hops[node][root]
            peer = topo.ports[node][up]
            parent_port[node] = up
            children.setdefault(node, [])
            children.setdefault(peer.node, [])
            assert peer.port is not None
            children[peer.node].append(Child(peer.port, node))
            node = peer.node
    for w in workers:
        where = topo.attachment(w)
        children[where.switch].append(Child(where.port, w))
    switches = {}
    for name in [root] + [s for s in sorted_names(children) if s != root]:
        kids = tuple(sorted(children[name], key=lambda c: c.port))
        if len(kids) > MAX_CHILDREN:
            raise JobError(f"switch {name} would have {len(kids)} children in the job; "
                           f"a switch aggregates at most {MAX_CHILDREN}")
        switches[name] = TreeSwitch(name, kids, parent_port[name])
    return Tree(root, switches)


# ------------------------------------------------------------------ the entries


@dataclass
class SwitchEntries:
    """What one switch of a job's tree gets."""

    switch: str
    job_rows: list[TableEntry]
    group: MulticastGroup
    rewrites: list[TableEntry]  # all the worker ports' rows (shared between jobs)


@dataclass
class Job:
    """A job with its resources and the entries it needs on each switch."""

    job_id: int
    workers: tuple[str, ...]
    slots: int
    region_base: int
    mcast_grp: int
    epoch: int
    tree: Tree
    switches: dict[str, SwitchEntries]
    aggregator: dict[str, str]  # worker -> the address it sends its contributions to

    def record(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "workers": list(self.workers), "slots": self.slots,
                "region_base": self.region_base, "mcast_grp": self.mcast_grp,
                "epoch": self.epoch}


def plan_job(topo: Topology, job_id: int, workers: Sequence[str], slots: int,
             region_base: int, mcast_grp: int, epoch: int) -> Job:
    """The entries of a job whose resources are already chosen."""
    tree = compute_tree(topo, workers)
    out: dict[str, SwitchEntries] = {}
    for name, node in tree.switches.items():
        fan_in = len(node.children)
        is_root = node.parent_port is None
        params = {"fan_in": fan_in, "is_root": int(is_root),
                  "parent_port": 0 if node.parent_port is None else node.parent_port,
                  "mcast_grp": mcast_grp, "region_base": region_base, "epoch": epoch}
        rows = [_job_row(job_id, c.port, i, params) for i, c in enumerate(node.children)]
        if node.parent_port is not None:
            rows.append(_job_row(job_id, node.parent_port, fan_in, params))
        group = MulticastGroup(mcast_grp, [c.port for c in node.children])
        rewrites = [rewrite_row(topo, c.port, c.node, name) for c in node.children
                    if c.node in topo.hosts]
        out[name] = SwitchEntries(name, rows, group, rewrites)
    aggregator = {w: topo.switches[topo.attachment(w).switch].aggregator_ip for w in workers}
    return Job(job_id, tuple(workers), slots, region_base, mcast_grp, epoch, tree, out,
               aggregator)


def _job_row(job_id: int, port: int, child_index: int, params: dict[str, int]) -> TableEntry:
    return TableEntry(JOB_TABLE, {"hdr.ina.job_id": job_id,
                                  "standard_metadata.ingress_port": port},
                      JOB_ACTION, {"child_index": child_index, **params})


def rewrite_row(topo: Topology, port: int, host: str, switch: str) -> TableEntry:
    h = topo.hosts[host]
    return TableEntry(REWRITE_TABLE, {"standard_metadata.egress_port": port},
                      REWRITE_ACTION, {"dmac": h.mac, "dip": h.ip,
                                       "sip": topo.switches[switch].aggregator_ip})


# -------------------------------------------------------------- the allocators


def free_ranges(used: Iterable[tuple[int, int]], total: int) -> list[tuple[int, int]]:
    """The free [start, end) ranges of [0, total) around the ``used`` ones."""
    out = []
    at = 0
    for start, end in sorted(used):
        if start > at:
            out.append((at, start))
        at = max(at, end)
    if at < total:
        out.append((at, total))
    return out


def allocate_region(used: Iterable[tuple[int, int]], total: int, size: int) -> int:
    """The base of the first free range of ``size`` slots (first fit)."""
    free = free_ranges(used, total)
    for start, end in free:
        if end - start >= size:
            return start
    text = ", ".join(f"{s}..{e - 1}" for s, e in free) or "none"
    raise JobError(f"no free region of {size} slots in the register arrays "
                   f"({total} slots; free: {text}); delete a job or use fewer slots")


def allocate_group(used: Iterable[int]) -> int:
    taken = set(used)
    for gid in range(1, MAX_MCAST_GRP + 1):
        if gid not in taken:
            return gid
    raise JobError("no free multicast group id")


# -------------------------------------------------------------------- the table


@dataclass
class Change:
    """What a create or delete does on each switch; ``rewrites`` only lists the
    ``ina_result_rewrite`` rows to install (create) or remove (delete)."""

    job: Job
    rewrites: dict[str, list[TableEntry]] = field(default_factory=dict)


@dataclass
class JobTable:
    """The jobs of one network (see the module docstring)."""

    topology: Topology
    total_slots: int = DEFAULT_TOTAL_SLOTS
    jobs: dict[int, Job] = field(default_factory=dict)
    next_epoch: int = 1

    def reset(self) -> None:
        """Forget every job: the switches run a freshly pushed pipeline."""
        self.jobs.clear()
        self.next_epoch = 1

    def create(self, job_id: int, workers: Sequence[str],
               slots: int = DEFAULT_JOB_SLOTS) -> Change:
        """Plan a new job and record it; raises ``JobError``/``TopologyError``."""
        if not 0 <= job_id <= MAX_JOB_ID:
            raise JobError(f"job id {job_id} is not in [0, {MAX_JOB_ID}]")
        if job_id in self.jobs:
            raise JobError(f"job {job_id} exists already (workers "
                           f"{','.join(self.jobs[job_id].workers)}); delete it first")
        if not workers:
            raise JobError(f"job {job_id} needs at least one worker")
        dup = sorted({w for w in workers if list(workers).count(w) > 1})
        if dup:
            raise JobError(f"job {job_id}: worker {dup[0]} is listed twice")
        for w in workers:
            self.topology.host(w)
        if not 1 <= slots <= self.total_slots:
            raise JobError(f"job {job_id}: slots must be in [1, {self.total_slots}], "
                           f"not {slots}")
        base = allocate_region(((j.region_base, j.region_base + j.slots)
                                for j in self.jobs.values()), self.total_slots, slots)
        group = allocate_group(j.mcast_grp for j in self.jobs.values())
        if self.next_epoch > MAX_EPOCH:
            raise JobError(f"job {job_id}: the switches' {MAX_EPOCH} job epochs are used "
                           "up; push the pipeline again (ina ctl setup) to start over")
        job = plan_job(self.topology, job_id, list(workers), slots, base, group,
                       self.next_epoch)
        self.next_epoch += 1
        installed = self._rewrites_in_use()
        change = Change(job, {name: [r for r in sw.rewrites if _key(name, r) not in installed]
                              for name, sw in job.switches.items()})
        self.jobs[job_id] = job
        return change

    def delete(self, job_id: int) -> Change:
        """Forget a job; the change lists what to remove."""
        job = self.get(job_id)
        del self.jobs[job_id]
        still = self._rewrites_in_use()
        return Change(job, {name: [r for r in sw.rewrites if _key(name, r) not in still]
                            for name, sw in job.switches.items()})

    def get(self, job_id: int) -> Job:
        if job_id not in self.jobs:
            known = ", ".join(str(j) for j in sorted(self.jobs)) or "none"
            raise JobError(f"no job {job_id} (jobs: {known})")
        return self.jobs[job_id]

    def _rewrites_in_use(self) -> set[tuple[str, int]]:
        return {_key(name, r) for j in self.jobs.values()
                for name, sw in j.switches.items() for r in sw.rewrites}

    # ------------------------------------------------------------------ state

    def to_json(self) -> dict[str, Any]:
        return {"total_slots": self.total_slots, "next_epoch": self.next_epoch,
                "jobs": [self.jobs[j].record() for j in sorted(self.jobs)]}

    @classmethod
    def from_json(cls, topology: Topology, data: object, where: str = "job state"
                  ) -> JobTable:
        """The table of a saved state; each job's entries are planned again from the
        topology (which must be the one the jobs were created with)."""
        try:
            if not isinstance(data, dict):
                raise TypeError("expected a JSON object")
            table = cls(topology, int(data["total_slots"]), next_epoch=int(data["next_epoch"]))
            for rec in data["jobs"]:
                job = plan_job(topology, int(rec["job_id"]), [str(w) for w in rec["workers"]],
                               int(rec["slots"]), int(rec["region_base"]),
                               int(rec["mcast_grp"]), int(rec["epoch"]))
                if not 0 < job.epoch < table.next_epoch:
                    raise ValueError(f"job {job.job_id}: epoch {job.epoch} is not below "
                                     f"next_epoch {table.next_epoch}")
                table.jobs[job.job_id] = job
        except (KeyError, TypeError, ValueError) as e:
            detail = f": {e}" if str(e) else ""
            raise JobError(f"{where}: not a job state written by `ina ctl`"
                           f"{detail}") from None
        return table

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n")

    @classmethod
    def load(cls, topology: Topology, path: str | Path,
             total_slots: int = DEFAULT_TOTAL_SLOTS) -> JobTable:
        """The saved table, or an empty one if ``path`` does not exist."""
        p = Path(path)
        if not p.exists():
            return cls(topology, total_slots)
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise JobError(f"{path}: cannot read the job state: {e}") from None
        return cls.from_json(topology, data, str(path))


def _key(switch: str, row: TableEntry) -> tuple[str, int]:
    return switch, int(row.match["standard_metadata.egress_port"])  # type: ignore[call-overload]
