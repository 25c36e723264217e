"""A running Mininet network ready for aggregation jobs.

``AllReduceNet.start`` builds the topology (``topologies.spec``), starts its P4Runtime
switches (``ina switch`` or ``simple_switch_grpc``, without a program; logs in
``logs/``, and with ``pcap`` every port's capture in ``pcaps/``), compiles
``p4/aggregation.p4`` into the work directory, and lets the controller push it, install
the IPv4 routes and give the hosts their static ARP entries; the delay and loss of the
topology's links become the built-in switch ports' impairments (BMv2 has none to give
them). Then any number of jobs
run in it (``run_agents``), one after another or at once: ``ina run`` runs one,
the end-to-end tests many. ``stop`` always tears the network down.

With ``cluster`` (a cluster file, ``topologies.cluster``) the network runs on several
servers: the agents of remote hosts run there with the server's interpreter and write
into the network's work directory on it, and their files are fetched back to the
paths asked for.

``supervise`` puts the controller on watch (``controller.supervisor``: liveness probes
through the switches' CPU port, recovery of the jobs' trees, the agents' control
channel); the in-network agents then get ``--control``. ``kill_controller`` ends the
controller as a crash would and ``start_controller`` has a new one take over from the
switches and the saved job state (``topology.jobs.json`` in the work directory).

The network holds ``topologies.netutil.mininet_lock`` while it runs (Mininet's
interface names are global).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from controller.controller import Controller, install_static_arp
from controller.jobs import Job
from controller.pipeline import PipelineFiles
from controller.supervisor import Supervisor, SupervisorSettings
from controller.topology import Topology, sorted_names
from experiments.jobspec import TARGETS, AgentSpec
from experiments.options import PROGRAM_SLOTS, RunError
from topologies.builder import combine_impairments, link_impairments
from topologies.kernel_impair import (
    HostLink,
    KernelImpairError,
    clear_cuts,
    impair_host_links,
)
from topologies.netutil import mininet_lock
from topologies.nodes import (
    LOG_ROOT,
    MAX_SOCKET_PATH,
    BMv2Switch,
    InaSwitch,
    bmv2_missing,
    ina_command,
)
from topologies.spec import parse_topo_spec

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "p4" / "aggregation.p4"
AGENT_TIMEOUT = 300.0  # seconds an agent may take, start to finish
ELECTION_ID = (0, 2)
"""The network's controller is the primary with this election id, above ``ina ctl``'s
default (0, 1): ``ina ctl`` can read the running switches as a backup meanwhile. A
controller that takes over after one died uses the next one up: (0, 3), (0, 4), ..."""
CPU_PORT = 255
"""Every switch's CPU port (``--cpu-port``; ``p4/aggregation.p4``'s ``INA_CPU_PORT``)."""
AGENT_COMMAND = [sys.executable, "-m", "hosts.agent_cli"]
"""``ina agent`` without the rest of ``ina``'s verbs, whose imports (gRPC, Mininet)
would double the start-up time of every agent."""


@dataclass
class AgentOutcome:
    host: str
    returncode: int
    stdout: str
    stderr: str


def target_missing(target: str) -> str | None:
    """Why ``target`` cannot run here (None when it can)."""
    if target not in TARGETS:
        return f"unknown target {target!r} (targets: {', '.join(TARGETS)})"
    return bmv2_missing() if target == "bmv2" else None


@dataclass
class AllReduceNet:
    topo_spec: str
    work_dir: Path
    target: str = "builtin"
    bw: float | None = None
    k: int = 64
    seed: int | None = 1
    pcap: bool = False
    ecmp: bool = True  # IPv4 routes over equal-cost paths (else one shortest path)
    cluster: str | Path | None = None  # a cluster file: the network on several servers
    slots: int = PROGRAM_SLOTS  # the program's register slots (INA_SLOTS)
    net: Any = None
    controller: Controller | None = None
    topology: Topology | None = None
    hosts: list[str] = field(default_factory=list)
    agent_watch: Callable[[dict[str, int]], None] | None = None
    """Called with the agents' PIDs (host -> PID) the moment they are released."""
    link_impairments: dict[str, dict[int, str]] = field(default_factory=dict)
    """switch -> port -> the impairment of the topology's link there."""
    files: PipelineFiles | None = None
    supervisor: Supervisor | None = None
    supervisors: list[Supervisor] = field(default_factory=list)
    """Every supervisor this network had, killed ones included (their logs)."""
    agent_procs: dict[str, Any] = field(default_factory=dict)
    """host -> the agent process running there (while ``run_agents`` runs)."""
    _starter: ThreadPoolExecutor | None = None
    _stack: ExitStack = field(default_factory=ExitStack)

    # ------------------------------------------------------------- lifecycle

    def start(self) -> AllReduceNet:
        why = target_missing(self.target)
        if why:
            raise RunError(f"target {self.target}: {why}")
        spec = self.topo_spec + (f",bw={self.bw:g}" if self.bw else "")
        topo = parse_topo_spec(spec)
        from mininet.log import setLogLevel
        from mininet.net import Mininet

        setLogLevel("critical")  # tc warnings (htb quantum) are not errors
        logs = self.work_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        capture: dict[str, Any] = ({"pcap": True, "pcap_dir": self.work_dir / "pcaps"}
                                   if self.pcap else {})
        self.link_impairments = link_impairments(topo)
        if self.target == "builtin":
            node: Any = partial(InaSwitch, log_dir=logs, seed=self.seed, cpu_port=CPU_PORT,
                                **capture)
        elif self.link_impairments:
            raise RunError(f"target {self.target}: the topology's links have delays or "
                           "losses, which need the built-in switch")
        else:
            node = partial(BMv2Switch, log_dir=logs, cpu_port=CPU_PORT, **capture)
        lock = self._stack.enter_context(mininet_lock())
        clear_cuts()  # a link an earlier run cut and never restored
        self._starter = ThreadPoolExecutor(1, thread_name_prefix="switch-starter")
        self._stack.callback(self._starter.shutdown)
        if self.cluster is None:
            self.net = Mininet(topo=topo, controller=None, build=False, switch=node)
        else:
            self.net = cluster_mininet(self.cluster, topo, node, lock)
        self._stack.callback(self.net.stop)
        try:
            if self.cluster is not None:
                build_cluster(self.net)
            else:
                self.net.build()
            self.net.start()
            self.topology = Topology.from_mininet(topo, self.net)
            self.hosts = sorted_names(self.topology.hosts)
            files = self.files = self.compile(self.work_dir / "build")
            self.controller = Controller(self.topology,
                                         election_id=ELECTION_ID).connect()
            self._stack.callback(self._close_controller)
            self.controller.push_pipeline(files)
            self.controller.install_routes(ecmp=self.ecmp)
            install_static_arp(self.net, self.topology)
            if self.link_impairments:
                self.impair("none")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self._stack.close()

    def __enter__(self) -> AllReduceNet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def compile(self, out: Path) -> PipelineFiles:
        """``p4/aggregation.p4`` for the target, with ``INA_K`` = k and ``INA_SLOTS`` =
        slots, into ``out``."""
        out.mkdir(parents=True, exist_ok=True)
        p4info, config = out / "aggregation.p4info.txtpb", out / "aggregation.json"
        defines = ["-D", f"INA_K={self.k}", "-D", f"INA_SLOTS={self.slots}"]
        if self.target == "builtin":
            argv = [*ina_command(), "p4c", str(PROGRAM), *defines,
                    "--p4runtime-files", str(p4info), "-o", str(config)]
        else:
            argv = ["p4c-bm2-ss", *defines, "--p4runtime-files", str(p4info),
                    "-o", str(config), str(PROGRAM)]
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RunError(f"{' '.join(argv)} failed (status {proc.returncode}):\n"
                           f"{(proc.stderr or proc.stdout).strip()}")
        return PipelineFiles(p4info, config)

    # --------------------------------------------------------------- control

    @property
    def ctl(self) -> Controller:
        if self.controller is None:
            raise RunError("the network is not started" if self.files is None
                           else "the network's controller is down")
        return self.controller

    # ------------------------------------------------------------ supervision

    @property
    def ctl_topology(self) -> Topology:
        """The controller's model of the network (also while the controller is down)."""
        if self.topology is None:
            raise RunError("the network is not started")
        return self.topology

    @property
    def control_socket(self) -> Path:
        """The agents' control channel (in the work directory, or in ``LOG_ROOT`` under
        a digest of that path when it is too long for AF_UNIX)."""
        path = self.work_dir.resolve() / "control.sock"
        if len(str(path).encode()) > MAX_SOCKET_PATH:
            digest = hashlib.sha1(str(path).encode()).hexdigest()[:16]
            LOG_ROOT.mkdir(parents=True, exist_ok=True)
            path = LOG_ROOT / f"control-{digest}.sock"
        return path

    @property
    def job_state(self) -> Path:
        """Where the controller saves its jobs, in ``ina ctl``'s format and place (beside
        ``topology.json`` in an ``ina net`` or ``ina run --cli`` session)."""
        return self.work_dir / "topology.jobs.json"

    def supervise(self, settings: SupervisorSettings | None = None) -> Supervisor:
        """Put the controller on watch (see the module docstring)."""
        if self.supervisor is not None:
            return self.supervisor
        assert self.files is not None
        sup = Supervisor(self.ctl, self.files, settings or SupervisorSettings(ecmp=self.ecmp),
                         state_path=self.job_state, hub_path=self.control_socket)
        self.supervisor = sup.start()
        self.supervisors.append(sup)
        return sup

    def unsupervise(self) -> None:
        """Stop watching; a controller that is down is started again first."""
        if self.controller is None:
            self.start_controller()
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None

    def kill_controller(self) -> None:
        """The controller dies (see ``Supervisor.kill``); the switches run on."""
        if self.supervisor is not None:
            self.supervisor.kill()
            self.supervisor = None
        elif self.controller is not None:
            self.controller.close()
        self.controller = None

    def start_controller(self) -> Supervisor:
        """A new controller takes over the running switches (``Supervisor.take_over``)
        with the next election id, and watches them."""
        if self.controller is not None:
            self.kill_controller()
        assert self.files is not None and self.topology is not None
        settings = self.supervisors[-1].settings if self.supervisors else \
            SupervisorSettings(ecmp=self.ecmp)
        election = (ELECTION_ID[0], ELECTION_ID[1] + len(self.supervisors))
        sup = Supervisor.take_over(self.topology, self.files, settings,
                                   state_path=self.job_state, hub_path=self.control_socket,
                                   election_id=election)
        self.controller = sup.ctl
        self.supervisor = sup.start()
        self.supervisors.append(sup)
        return sup

    def start_switch(self, name: str) -> None:
        """Start switch ``name``'s process again (a fresh one: no program, tables or
        registers), from a thread that lives as long as the network: a switch gets the
        parent-death signal when the thread that started it ends
        (``topologies.nodes.end_with_parent``)."""
        if self._starter is None:
            raise RunError("the network is not started")
        sw = self.net.get(name)

        def start() -> None:
            sw.start([])
            sw.wait_ready()

        self._starter.submit(start).result()

    def _close_controller(self) -> None:
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None
        if self.controller is not None:
            self.controller.close()

    def switches(self) -> list[Any]:
        return [self.net.get(name) for name in sorted_names(self.ctl.topology.switches)]

    def local_switches(self) -> list[Any]:
        """The switches that run on this machine (all of them but a cluster's remote
        ones): the processes and interfaces this machine can watch."""
        return [sw for sw in self.switches() if not getattr(sw, "isRemote", False)]

    def impair(self, spec: str) -> None:
        """Set ``spec`` (``loss=0.01,direction=both``; ``none`` clears) on every port of
        every switch, on top of the topology's own link impairments: through ``ina
        switch-cli`` on the built-in switch, in the kernel on BMv2
        (``topologies.kernel_impair``: loss and duplication, host links only)."""
        if self.target != "builtin":
            try:
                topo = self.ctl.topology
                impair_host_links(self._host_links(), spec, has_switch_links=any(
                    topo.switch_neighbours(sw) for sw in topo.switches))
            except KernelImpairError as e:
                raise RunError(f"impairment {spec!r} on {self.target}: {e}") from None
            return
        for sw in self.switches():
            settings = [("all", spec)]
            try:
                settings += [(str(port), combine_impairments(link, spec)) for port, link
                             in sorted(self.link_impairments.get(sw.name, {}).items())]
            except ValueError as e:
                raise RunError(f"impairment {spec!r}: {e}") from None
            for port, setting in settings:
                reply = sw.cli("impair", port, setting)
                if reply.returncode != 0:
                    raise RunError(f"ina switch-cli impair {port} {setting} on {sw.name}: "
                                   f"{reply.stderr.strip()}")

    def _host_links(self) -> list[HostLink]:
        out = []
        for name in self.hosts:
            host = self.net.get(name)
            for intf in host.intfList():
                if intf.link is None:
                    continue
                peer = intf.link.intf2 if intf.link.intf1 is intf else intf.link.intf1
                out.append(HostLink(host, intf.name, peer.name))
        return out

    def create_job(self, job_id: int, workers: list[str], slots: int,
                   root: str | None = None, shrink: bool = False) -> Job:
        if self.supervisor is not None:
            return self.supervisor.create_job(job_id, workers, slots, root, shrink=shrink)
        return self.ctl.create_job(job_id, workers, slots=slots, root=root, shrink=shrink)

    def delete_job(self, job_id: int) -> None:
        if self.controller is None and self.files is not None:
            self.start_controller()  # the controller died: a new one removes the job
        if self.supervisor is not None:
            self.supervisor.delete_job(job_id)
        else:
            self.ctl.delete_job(job_id)

    # ---------------------------------------------------------------- agents

    def run_agents(self, agents: list[AgentSpec], timeout: float = AGENT_TIMEOUT,
                   starts: list[float] | None = None) -> list[AgentOutcome]:
        """Start every agent in its host, wait until all are ready, release them at
        once (or each ``starts[i]`` seconds after the first) and wait for all to
        finish."""
        starts = starts or [0.0] * len(agents)
        procs = []
        try:
            for a in agents:
                argv = [*agent_command(self.net.get(a.host), a), *a.args,
                        *agent_files(self.net.get(a.host), a), "--start-on-stdin"]
                procs.append(self.net.get(a.host).popen(
                    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True, cwd=str(ROOT)))
            self.agent_procs = {a.host: p for a, p in zip(agents, procs, strict=True)}
            for a, p in zip(agents, procs, strict=True):
                line = p.stdout.readline()
                if line.strip() != "ready":
                    p.wait(timeout=10)
                    raise RunError(f"agent on {a.host} did not get ready (status "
                                   f"{p.returncode}): {p.stderr.read().strip()}")
            if self.agent_watch is not None:
                self.agent_watch({a.host: p.pid for a, p in zip(agents, procs, strict=True)
                                  if not getattr(self.net.get(a.host), "isRemote", False)})
            released = time.monotonic()
            for start, p in sorted(zip(starts, procs, strict=True), key=lambda sp: sp[0]):
                time.sleep(max(released + start - time.monotonic(), 0.0))
                try:
                    p.stdin.write("go\n")
                    p.stdin.flush()
                except BrokenPipeError:
                    pass  # it died waiting: its exit status and stderr say why
            deadline = time.monotonic() + timeout
            out = []
            for a, p in zip(agents, procs, strict=True):
                try:
                    stdout, stderr = p.communicate(timeout=max(deadline - time.monotonic(), 1))
                except subprocess.TimeoutExpired:
                    raise RunError(f"agent on {a.host} did not finish within "
                                   f"{timeout:g} s") from None
                out.append(AgentOutcome(a.host, p.returncode, stdout, stderr))
            if self.cluster is not None:
                self.net.fetch_files([(a.host, path) for a in agents
                                      for path in (a.output, a.stats)])
            return out
        finally:
            self.agent_procs = {}
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()


def agent_command(node: Any, agent: AgentSpec) -> list[str]:
    """The agent's program (``ina agent`` by default) as ``node``'s server runs it: with
    the server's interpreter where it is this one's."""
    command = list(agent.command or AGENT_COMMAND)
    python = getattr(node, "python", None)
    if python and command and command[0] == sys.executable:
        command[0] = python
    return command


def agent_files(node: Any, agent: AgentSpec) -> list[str]:
    """The agent's ``--output`` and ``--stats``, where ``node``'s server writes them."""
    where = getattr(node, "remote_path", None)
    if where is None:
        return ["--output", str(agent.output), "--stats", str(agent.stats)]
    return ["--output", where(agent.output, "agents"), "--stats", where(agent.stats, "agents")]


def cluster_mininet(cluster: str | Path, topo: Any, switch: Any, lock: Any) -> Any:
    """The ``ClusterMininet`` of a cluster file for ``topo`` (its guard here holds the
    Mininet ``lock`` until it has cleaned up); ``RunError`` for a bad file or a topology
    it cannot place."""
    from topologies.cluster.net import ClusterMininet
    from topologies.cluster.placement import PlacementError
    from topologies.cluster.spec import ClusterFileError, load_cluster_file

    try:
        return ClusterMininet(load_cluster_file(cluster), topo, switch, lock=lock,
                              controller=None, build=False)
    except (ClusterFileError, PlacementError) as e:
        raise RunError(str(e)) from None


def build_cluster(net: Any) -> None:
    """Build a ``ClusterMininet``; ``RunError`` naming the server that failed."""
    from topologies.cluster.net import ClusterError
    from topologies.cluster.ssh import SshError

    try:
        net.build()
    except (ClusterError, SshError) as e:
        raise RunError(str(e)) from None


def need_root() -> str | None:
    """Why a Mininet run is impossible here (None when it is possible)."""
    import os
    import shutil

    if os.geteuid() != 0:
        return "needs root (Mininet)"
    if shutil.which("mnexec") is None:
        return "needs Mininet's mnexec"
    return None

