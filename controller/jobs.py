"""Aggregation jobs: the tree of a job, its switch resources, and the entries to install.

A job is an id (``bit<16>``), its workers (hosts) and a number of slots S (the workers'
window must not exceed it). ``JobTable.create`` computes everything the switches need
and ``JobTable.delete`` what to remove; both are pure (no switch is touched), the
controller (``controller.controller``) applies the result.

Tree: a root switch, and every switch on the shortest paths (``controller.routes.
next_hops``) from a worker's switch to the root. Each switch has one next hop towards
the root, so the paths form a tree. A switch's children are its worker ports and the
ports of its child switches, numbered ``child_index`` 0, 1, ... by port; at most 32
(the bits of a cell's bitmap). Workers on one switch are reduced there; a switch with
one child passes its child's contributions up as they come (fan-in 1). The root is the
one asked for (``root``), or else the best *candidate*: the switches that reach every
worker's switch, ordered by the tree's depth (the largest hop distance to a worker's
switch), then the sum of those distances, then the natural name order. A tree that
does not fit (below) is passed over for the next candidate, so jobs that share the
fabric may get different roots. For a star the root is the one switch and the children
are the worker ports.

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

Resources, on every switch of the tree: a region of S consecutive slots out of
``total_slots`` (``INA_SLOTS`` of the program; first fit on that switch, so a job's
regions may start at different slots on different switches), room in the ``ina_job``
table (``job_rows``, the table's size), and one multicast group id for the whole job
(the lowest id >= 1 that no job uses on any switch of the tree). A job fits when every
switch of its tree has all of it; a job that fits on no candidate tree is refused with
the reason (``NoRoomError`` when only room was missing) and changes nothing. Asked to
``shrink`` (ATP's best effort), ``create`` gives such a job fewer slots instead, as many
as fit: the most that some candidate tree has free on every one of its switches (the
first such tree among equals; the job's window shrinks with them); it refuses only when
no tree has a free slot. The job's epoch: the program tags every
register cell with the epoch of the job that wrote it and treats a cell of another epoch
as empty, so a region is reused without zeroing its cells (which needs register writes,
and BMv2's P4Runtime server has none). Epochs count up from 1 and are never reused
while the pipeline runs (the count is saved with the jobs; pushing the pipeline again
resets the registers and the count).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.entities import MulticastGroup, TableEntry
from controller.routes import next_hops, switch_distances
from controller.topology import Topology, sorted_names

JOB_TABLE = "ina_job"
JOB_ACTION = "ina_child"
REWRITE_TABLE = "ina_result_rewrite"
REWRITE_ACTION = "set_dst"
CELL_REGISTER = "ina_bitmap"  # its size is the program's cell count (2 per slot)
DEFAULT_TOTAL_SLOTS = 256  # INA_SLOTS of p4/aggregation.p4
DEFAULT_JOB_ROWS = 1024  # the size of p4/aggregation.p4's ina_job table
DEFAULT_JOB_SLOTS = 64  # the workers' default window
MAX_CHILDREN = 32  # the bits of a cell's bitmap
MAX_JOB_ID = 0xFFFF
MAX_MCAST_GRP = 0xFFFF
MAX_EPOCH = 0xFFFF_FFFF  # bit<32>; 0 is a cell no job has written


class JobError(ValueError):
    """A job that cannot be created or deleted; the message says why."""


class NoRoomError(JobError):
    """A job that the switches have no room for (register slots, ``ina_job`` rows, a
    multicast group id), where its tree itself would do."""


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

    @property
    def fan_in(self) -> int:
        return len(self.children)


@dataclass(frozen=True)
class Tree:
    root: str
    switches: dict[str, TreeSwitch]  # the root first, then the others by name

    @property
    def depth(self) -> int:
        """Switch hops from the farthest switch of the tree to the root."""
        parents = {c.node: name for name, node in self.switches.items()
                   for c in node.children if c.node in self.switches}

        def hops(name: str) -> int:
            return 0 if name == self.root else 1 + hops(parents[name])

        return max(hops(name) for name in self.switches)

    def parent(self, switch: str) -> str | None:
        for name, node in self.switches.items():
            if any(c.node == switch for c in node.children):
                return name
        return None


def _leaves(topo: Topology, workers: Sequence[str]) -> list[str]:
    return sorted({topo.attachment(w).switch for w in workers})


def candidate_roots(topo: Topology, workers: Sequence[str]) -> list[str]:
    """The switches that reach every worker's switch, best root first (see the module
    docstring)."""
    leaves = _leaves(topo, workers)
    order = {name: i for i, name in enumerate(sorted_names(topo.switches))}
    keyed = []
    for candidate in topo.switches:
        dist = switch_distances(topo, candidate)
        if all(leaf in dist for leaf in leaves):
            keyed.append(((max(dist[x] for x in leaves), sum(dist[x] for x in leaves),
                           order[candidate]), candidate))
    if not keyed:
        raise JobError(f"the workers {', '.join(workers)} are not connected to one another "
                       "through the switches")
    return [name for _, name in sorted(keyed)]


def compute_tree(topo: Topology, workers: Sequence[str], root: str | None = None) -> Tree:
    """The aggregation tree of ``workers`` with ``root`` (default: the best candidate;
    see the module docstring)."""
    leaves = _leaves(topo, workers)
    if root is None:
        root = candidate_roots(topo, workers)[0]
    else:
        topo.switch(root)
        dist = switch_distances(topo, root)
        cut = [leaf for leaf in leaves if leaf not in dist]
        if cut:
            raise JobError(f"root {root} does not reach {cut[0]}, the switch of "
                           f"{_workers_on(topo, workers, cut[0])}")
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


def _workers_on(topo: Topology, workers: Sequence[str], switch: str) -> str:
    return ", ".join(w for w in workers if topo.attachment(w).switch == switch)


# ------------------------------------------------------------------ the entries


@dataclass
class SwitchEntries:
    """What one switch of a job's tree gets."""

    switch: str
    region_base: int
    job_rows: list[TableEntry]
    group: MulticastGroup
    rewrites: list[TableEntry]  # all the worker ports' rows (shared between jobs)


@dataclass
class Job:
    """A job with its resources and the entries it needs on each switch."""

    job_id: int
    workers: tuple[str, ...]
    slots: int
    mcast_grp: int
    epoch: int
    tree: Tree
    switches: dict[str, SwitchEntries]  # in tree order: the root first
    aggregator: dict[str, str]  # worker -> the address it sends its contributions to

    @property
    def regions(self) -> dict[str, int]:
        """switch -> the first slot of the job's region there."""
        return {name: sw.region_base for name, sw in self.switches.items()}

    def record(self) -> dict[str, Any]:
        """The saved form. ``tree`` keeps the tree itself: one planned around a failed
        link is not the one the whole topology would give."""
        tree = {name: {"parent_port": node.parent_port,
                       "children": [[c.port, c.node] for c in node.children]}
                for name, node in self.tree.switches.items()}
        return {"job_id": self.job_id, "workers": list(self.workers), "slots": self.slots,
                "root": self.tree.root, "regions": self.regions,
                "mcast_grp": self.mcast_grp, "epoch": self.epoch, "tree": tree}


def plan_job(topo: Topology, job_id: int, workers: Sequence[str], slots: int,
             tree: Tree, regions: dict[str, int], mcast_grp: int, epoch: int) -> Job:
    """The entries of a job whose tree and resources are already chosen."""
    out: dict[str, SwitchEntries] = {}
    for name, node in tree.switches.items():
        is_root = node.parent_port is None
        params = {"fan_in": node.fan_in, "is_root": int(is_root),
                  "parent_port": 0 if node.parent_port is None else node.parent_port,
                  "mcast_grp": mcast_grp, "region_base": regions[name], "epoch": epoch}
        rows = [_job_row(job_id, c.port, i, params) for i, c in enumerate(node.children)]
        if node.parent_port is not None:
            rows.append(_job_row(job_id, node.parent_port, node.fan_in, params))
        group = MulticastGroup(mcast_grp, [c.port for c in node.children])
        rewrites = [rewrite_row(topo, c.port, c.node, name) for c in node.children
                    if c.node in topo.hosts]
        out[name] = SwitchEntries(name, regions[name], rows, group, rewrites)
    aggregator = {w: topo.switches[topo.attachment(w).switch].aggregator_ip for w in workers}
    return Job(job_id, tuple(workers), slots, mcast_grp, epoch, tree, out, aggregator)


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
    unit = "slot" if size == 1 else "slots"
    raise NoRoomError(f"no free region of {size} {unit} in the register arrays ({total} "
                      f"slots; free: {text}); delete a job or use fewer slots")


def largest_free(used: Iterable[tuple[int, int]], total: int) -> int:
    """The size of the largest free range (0 when every slot is taken)."""
    return max((end - start for start, end in free_ranges(used, total)), default=0)


def allocate_group(used: Iterable[int]) -> int:
    taken = set(used)
    for gid in range(1, MAX_MCAST_GRP + 1):
        if gid not in taken:
            return gid
    raise NoRoomError("no free multicast group id")


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
    job_rows: int = DEFAULT_JOB_ROWS  # ina_job entries a switch holds

    def reset(self) -> None:
        """Forget every job: the switches run a freshly pushed pipeline."""
        self.jobs.clear()
        self.next_epoch = 1

    def create(self, job_id: int, workers: Sequence[str], slots: int = DEFAULT_JOB_SLOTS,
               root: str | None = None, shrink: bool = False) -> Change:
        """Plan a new job and record it; raises ``JobError``/``TopologyError``
        (``NoRoomError`` when the switches have no room for it). With ``shrink`` the job
        may get fewer than ``slots`` slots (``Change.job.slots``; see the module
        docstring)."""
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
        if self.next_epoch > MAX_EPOCH:
            raise JobError(f"job {job_id}: the switches' {MAX_EPOCH} job epochs are used "
                           "up; push the pipeline again (ina ctl setup) to start over")
        try:
            roots = [root] if root is not None else candidate_roots(self.topology, workers)
        except JobError as e:
            raise JobError(f"job {job_id}: {e}") from None
        refusals: list[JobError] = []
        trees: list[Tree] = []
        fitted = None
        for candidate in roots:
            try:
                tree = compute_tree(self.topology, workers, candidate)
                trees.append(tree)
                fitted = (tree, *self._fit(tree, slots), slots)
                break
            except JobError as e:
                refusals.append(type(e)(f"with root {candidate}: {e}"))
        if fitted is None and shrink:
            fitted = self._fit_fewer(trees, slots)
        if fitted is None:
            others = (f" (and no other tree fits: {len(roots) - 1} other roots tried)"
                      if len(roots) > 1 else "")
            error = NoRoomError if all(isinstance(e, NoRoomError) for e in refusals) \
                else JobError
            raise error(f"job {job_id} does not fit: {refusals[0]}{others}")
        tree, regions, group, slots = fitted
        job = plan_job(self.topology, job_id, list(workers), slots, tree, regions, group,
                       self.next_epoch)
        self.next_epoch += 1
        installed = self._rewrites_in_use()
        change = Change(job, {name: [r for r in sw.rewrites if _key(name, r) not in installed]
                              for name, sw in job.switches.items()})
        self.jobs[job_id] = job
        return change

    def _fit_fewer(self, trees: list[Tree], slots: int
                   ) -> tuple[Tree, dict[str, int], int, int] | None:
        """The tree with the most slots free on all its switches (fewer than ``slots``;
        the first such tree among equals), its regions and group and that many slots;
        None when no tree has a free slot and room for the rest."""
        best = None
        for tree in trees:
            fewer = min([slots, *(largest_free(self._used(name), self.total_slots)
                                  for name in tree.switches)])
            if fewer < 1 or (best is not None and fewer <= best[3]):
                continue
            try:
                best = tree, *self._fit(tree, fewer), fewer
            except JobError:
                continue
        return best

    def _used(self, switch: str) -> list[tuple[int, int]]:
        """The [start, end) slot ranges the jobs hold on ``switch``."""
        return [(j.switches[switch].region_base, j.switches[switch].region_base + j.slots)
                for j in self.jobs.values() if switch in j.switches]

    def _fit(self, tree: Tree, slots: int) -> tuple[dict[str, int], int]:
        """The job's region on every switch of ``tree``, and its multicast group; a
        ``JobError`` naming the switch where something does not fit."""
        regions = {}
        for name, node in tree.switches.items():
            try:
                regions[name] = allocate_region(self._used(name), self.total_slots, slots)
            except JobError as e:
                raise NoRoomError(f"switch {name}: {e}") from None
            rows = sum(len(j.switches[name].job_rows) for j in self.jobs.values()
                       if name in j.switches)
            need = node.fan_in + (node.parent_port is not None)
            if rows + need > self.job_rows:
                raise NoRoomError(f"switch {name}: its {JOB_TABLE} table holds "
                                  f"{self.job_rows} rows, {rows} are taken and the job "
                                  f"needs {need}")
        group = allocate_group(j.mcast_grp for j in self.jobs.values()
                               if set(j.switches) & set(tree.switches))
        return regions, group

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
                workers = [str(w) for w in rec["workers"]]
                tree = (_saved_tree(str(rec["root"]), rec["tree"]) if "tree" in rec
                        else compute_tree(topology, workers, str(rec["root"])))
                regions = {str(k): int(v) for k, v in rec["regions"].items()}
                if set(regions) != set(tree.switches):
                    raise ValueError(f"job {rec['job_id']}: regions on "
                                     f"{', '.join(sorted_names(regions))}, but its tree is "
                                     f"{', '.join(sorted_names(tree.switches))}")
                job = plan_job(topology, int(rec["job_id"]), workers, int(rec["slots"]),
                               tree, regions, int(rec["mcast_grp"]), int(rec["epoch"]))
                if not 0 < job.epoch < table.next_epoch:
                    raise ValueError(f"job {job.job_id}: epoch {job.epoch} is not below "
                                     f"next_epoch {table.next_epoch}")
                table.jobs[job.job_id] = job
        except (KeyError, TypeError, ValueError, AttributeError) as e:
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


def _saved_tree(root: str, saved: dict[str, Any]) -> Tree:
    switches = {str(name): TreeSwitch(str(name),
                                      tuple(Child(int(port), str(node))
                                            for port, node in rec["children"]),
                                      None if rec["parent_port"] is None
                                      else int(rec["parent_port"]))
                for name, rec in saved.items()}
    if root not in switches:
        raise ValueError(f"the saved tree has no root {root}")
    return Tree(root, switches)


def _key(switch: str, row: TableEntry) -> tuple[str, int]:
    return switch, int(row.match["standard_metadata.egress_port"])  # type: ignore[call-overload]
