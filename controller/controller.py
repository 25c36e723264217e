"""The controller: one P4Runtime client per switch of a topology, and the operations
that apply the plans of ``controller.routes`` and ``controller.jobs`` to the switches.

    with Controller(Topology.load("topo.json")) as ctl:
        ctl.push_pipeline(compile_pipeline("p4/aggregation.p4", "build"))
        ctl.install_routes()
        job = ctl.create_job(1, ["h1", "h2", "h3", "h4"])
        ...
        ctl.delete_job(1)

``connect`` (or ``with``) connects to every switch and becomes the primary controller
(pass ``switches`` to connect to some only). ``push_pipeline`` sets the pipeline on every
switch, ``use_running_pipeline`` names things with the P4Info the switches already run
(as ``ina ctl`` does after ``setup``). Job creation is all or nothing: if a switch
refuses an entry, what the job already installed is removed again.

``install_static_arp`` gives the hosts of a running Mininet net their ARP entries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.entities import TableEntry
from controller.errors import P4RuntimeClientError, SchemaError
from controller.jobs import (
    CELL_REGISTER,
    DEFAULT_JOB_ROWS,
    DEFAULT_JOB_SLOTS,
    DEFAULT_TOTAL_SLOTS,
    JOB_ACTION,
    JOB_TABLE,
    Change,
    Job,
    JobTable,
)
from controller.p4runtime_client import P4RuntimeClient, UpdateKind
from controller.pipeline import PipelineFiles
from controller.routes import (
    ECMP_ACTION,
    ECMP_TABLE,
    ROUTE_TABLE,
    AnyRoute,
    EcmpRoute,
    compute_arp,
    compute_ecmp_routes,
    compute_routes,
    ecmp_groups,
    route_entries,
)
from controller.topology import Switch, Topology, TopologyError

ClientFactory = Callable[[Switch], P4RuntimeClient]
Op = tuple[UpdateKind, Any]


@dataclass(frozen=True)
class InstalledRoutes:
    """What ``install_routes`` installed over all switches: ``ipv4_lpm`` routes, how
    many of them go to ECMP groups, and the groups."""

    routes: int = 0
    ecmp_routes: int = 0
    groups: int = 0


class Controller:
    def __init__(self, topology: Topology, *, election_id: tuple[int, int] = (0, 1),
                 timeout: float = 10.0, client_factory: ClientFactory | None = None,
                 jobs: JobTable | None = None, require_primary: bool = True):
        self.topology = topology
        self.require_primary = require_primary
        self.election_id = election_id
        self.timeout = timeout
        self._factory = client_factory or self._default_client
        self.clients: dict[str, P4RuntimeClient] = {}
        self.jobs = jobs if jobs is not None else JobTable(topology)

    def _default_client(self, sw: Switch) -> P4RuntimeClient:
        return P4RuntimeClient(sw.grpc_address, device_id=sw.device_id,
                               election_id=self.election_id, name=sw.name,
                               timeout=self.timeout, require_primary=self.require_primary)

    # -------------------------------------------------------------- lifecycle

    def connect(self, switches: Iterable[str] | None = None) -> Controller:
        names = list(self.topology.switches) if switches is None else list(switches)
        for name in names:
            sw = self.topology.switch(name)
            if name not in self.clients:
                client = self._factory(sw)
                client.connect()
                self.clients[name] = client
        return self

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        self.clients.clear()

    def __enter__(self) -> Controller:
        if not self.clients:
            self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def client(self, name: str) -> P4RuntimeClient:
        self.topology.switch(name)
        if name not in self.clients:
            raise TopologyError(f"switch {name} is not connected")
        return self.clients[name]

    # --------------------------------------------------------------- pipeline

    def push_pipeline(self, files: PipelineFiles) -> None:
        """Set the pipeline on every connected switch (this clears their state, so the
        job table starts empty)."""
        for client in self.clients.values():
            client.set_pipeline(files.p4info, files.config)
        self._pipeline_loaded()
        self.jobs.reset()

    def use_running_pipeline(self) -> None:
        for client in self.clients.values():
            client.fetch_pipeline()
        self._pipeline_loaded()

    def _pipeline_loaded(self) -> None:
        """Size the job allocators by the program: its register arrays (2 cells a slot)
        and its ``ina_job`` table."""
        for client in self.clients.values():
            try:
                cells = client.schema.register(CELL_REGISTER).size
                rows = client.schema.table(JOB_TABLE).size
            except SchemaError:
                continue  # not an aggregation program: no jobs
            self.jobs.total_slots = cells // 2 if cells else DEFAULT_TOTAL_SLOTS
            self.jobs.job_rows = rows or DEFAULT_JOB_ROWS
            return

    # ----------------------------------------------------------------- routes

    def install_routes(self, ecmp: bool = True) -> InstalledRoutes:
        """Insert the routes on every connected switch (see ``controller.routes``): with
        ECMP where the switch's program has it and ``ecmp`` is set, else one shortest
        path per host."""
        plans: dict[bool, Mapping[str, Sequence[AnyRoute]]] = {}
        routes = ecmp_routes = groups = 0
        for name, client in self.clients.items():
            with_ecmp = ecmp and has_ecmp(client)
            if with_ecmp not in plans:
                plans[with_ecmp] = (compute_ecmp_routes(self.topology) if with_ecmp
                                    else compute_routes(self.topology))
            mine = plans[with_ecmp][name]
            if mine:
                client.insert(*route_entries(mine))
            routes += len(mine)
            ecmp_routes += sum(isinstance(r, EcmpRoute) for r in mine)
            groups += len(ecmp_groups(mine))
        return InstalledRoutes(routes, ecmp_routes, groups)

    # ------------------------------------------------------------------- jobs

    def create_job(self, job_id: int, workers: Sequence[str],
                   slots: int = DEFAULT_JOB_SLOTS, root: str | None = None,
                   shrink: bool = False) -> Job:
        """Plan a job (``root``: its tree's root switch; default: the controller's
        choice; ``shrink``: fewer slots where ``slots`` do not fit, see
        ``controller.jobs``) and install its entries on every switch of its tree; on
        failure remove what was installed and forget the job."""
        change = self.jobs.create(job_id, workers, slots, root, shrink=shrink)
        try:
            for name in change.job.switches:
                self._check_aggregation_program(name)
        except (P4RuntimeClientError, TopologyError):
            self.jobs.jobs.pop(job_id, None)
            raise
        done: list[tuple[str, Op]] = []
        try:
            for name, ops in self._create_ops(change).items():
                client = self.client(name)
                for op in ops:
                    client.write([op])
                    done.append((name, op))
        except (P4RuntimeClientError, TopologyError):
            self.jobs.jobs.pop(job_id, None)
            for name, (_, item) in reversed(done):
                try:
                    self.clients[name].delete(item)
                except P4RuntimeClientError:
                    pass
            raise
        return change.job

    def _check_aggregation_program(self, name: str) -> None:
        schema = self.client(name).schema
        try:
            schema.table(JOB_TABLE)
            schema.param(schema.action(JOB_ACTION), "epoch")
            schema.register(CELL_REGISTER)
        except SchemaError as e:
            raise NotAggregationError(f"switch {name} does not run the aggregation program "
                                      f"({e})") from None

    def _create_ops(self, change: Change) -> dict[str, list[Op]]:
        """Per switch, in order: the result rewrites, the multicast group, and last the
        job rows (which let packets in)."""
        out: dict[str, list[Op]] = {}
        for name, sw in change.job.switches.items():
            ops: list[Op] = [("INSERT", r) for r in change.rewrites.get(name, [])]
            ops.append(("INSERT", sw.group))
            ops += [("INSERT", r) for r in sw.job_rows]
            out[name] = ops
        return out

    def delete_job(self, job_id: int) -> Job:
        """Remove the job's entries (job rows first, so no packet finds a half-removed
        job) and forget it. Entries the switch no longer has are skipped; other failures
        are reported together as ``JobDeleteError`` after trying every entry."""
        change = self.jobs.delete(job_id)
        errors: list[str] = []
        for name, sw in change.job.switches.items():
            items: list[TableEntry | Any] = [*sw.job_rows, sw.group,
                                             *change.rewrites.get(name, [])]
            for item in items:
                try:
                    self.client(name).delete(item)
                except P4RuntimeClientError as e:
                    if "NOT_FOUND" not in str(e):
                        errors.append(str(e))
        if errors:
            raise JobDeleteError(f"job {job_id} deleted, but some entries could not be "
                                 "removed:\n" + "\n".join(errors))
        return change.job


def has_ecmp(client: P4RuntimeClient) -> bool:
    """Whether the switch's program has ECMP: the ``ecmp_nhop`` table and the
    ``ecmp_group`` action on ``ipv4_lpm``."""
    schema = client.schema
    try:
        schema.table(ECMP_TABLE)
        schema.table_action(schema.table(ROUTE_TABLE), ECMP_ACTION)
    except SchemaError:
        return False
    return True


class JobDeleteError(RuntimeError):
    """Some entries of a deleted job could not be removed (the job is forgotten)."""


class NotAggregationError(P4RuntimeClientError):
    """A switch of a job's tree runs a program without the aggregation tables."""


def install_static_arp(net: Any, topology: Topology) -> int:
    """Give every host of a running Mininet ``net`` its static ARP entries (see
    ``controller.routes``); the number of entries."""
    count = 0
    for host, entries in compute_arp(topology).items():
        node = net.get(host)
        for e in entries:
            out = node.cmd(" ".join(e.command()) + " 2>&1")
            if out.strip():
                raise TopologyError(f"host {host}: {' '.join(e.command())}: {out.strip()}")
            count += 1
    return count
