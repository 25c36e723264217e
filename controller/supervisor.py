"""The controller's watch over a running fabric: detection, recovery, and the agents'
control channel.

``Supervisor`` runs beside a ``Controller`` that has set up the switches (pipeline,
routes) and does what an SDN controller does while jobs run:

- **Detection** (``controller.liveness``): LLDP-style probes on every link between two
  switches and ICMP echo probes on every host's link, every ``probe_period``; a switch
  whose P4Runtime stream ends is down at once. Agents that see no progress say so
  (``stalled``): a hint that makes the controller probe at once, never a verdict.
  A busy switch answers probes late (BMv2 on a loaded machine, by a second), so a
  link or host link that a running job uses is declared down only while that job has
  stalled too, or once the probes have failed ten times as long.
- **Recovery**: when something fails (or comes back), the routes and ECMP groups of
  every switch are recomputed on what works (``controller.fabric``) and every job
  whose tree used what failed is rebuilt: its agents are paused and report their
  progress, the old tree's entries are removed, the stragglers drained, a new tree
  planned over the surviving switches (new regions and epoch) and installed, and the
  agents resume from the first wire chunk some agent lacks (``hosts.control``). A job
  that no tree can serve finishes on the hosts (``fallback``: ring or ps over the
  routes that remain) when its workers still reach each other; otherwise it waits
  ``hold`` seconds for the fabric to heal and then fails, naming the partition.
- **Re-provisioning**: a switch that comes back (a restarted process answers again)
  gets the pipeline, its routes and every job entry it should hold.
- **Take-over** (``Supervisor.take_over``): a new controller rebuilds its view from
  the switches (P4Runtime reads of the pipeline, the job tables and multicast groups,
  the routes) and its predecessor's saved job state, becomes the primary, and goes
  on; ``kill`` ends a controller as a crash would.

Every detection and every recovery is logged with its time (``events``, ``recoveries``)
for the run's record. The job state is saved after every change (``state_path``, the
format of ``ina ctl``'s job state file).
"""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.agent_hub import AgentHub, AgentLink
from controller.controller import Controller
from controller.entities import TableEntry, Writable
from controller.errors import P4RuntimeClientError, SchemaError
from controller.fabric import CPU_ACTION, Fabric, LinkEnds, groups_of, switch_links, sync_routes
from controller.jobs import JOB_TABLE, Change, Job, JobError, JobTable
from controller.liveness import EchoReply, LinkProbe, Liveness, echo_probe, link_probe, parse_probe
from controller.p4runtime_client import P4RuntimeClient
from controller.pipeline import PipelineFiles
from controller.routes import ROUTE_TABLE
from controller.topology import Topology, TopologyError
from hosts.control import (
    ABORT,
    DONE,
    FALLBACK,
    FINISH,
    HELLO,
    MOVING,
    PAUSE,
    PROGRESS,
    RESUME,
    STALLED,
    UNSTALLED,
)

FALLBACK_PORT = 48880  # the host-based algorithms' TCP port (hosts.baselines.tcp)
RECONNECT_EVERY = 0.3  # seconds between attempts to reach a switch that is down


@dataclass(frozen=True)
class SupervisorSettings:
    probe_period: float = 0.1  # seconds between two probes of a link
    misses: int = 3  # probes in a row without an answer: down
    fallback: str = "ring"  # ring, ps or none
    hold: float = 10.0  # how long a job nothing can serve waits for the fabric to heal
    drain: float = 0.2  # after removing a tree, before installing the next one
    agent_wait: float = 3.0  # how long the agents may take to answer a pause
    ecmp: bool = True


@dataclass
class Recovery:
    """One change of a job's tree, from the detection that caused it."""

    job: int
    cause: str  # "link s1-s3 down"
    detected: float  # when the cause was detected (the clock's time)
    paused: float | None = None
    start: int | None = None  # the wire chunk the job went on from
    resent: int = 0  # wire chunks the agents had sent and sent again
    resumed: float | None = None
    moving: float | None = None  # the first progress after it
    algorithm: str | None = None  # ina (a new tree), ring, ps (fallback)
    root: str | None = None  # the new tree's root
    note: str = ""
    error: str | None = None

    def to_json(self, t0: float) -> dict[str, Any]:
        def rel(t: float | None) -> float | None:
            return None if t is None else round(t - t0, 4)
        return {"job": self.job, "cause": self.cause, "detected_s": rel(self.detected),
                "paused_s": rel(self.paused), "start_chunk": self.start,
                "chunks_resent": self.resent, "resumed_s": rel(self.resumed),
                "moving_s": rel(self.moving), "algorithm": self.algorithm,
                "root": self.root, "note": self.note, "error": self.error}


@dataclass
class JobWatch:
    """What the supervisor knows of a job beyond its plan: its agents and its state
    (running, paused, waiting, fallback, failed, finished)."""

    job_id: int
    workers: tuple[str, ...]
    slots: int
    links: dict[int, AgentLink] = field(default_factory=dict)
    seen: set[int] = field(default_factory=set)  # ranks that said hello to this controller
    done_since: float | None = None  # when the first rank of the run said it was done
    answers: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)
    state: str = "running"
    stalled: set[int] = field(default_factory=set)  # ranks that report no progress
    seq: int = 0
    start: int | None = None
    hold_until: float | None = None
    reason: str = ""
    recoveries: list[Recovery] = field(default_factory=list)


class Supervisor:
    def __init__(self, ctl: Controller, files: PipelineFiles,
                 settings: SupervisorSettings | None = None, *, state_path: str | Path,
                 hub_path: str | Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.ctl = ctl
        self.files = files
        self.settings = settings or SupervisorSettings()
        self.state_path = Path(state_path)
        self.clock = clock
        self.topology: Topology = ctl.topology
        self.fabric = Fabric(self.topology)
        self.liveness = Liveness(self.settings.probe_period, self.settings.misses)
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.watches: dict[int, JobWatch] = {}
        self.events: list[dict[str, Any]] = []
        self.recoveries: list[Recovery] = []  # every job's, deleted jobs' too
        self.queue: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self.hub = AgentHub(hub_path, self._on_message, self._on_close)
        self._stop = threading.Event()
        self._probe_now = threading.Event()
        self._coming_up: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._probe_seq = 0
        self._links = switch_links(self.topology)
        self._by_device = {s.device_id: s.name for s in self.topology.switches.values()}
        self._by_ip = {h.ip: h.name for h in self.topology.hosts.values()}
        self.killed = False

    # -------------------------------------------------------------- lifecycle

    def start(self) -> Supervisor:
        self.hub.start()
        now = self.clock()
        with self.lock:
            for name in self.topology.switches:
                if name not in self.ctl.clients:
                    self.fabric.down_switches.add(name)
            self.ctl.jobs.topology = self.fabric.live()
            self._sync_routes()
            self._watch_all(now)
            self._save()
        for target, name in ((self._probe_loop, "probes"), (self._work_loop, "recovery"),
                             (self._reconnect_loop, "reconnect")):
            t = threading.Thread(target=target, name=f"supervisor-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        """Stop watching (the controller stays connected)."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)
        self.hub.close()

    def kill(self) -> None:
        """End the controller as a crash would: its P4Runtime streams and its agents'
        connections close, nothing is cleaned up."""
        self.killed = True
        self._stop.set()
        self.hub.close()
        with self.lock:
            for client in list(self.ctl.clients.values()):
                with contextlib.suppress(Exception):
                    client.close()
            self.ctl.clients.clear()
        with self.cond:
            self.cond.notify_all()

    def log(self, event: str, subject: str = "", **detail: Any) -> dict[str, Any]:
        entry = {"t": self.clock(), "event": event, "subject": subject, **detail}
        self.events.append(entry)
        return entry

    # ------------------------------------------------------------------- jobs

    def create_job(self, job_id: int, workers: list[str], slots: int,
                   root: str | None = None, shrink: bool = False) -> Job:
        with self.lock:
            cut = self.fabric.cut_off(workers)
            if cut:
                raise JobError(f"job {job_id}: {', '.join(cut)} cannot be reached now "
                               f"({'; '.join(self.fabric.describe_down())} down)")
            job = self.ctl.create_job(job_id, workers, slots=slots, root=root,
                                      shrink=shrink)
            self.watches[job_id] = JobWatch(job_id, tuple(workers), job.slots)
            self._save()
            return job

    def delete_job(self, job_id: int) -> None:
        with self.lock:
            watch = self.watches.pop(job_id, None)
            if job_id in self.ctl.jobs.jobs:
                self._remove_tree(job_id)
            elif watch is None:
                self.ctl.jobs.get(job_id)  # the error: no such job
            self._save()

    def watch_of(self, job_id: int) -> JobWatch | None:
        return self.watches.get(job_id)

    def _save(self) -> None:
        if self.killed:
            return  # a dead controller writes nothing
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        self.ctl.jobs.save(tmp)
        os.replace(tmp, self.state_path)

    # ------------------------------------------------------------- detection

    def _watch_all(self, now: float) -> None:
        for le in self._links:
            if not ({le.a, le.b} & self.fabric.down_switches):
                self._watch_link(le, now)
        for host, where in self.topology.attachments.items():
            if where.switch not in self.fabric.down_switches:
                self._watch_host(host, now)

    def _watch_link(self, le: LinkEnds, now: float) -> None:
        self.liveness.watch(("link", le), now, le.a, le.b)  # probed from a, seen at b

    def _watch_host(self, host: str, now: float) -> None:
        switch = self.topology.attachments[host].switch
        self.liveness.watch(("host", host), now, switch, switch)

    def _clients(self) -> dict[str, P4RuntimeClient]:
        with self.lock:
            return dict(self.ctl.clients)

    def _probe_loop(self) -> None:
        period = self.settings.probe_period
        next_round = self.clock()
        while not self._stop.is_set():
            now = self.clock()
            if now >= next_round or self._probe_now.is_set():
                self._probe_now.clear()
                self._send_probes()
                next_round = now + period
            now = self.clock()
            self._read_probes(now)
            with self.lock:
                for key in self.liveness.newly_down(now, self._stalled_jobs_agree):
                    self.queue.put(("down", key, now, "probes"))
            self._stop.wait(max(0.0, min(period / 4, next_round - self.clock())))

    def _send_probes(self) -> None:
        clients = self._clients()
        self._probe_seq += 1
        seq = self._probe_seq
        with self.lock:
            keys: list[Any] = self.liveness.watched()
        for key in keys:
            try:
                if key[0] == "link":
                    le: LinkEnds = key[1]
                    client = clients.get(le.a)
                    if client is None or le.b not in clients or client.stream_ended:
                        continue
                    sw = self.topology.switches[le.a]
                    client.packet_out(link_probe(sw.mac, sw.device_id, le.pa, seq),
                                      egress_port=le.pa, pad=0)
                else:
                    host = key[1]
                    where = self.topology.attachments[host]
                    client = clients.get(where.switch)
                    if client is None or client.stream_ended or not _has_cpu_route(client):
                        continue
                    sw, h = self.topology.switches[where.switch], self.topology.hosts[host]
                    client.packet_out(echo_probe(sw.mac, h.mac, sw.aggregator_ip, h.ip, seq),
                                      egress_port=where.port, pad=0)
            except (P4RuntimeClientError, BrokenPipeError, ValueError):
                continue
            with self.lock:
                self.liveness.sent(key, seq, self.clock())

    def _read_probes(self, now: float) -> None:
        for name, client in self._clients().items():
            if client.stream_ended:
                if name not in self.fabric.down_switches:  # seen now, not when the pass began
                    self.queue.put(("switch_down", name, self.clock(),
                                    "its P4Runtime stream ended"))
                continue
            for _ in range(10_000):
                try:
                    pin = client.packet_in(0)
                except P4RuntimeClientError:
                    break
                if pin is None:
                    break
                probe = parse_probe(pin.payload)
                key: tuple[str, Any] | None = None
                seq = 0
                if isinstance(probe, LinkProbe):
                    seq = probe.seq
                    sender = self._by_device.get(probe.device_id)
                    port = pin.metadata.get("ingress_port")
                    if sender is not None and port is not None:
                        key = ("link", LinkEnds.of(sender, probe.port, name, int(port)))
                elif isinstance(probe, EchoReply) and probe.host_ip in self._by_ip:
                    key = ("host", self._by_ip[probe.host_ip])
                    seq = self._probe_seq - ((self._probe_seq - probe.seq) & 0xFFFF)
                if key is not None:
                    with self.lock:
                        if self.liveness.answered(key, seq, now):
                            self.queue.put(("up", key, now, "probes"))

    def _stalled_jobs_agree(self, key: Any) -> bool:
        """Whether the running jobs that use ``key`` (a link of their tree, a worker's
        link) have stopped moving; True when none uses it."""
        users = [w for w in self.watches.values()
                 if w.state == "running" and self._uses(w.job_id, key)]
        return not users or any(w.stalled for w in users)

    def _uses(self, job_id: int, key: Any) -> bool:
        job = self.ctl.jobs.jobs.get(job_id)
        if job is None:
            return False
        if key[0] == "host":
            return key[1] in job.workers
        return key[1] in self._tree_links(job)

    def _tree_links(self, job: Job) -> set[LinkEnds]:
        out = set()
        for name, node in job.tree.switches.items():
            if node.parent_port is not None:
                peer = self.topology.ports[name][node.parent_port]
                assert peer.port is not None
                out.add(LinkEnds.of(name, node.parent_port, peer.node, peer.port))
        return out

    def _reconnect_loop(self) -> None:
        while not self._stop.wait(RECONNECT_EVERY):
            with self.lock:
                names = [n for n in self.fabric.down_switches if n not in self._coming_up]
            for name in names:
                try:
                    client = self._reach(name)
                except Exception as e:  # noqa: BLE001 - a controller keeps going
                    self.log("error", f"switch {name}", detail=f"reconnecting: "
                                                               f"{type(e).__name__}: {e}")
                    continue
                if client is None:
                    continue
                with self.lock:
                    self._coming_up.add(name)
                self.queue.put(("switch_up", name, client, self.clock()))

    def _reach(self, name: str) -> P4RuntimeClient | None:
        """A client of switch ``name`` if it answers (as the primary), else None."""
        sw = self.topology.switches[name]
        host, _, port = sw.grpc_address.rpartition(":")
        try:  # listening at all? (a refused connection costs nothing)
            socket.create_connection((host, int(port)), timeout=RECONNECT_EVERY).close()
        except OSError:
            return None
        client = P4RuntimeClient(sw.grpc_address, device_id=sw.device_id,
                                 election_id=self.ctl.election_id, name=name,
                                 timeout=self.ctl.timeout)
        try:  # a switch that just started may take a while to answer on a busy machine
            client.connect(timeout=5.0)
        except P4RuntimeClientError:
            client.close()
            return None
        return client

    # --------------------------------------------------------------- handling

    def _work_loop(self) -> None:
        while not self._stop.is_set():
            try:
                item = self.queue.get(timeout=0.05)
            except queue.Empty:
                item = None
            try:
                with self.lock:
                    if item is not None:
                        self._handle(item)
                    self._check_holds(self.clock())
            except Exception as e:  # noqa: BLE001 - a controller keeps going
                if self._stop.is_set():
                    return
                self.log("error", detail=f"{type(e).__name__}: {e}")

    def _handle(self, item: tuple[Any, ...]) -> None:
        kind = item[0]
        if kind == "down":
            _, key, t, by = item
            if key[0] == "link":
                le = key[1]
                if le in self.fabric.down_links or {le.a, le.b} & self.fabric.down_switches:
                    return
                self.fabric.down_links.add(le)
                cause = self.log("down", f"link {le.name}", by=by, at=t)
            else:
                host = key[1]
                if host in self.fabric.down_hosts:
                    return
                self.fabric.down_hosts.add(host)
                cause = self.log("down", f"link {host}-{self.topology.attachments[host].switch}",
                                 by=by, at=t)
            self._changed(cause)
        elif kind == "up":
            _, key, t, by = item
            if key[0] == "link":
                if key[1] not in self.fabric.down_links:
                    return
                self.fabric.down_links.discard(key[1])
                cause = self.log("up", f"link {key[1].name}", by=by, at=t)
            else:
                if key[1] not in self.fabric.down_hosts:
                    return
                self.fabric.down_hosts.discard(key[1])
                cause = self.log("up", f"link {key[1]}-{self.topology.attachments[key[1]].switch}",
                                 by=by, at=t)
            self._changed(cause)
        elif kind == "switch_down":
            _, name, t, by = item
            if name in self.fabric.down_switches:
                return
            self.fabric.down_switches.add(name)
            client = self.ctl.clients.pop(name, None)
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()
            for le in self._links:
                if le.touches(name):
                    self.liveness.unwatch(("link", le))
                    self.fabric.down_links.discard(le)
            for host, where in self.topology.attachments.items():
                if where.switch == name:
                    self.liveness.unwatch(("host", host))
                    self.fabric.down_hosts.discard(host)
            cause = self.log("down", f"switch {name}", by=by, at=t)
            self._changed(cause)
        elif kind == "switch_up":
            _, name, client, t = item
            self._coming_up.discard(name)
            try:
                fresh = self._provision(name, client)
            except P4RuntimeClientError as e:
                self.log("error", f"switch {name}", detail=f"re-provisioning failed: {e}")
                with contextlib.suppress(Exception):
                    client.close()
                return
            self.fabric.down_switches.discard(name)
            now = self.clock()
            for le in self._links:
                if le.touches(name) and not ({le.a, le.b} & self.fabric.down_switches):
                    self._watch_link(le, now)
            for host, where in self.topology.attachments.items():
                if where.switch == name:
                    self._watch_host(host, now)
            cause = self.log("up", f"switch {name}", by="it answered again", at=t,
                             detail="re-provisioned: program, routes, jobs" if fresh
                             else "its state was kept")
            self._changed(cause)
        elif kind == "hint":
            _, job, rank, waited, t = item
            self.log("hint", f"job {job}", at=t,
                     detail=f"rank {rank} made no progress for {waited:.3f} s")
            self._probe_now.set()
        elif kind == "gone":
            _, job, rank = item
            watch = self.watches.get(job)
            if watch is not None and watch.state not in ("failed", "finished"):
                host = watch.workers[rank] if rank < len(watch.workers) else f"rank {rank}"
                self._abort(watch, f"job {job}: the agent of {host} (rank {rank}) went away "
                                   "before the job finished", None)

    def _provision(self, name: str, client: P4RuntimeClient) -> bool:
        """Make a switch that answers again part of the fabric; True if it had lost its
        state (a fresh process) and got everything again."""
        fresh = False
        try:
            client.fetch_pipeline()
        except P4RuntimeClientError:
            client.set_pipeline(self.files.p4info, self.files.config)
            fresh = True
        self.ctl.clients[name] = client
        for job in self.ctl.jobs.jobs.values():
            if name in job.switches:
                self._install(job, name, reinstall=True)
        return fresh

    # --------------------------------------------------------------- recovery

    def _changed(self, cause: dict[str, Any]) -> None:
        live = self.fabric.live()
        self.ctl.jobs.topology = live
        affected = [w for w in self.watches.values()
                    if w.state == "running" and self._touches(w.job_id)]
        for w in affected:
            self._pause(w, cause)
        self._sync_routes()
        if affected:
            self._recover(affected)
        for w in list(self.watches.values()):
            if w.state == "waiting":
                self._place(w)
        self._save()

    def _touches(self, job_id: int) -> bool:
        job = self.ctl.jobs.jobs.get(job_id)
        if job is None:
            return False
        if set(job.switches) & self.fabric.down_switches:
            return True
        if self.fabric.cut_off(job.workers):
            return True
        return bool(self._tree_links(job) & self.fabric.down_links)

    def _pause(self, w: JobWatch, cause: dict[str, Any]) -> None:
        w.seq += 1
        w.state = "paused"
        w.done.clear()
        w.done_since = None
        w.stalled.clear()
        rec = Recovery(w.job_id, f"{cause['subject']} {cause['event']}", cause["at"])
        w.recoveries.append(rec)
        self.recoveries.append(rec)
        for link in w.links.values():
            link.send({"op": PAUSE, "seq": w.seq})
        rec.paused = self.clock()

    def _recover(self, affected: list[JobWatch]) -> None:
        """Every paused job of ``affected`` goes on: its agents' progress, its old tree
        removed, and a new one (or its fallback). All the old trees go before any new
        one is planned, so that a job may take the regions another one held, and their
        packets in flight die out together (one drain)."""
        ready = [w for w in affected if self._progress(w)]
        if self._stop.is_set() or not ready:
            return
        for w in ready:
            if w.job_id in self.ctl.jobs.jobs:
                self._remove_tree(w.job_id)
        deadline = self.clock() + self.settings.drain  # the old trees' packets die out
        while not self._stop.is_set() and (left := deadline - self.clock()) > 0:
            self.cond.wait(left)
        for w in ready:
            if not self._stop.is_set():
                self._place(w)

    def _progress(self, w: JobWatch) -> bool:
        """Wait for the answers of ``w``'s agents to its pause and note where the job
        goes on from; False (the job aborted) when one does not answer in time."""
        rec = w.recoveries[-1]
        seq, ranks = w.seq, range(len(w.workers))
        self.cond.wait_for(lambda: self._stop.is_set() or (
            len(w.answers.get(seq, {})) == len(w.workers)
            and all(r in w.answers[seq] for r in ranks)), timeout=self.settings.agent_wait)
        if self._stop.is_set():
            return False
        answers = w.answers.get(seq, {})
        missing = [r for r in ranks if r not in answers]
        if missing:
            names = ", ".join(f"{w.workers[r]} (rank {r})" for r in missing)
            self._abort(w, f"job {w.job_id}: {names} did not answer the controller's pause "
                           f"within {self.settings.agent_wait:g} s", rec)
            return False
        w.start = min(int(a["next"]) for a in answers.values())
        rec.start = w.start
        rec.resent = max(0, max(int(a["sent"]) for a in answers.values()) - w.start)
        return True

    def _place(self, w: JobWatch) -> None:
        """A new tree for a paused (or waiting) job, or its fallback, or a wait."""
        rec = w.recoveries[-1]
        problem = ""
        try:
            change = self.ctl.jobs.create(w.job_id, list(w.workers), w.slots)
        except (JobError, TopologyError) as e:
            problem = str(e)
        else:
            try:
                self._install_change(change)
            except P4RuntimeClientError as e:
                self._remove_tree(w.job_id)
                problem = f"job {w.job_id}: installing its new tree failed: {e}"
            else:
                w.state = "running"
                w.hold_until = None
                rec.algorithm, rec.root = "ina", change.job.tree.root
                rec.resumed = self.clock()
                for link in w.links.values():
                    link.send({"op": RESUME, "seq": w.seq, "from": w.start})
                self.log("recovered", f"job {w.job_id}",
                         detail=f"new tree rooted at {rec.root}, epoch {change.job.epoch}; "
                                f"the workers go on from wire chunk {w.start}")
                self._save()
                return
        live = self.fabric.live()
        cut = self.fabric.cut_off(w.workers)
        groups = groups_of(live, w.workers)
        if not cut and len(groups) == 1 and self.settings.fallback != "none":
            algo = self.settings.fallback
            w.state = "fallback"
            w.hold_until = None
            rec.algorithm, rec.note = algo, problem
            rec.resumed = self.clock()
            peers = [self.topology.hosts[h].ip for h in w.workers]
            for link in w.links.values():
                link.send({"op": FALLBACK, "seq": w.seq, "from": w.start, "algo": algo,
                           "peers": peers, "port": FALLBACK_PORT})
            self.log("fallback", f"job {w.job_id}",
                     detail=f"no tree can serve it ({problem}); it finishes by {algo} over "
                            "the routes that remain")
            return
        reason = self._partition(w, cut, groups) if (cut or len(groups) > 1) else (
            f"{problem}, and --fallback none")
        w.reason = reason
        if w.state != "waiting":
            w.state = "waiting"
            w.hold_until = self.clock() + self.settings.hold
            self.log("waiting", f"job {w.job_id}",
                     detail=f"{reason}; it waits up to {self.settings.hold:g} s for the "
                            "fabric to heal")

    def _partition(self, w: JobWatch, cut: list[str], groups: list[list[str]]) -> str:
        """Which workers reach which, and what is down."""
        down = "; ".join(self.fabric.describe_down()) or "nothing"
        parts = [[h] for h in cut] + groups
        order = {h: i for i, h in enumerate(w.workers)}
        parts.sort(key=lambda g: min(order[h] for h in g))
        split = " | ".join(", ".join(g) for g in parts)
        return (f"job {w.job_id}: the workers are split into {split}: no route joins them "
                f"(down: {down})")

    def _finish(self, w: JobWatch) -> None:
        """Every agent is done: they may leave."""
        if w.state in ("running", "fallback"):
            w.state = "finished"
            for link in w.links.values():
                link.send({"op": FINISH})

    def _check_holds(self, now: float) -> None:
        for w in list(self.watches.values()):
            # After a take-over, an agent that finished while no controller listened
            # never says so: once the others are done, it does not hold them back.
            if (w.done_since is not None and now - w.done_since >= 1.0
                    and all(r in w.done or r not in w.seen for r in range(len(w.workers)))):
                self._finish(w)
            if w.state == "waiting" and w.hold_until is not None and now >= w.hold_until:
                self._abort(w, f"{w.reason}; the fabric did not heal within "
                               f"{self.settings.hold:g} s", w.recoveries[-1]
                            if w.recoveries else None)

    def _abort(self, w: JobWatch, error: str, rec: Recovery | None) -> None:
        w.state = "failed"
        if rec is not None:
            rec.error = error
        for link in w.links.values():
            link.send({"op": ABORT, "error": error})
        if w.job_id in self.ctl.jobs.jobs:
            self._remove_tree(w.job_id)
        self.log("failed", f"job {w.job_id}", detail=error)
        self._save()

    # ------------------------------------------------------- switch entries

    def _install_change(self, change: Change) -> None:
        for name, sw in change.job.switches.items():
            client = self.ctl.client(name)
            ops: list[tuple[Any, Any]] = [("INSERT", r) for r in change.rewrites.get(name, [])]
            ops.append(("INSERT", sw.group))
            ops += [("INSERT", r) for r in sw.job_rows]
            for op in ops:
                client.write([op])

    def _install(self, job: Job, name: str, reinstall: bool = False) -> None:
        """Every entry ``job`` needs on ``name`` (one that is there already is kept)."""
        client = self.ctl.clients[name]
        sw = job.switches[name]
        items: list[Writable] = [*sw.rewrites, sw.group, *sw.job_rows]
        for item in items:
            try:
                client.insert(item)
            except P4RuntimeClientError as e:
                if not (reinstall and "ALREADY_EXISTS" in str(e)):
                    raise

    def _remove_tree(self, job_id: int) -> None:
        change = self.ctl.jobs.delete(job_id)
        for name, sw in change.job.switches.items():
            client = self.ctl.clients.get(name)
            if client is None:
                continue
            items: list[Writable] = [*sw.job_rows, sw.group, *change.rewrites.get(name, [])]
            for item in items:
                with contextlib.suppress(P4RuntimeClientError):
                    client.delete(item)

    def _sync_routes(self) -> None:
        live = self.fabric.live()
        for name, client in self._clients().items():
            if name in self.fabric.down_switches:
                continue
            cpu = self.topology.switches[name].aggregator_ip if _has_cpu_route(client) \
                else None
            try:
                sync_routes(client, live, name, ecmp=self.settings.ecmp, to_cpu=cpu)
            except P4RuntimeClientError as e:
                self.log("error", f"switch {name}", detail=f"routes: {e}")

    # ------------------------------------------------------------ the agents

    def _on_message(self, link: AgentLink, msg: dict[str, Any]) -> None:
        with self.cond:
            assert link.job is not None and link.rank is not None
            w = self.watches.get(link.job)
            if w is None or not 0 <= link.rank < len(w.workers):
                return
            op = msg["op"]
            if op == HELLO:
                w.links[link.rank] = link
                w.seen.add(link.rank)
                if msg.get("state") == "done":
                    w.done.add(link.rank)
            elif op == PROGRESS:
                w.answers.setdefault(int(msg["seq"]), {})[link.rank] = msg
                self.cond.notify_all()
            elif op == MOVING:
                rec = w.recoveries[-1] if w.recoveries else None
                if rec is not None and rec.moving is None and int(msg["seq"]) == w.seq:
                    rec.moving = float(msg["at"])
            elif op == UNSTALLED:
                w.stalled.discard(link.rank)
            elif op == STALLED:
                w.stalled.add(link.rank)
                self.queue.put(("hint", w.job_id, link.rank, float(msg.get("waited", 0)),
                                self.clock()))
            elif op == DONE:
                w.done.add(link.rank)
                if w.done_since is None:
                    w.done_since = self.clock()
                if len(w.done) == len(w.workers):
                    self._finish(w)

    def _on_close(self, link: AgentLink) -> None:
        with self.lock:
            if link.job is None or link.rank is None:
                return
            w = self.watches.get(link.job)
            if w is None or w.links.get(link.rank) is not link:
                return
            del w.links[link.rank]
            if link.rank not in w.done and w.state not in ("failed", "finished"):
                self.queue.put(("gone", w.job_id, link.rank))

    # ------------------------------------------------------------- take-over

    @classmethod
    def take_over(cls, topology: Topology, files: PipelineFiles,
                  settings: SupervisorSettings | None, *, state_path: str | Path,
                  hub_path: str | Path, election_id: tuple[int, int],
                  clock: Callable[[], float] = time.monotonic) -> Supervisor:
        """A new controller for a running fabric (see the module docstring): it
        connects to every switch that answers as the primary with ``election_id``
        (above its predecessor's), reads what they run, restores the saved jobs and
        puts back any of their entries a switch lacks."""
        ctl = Controller(topology, election_id=election_id)
        for name, sw in topology.switches.items():
            client = P4RuntimeClient(sw.grpc_address, device_id=sw.device_id,
                                     election_id=election_id, name=name, timeout=ctl.timeout)
            try:
                client.connect(timeout=2.0)
            except P4RuntimeClientError:
                client.close()
                continue
            ctl.clients[name] = client
        fresh = []
        for name, client in ctl.clients.items():
            try:
                client.fetch_pipeline()
            except P4RuntimeClientError:
                client.set_pipeline(files.p4info, files.config)
                fresh.append(name)
        ctl._pipeline_loaded()
        total = ctl.jobs.total_slots
        ctl.jobs = JobTable.load(topology, state_path, total)
        sup = cls(ctl, files, settings, state_path=state_path, hub_path=hub_path,
                  clock=clock)
        restored = sup._restore(fresh)
        for job in ctl.jobs.jobs.values():
            sup.watches[job.job_id] = JobWatch(job.job_id, job.workers, job.slots)
        sup.log("take-over", "controller", election_id=list(election_id),
                detail=f"{len(ctl.jobs.jobs)} job(s) from the saved state; "
                       f"{restored} entries put back; pipeline pushed to "
                       f"{', '.join(fresh) or 'no switch'}")
        return sup

    def _restore(self, fresh: list[str]) -> int:
        """Read every saved job's rows and multicast group back from its switches and
        install what is missing; the number of entries installed."""
        count = 0
        for job in self.ctl.jobs.jobs.values():
            for name, sw in job.switches.items():
                client = self.ctl.clients.get(name)
                if client is None:
                    continue
                if name in fresh:
                    self._install(job, name, reinstall=True)
                    count += len(sw.job_rows) + 1 + len(sw.rewrites)
                    continue
                rows = {_port_of(e) for e in client.read_table(JOB_TABLE)
                        if _job_of(e) == job.job_id}
                groups = {g.group_id for g in client.read_multicast_groups()}
                missing: list[Any] = []
                if sw.group.group_id not in groups:
                    missing.append(sw.group)
                missing += [r for r in sw.job_rows if _port_of(r) not in rows]
                for item in missing:
                    with contextlib.suppress(P4RuntimeClientError):
                        client.insert(item)
                        count += 1
        return count


def _port_of(entry: TableEntry) -> int:
    return _exact(entry.match["standard_metadata.ingress_port"])


def _job_of(entry: TableEntry) -> int:
    return _exact(entry.match["hdr.ina.job_id"])


def _exact(value: object) -> int:
    """An exact match's value, as written (a number) or as read back (``Exact``)."""
    return int(getattr(value, "value", value))  # type: ignore[call-overload]


def _has_cpu_route(client: P4RuntimeClient) -> bool:
    try:
        schema = client.schema
        schema.table_action(schema.table(ROUTE_TABLE), CPU_ACTION)
    except (SchemaError, P4RuntimeClientError):
        return False
    return True

