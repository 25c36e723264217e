"""Working inside the network: ``ina net SPEC`` and ``ina run --cli``.

Both start the network as ``ina run`` does (``experiments.allreduce_net``: switches,
the pipeline, routes, static ARP, the links' impairments), print what runs where, and
leave the user at Mininet's ``mininet>`` prompt (hosts, ``pingall``, an agent by hand);
leaving it (``exit`` or Ctrl-D) tears everything down. ``ina run --cli`` also sets up
the point's job as ``ina run`` would (for ``ina``, the job on the switches) and writes
``agents.cli``, a Mininet script that runs the job's agents and waits for them all
(``source RUN/agents.cli`` at the prompt). The run directory keeps the switch logs
(``logs/``), the captures (``pcaps/``, with ``--pcap``), the agents' results and stats
(``agents/``), and the controller's view (``topology.json``, ``topology.jobs.json``),
so ``ina ctl --topo RUN/topology.json ...`` reads the running switches from another
shell (the session's controller stays the primary). SIGTERM ends the session as
``exit`` does, network torn down.

The session's controller watches the network (``controller.supervisor``: probes every
``--probe-period``, recovery of the job's tree, ``--fallback``, ``--hold``), and the
prompt has one more command: ``fault SPEC`` does a fault now, or ``at TIME`` from now
(``fault link s1-s3 down``, ``fault switch s2 restart``, ``fault controller restart at
2s``, ``fault host h3 down``; ``experiments.faults``), and ``fault`` alone lists what
the controller saw and did since the session started. Not on a cluster (the faults and
the agents' control channel are this machine's).
"""

from __future__ import annotations

import re
import shlex
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from controller.supervisor import SupervisorSettings
from experiments.allreduce_net import AllReduceNet, agent_files, need_root
from experiments.jobs import get_algorithm
from experiments.options import RunError, RunOptions
from experiments.run_allreduce import impairment_spec
from experiments.rundir import RunDir
from topologies.nodes import ina_command

JOB_ID = 1


def run_interactive(options: RunOptions, with_job: bool, stdin: TextIO | None = None,
                    out: TextIO | None = None) -> Path:
    """The session (see the module docstring); the run directory."""
    out = out or sys.stdout
    why = need_root()
    if why:
        raise RunError(f"the network {why}")
    name = ("cli-" if with_job else "net-") + _slug(options.topo)
    run_dir = RunDir.create(Path(options.runs_dir).resolve(), name)
    net = AllReduceNet(options.topo, run_dir.path, options.target, options.bw, options.k,
                       pcap=options.pcap, ecmp=options.routing == "ecmp",
                       cluster=options.cluster, slots=options.slots)
    with net:
        net.impair(impairment_spec(options.loss, options.duplicate) or "none")
        if options.cluster is None:
            net.supervise(supervisor_settings(options, net.ecmp))
        topology = net.ctl.topology
        topology.save(run_dir.path / "topology.json")
        lines = [f"network {options.topo} is up: {len(topology.switches)} switches "
                 f"({_target(options.target)}), {len(topology.hosts)} hosts; run directory "
                 f"{run_dir.path}",
                 f"  switch logs in logs/{', captures in pcaps/' if options.pcap else ''}; "
                 f"the switches from another shell: ina ctl --topo "
                 f"{run_dir.path / 'topology.json'} ..."]
        if options.cluster:
            lines += cluster_lines(net)
        with _job(net, options, run_dir) if with_job else _nothing() as job_lines:
            lines += job_lines
            lines.append("leave with exit (or Ctrl-D): the network is torn down")
            print("\n".join(lines), file=out, flush=True)
            prompt(net, stdin)
    print(f"network {options.topo} torn down; run directory {run_dir.path}", file=out)
    return run_dir.path


def run_exercise_interactive(topo_file: str, program: str | None, target: str, pcap: bool,
                             runs_dir: str, stdin: TextIO | None = None,
                             out: TextIO | None = None) -> Path:
    """``ina net --topo FILE``: the network of a topology.json as p4lang's tutorials
    write it (``experiments.exercise_net``), at the ``mininet>`` prompt; the run
    directory (``logs/``, ``pcaps/``)."""
    from experiments.exercise_net import ExerciseNet
    from topologies.exercise_topo import read_exercise_topology
    from topologies.family import TopoSpecError

    out = out or sys.stdout
    why = need_root()
    if why:
        raise RunError(f"the network {why}")
    try:
        topology = read_exercise_topology(topo_file)
    except TopoSpecError as e:
        raise RunError(str(e)) from None
    if program is not None and not Path(program).is_file():
        raise RunError(f"--program {program}: no such file")
    run_dir = RunDir.create(Path(runs_dir).resolve(), "net-" + _slug(Path(topo_file).parent.name
                                                                      or "exercise"))
    with ExerciseNet(topology, run_dir.path, Path(program) if program else None, target,
                     pcap) as net:
        lines = [f"network {topo_file} is up: {len(topology.switches)} switches "
                 f"({_target(target)}), {len(topology.hosts)} hosts; run directory "
                 f"{run_dir.path}", *net.describe(),
                 f"  switch logs in logs/{', captures in pcaps/' if pcap else ''}",
                 "leave with exit (or Ctrl-D): the network is torn down"]
        print("\n".join(lines), file=out, flush=True)
        prompt(net, stdin)
    print(f"network {topo_file} torn down; run directory {run_dir.path}", file=out)
    return run_dir.path


def prompt(net: AllReduceNet | Any, stdin: TextIO | None) -> None:
    """Mininet's CLI on the running network (with the ``fault`` command where the
    controller watches it), until the user leaves it."""
    from mininet.cli import CLI
    from mininet.log import setLogLevel

    from experiments.fault_prompt import FaultCLI

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    setLogLevel("output")  # the CLI's answers; not the set-up chatter
    previous = signal.signal(signal.SIGTERM, leave)
    try:
        if isinstance(net, AllReduceNet) and net.supervisor is not None:
            FaultCLI(net, stdin=stdin or sys.stdin)
        else:
            CLI(net.net, stdin=stdin or sys.stdin)
    finally:
        signal.signal(signal.SIGTERM, previous)
        setLogLevel("critical")


@contextmanager
def _nothing() -> Iterator[list[str]]:
    yield []


@contextmanager
def _job(net: AllReduceNet, options: RunOptions, run_dir: RunDir) -> Iterator[list[str]]:
    """The point's job, set up for the session (and removed after it); the lines that
    tell the user about it."""
    from controller.show import format_job

    algorithm = get_algorithm(options.algo)
    job = options.job(JOB_ID, net.hosts)
    algorithm.prepare(net, job)
    try:
        agents = algorithm.agents(net, job, run_dir.sub("agents"))
        script = run_dir.path / "agents.cli"
        commands = []
        for i, a in enumerate(agents):
            node = net.net.get(a.host)
            ina = [node.python, "-m", "ina"] if getattr(node, "isRemote", False) else ina_command()
            argv = [*ina, "agent", *a.args, *agent_files(node, a)]
            background = " &" if i < len(agents) - 1 else ""
            commands.append(f"{a.host} {shlex.join(argv)}{background}")
        waits = [f"{a.host} wait" for a in agents[:-1]]  # for the background agents
        script.write_text("\n".join(commands + waits) + "\n")
        lines = [f"job {JOB_ID} ({options.algo}, {options.size} float32 values per worker) "
                 f"on {', '.join(job.workers)}"]
        if options.algo == "ina":
            net.ctl.jobs.save(run_dir.path / "topology.jobs.json")
            lines += format_job(net.ctl.jobs.get(JOB_ID))
        remote = [a.host for a in agents if getattr(net.net.get(a.host), "isRemote", False)]
        lines += [f"run its agents: source {script}",
                  f"  (their results: {run_dir.path / 'agents'}/job{JOB_ID}-HOST.npy"
                  + (f"; those of {', '.join(remote)} in the network's work directory on "
                     "their servers, removed with the network" if remote else "") + ")",
                  f"one by hand, e.g.: {commands[0].removesuffix(' &')}"]
        yield lines
    finally:
        algorithm.finish(net, job)


def cluster_lines(net: AllReduceNet) -> list[str]:
    """Where the nodes of a cluster network run."""
    from topologies.cluster.placement import format_placement

    cluster = net.net.cluster
    return [f"  on the servers of {cluster.path} ({cluster.tunnel} tunnels between them):",
            *format_placement(net.net.node_servers, cluster)]


def supervisor_settings(options: RunOptions, ecmp: bool) -> SupervisorSettings:
    return SupervisorSettings(probe_period=options.probe_period,
                              fallback=options.fallback, hold=options.hold_s, ecmp=ecmp)


def _target(target: str) -> str:
    return "ina switch" if target == "builtin" else "simple_switch_grpc"


def _slug(spec: str) -> str:
    """A name for the run directory: ``fattree4``, ``two_racks`` for a file."""
    head, _, rest = spec.partition(",")
    return re.sub(r"[^A-Za-z0-9_.-]", "", Path(head).stem + rest)
