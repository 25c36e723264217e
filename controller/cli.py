"""``ina ctl``: the controller from the command line.

    ina ctl --topo topo.json topo init star,4     # write a topology file from a spec
    ina ctl --topo topo.json topo show
    ina ctl --topo topo.json setup [--program p4/aggregation.p4 | --p4info F --config F]
                                   [--no-routes | --no-ecmp]
    ina ctl --topo topo.json arp                  # the hosts' static ARP commands
    ina ctl --topo topo.json job create --id 1 --workers h1,h2,h3 [--slots 64] [--root s3]
    ina ctl --topo topo.json job show 1               # the job's tree
    ina ctl --topo topo.json job delete --id 1
    ina ctl --topo topo.json job list
    ina ctl --topo topo.json table dump s1 [ina_job]
    ina ctl --topo topo.json register read s1 ina_bitmap [INDEX]
    ina ctl --topo topo.json counters s1
    ina ctl --topo topo.json shell s1             # p4runtime-shell on that switch
    ina ctl apply s1-runtime.json --grpc-addr 127.0.0.1:50051 [--device-id 0]
                                  # a runtime file as p4lang's tutorials write them

Every command is one short-lived P4Runtime client per switch it needs. ``setup`` pushes
the pipeline to every switch (clearing their state) and installs the IPv4 routes, with
ECMP groups where a switch has several equal-cost next hops and its program has ECMP
(``--no-ecmp``: one shortest path each); the other commands use the pipeline the
switches run. The jobs live in a state file next to
the topology (``topo.jobs.json`` for ``topo.json``; ``--state`` to choose), which
``setup`` empties. Errors print as one ``ina ctl: error: ...`` message, exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.controller import Controller, InstalledRoutes, JobDeleteError, has_ecmp
from controller.errors import NoPipelineError, P4RuntimeClientError
from controller.jobs import DEFAULT_JOB_SLOTS, JobError, JobTable
from controller.pipeline import PipelineError, compile_pipeline, given_pipeline
from controller.routes import ECMP_TABLE, compute_arp
from controller.runtime_file import RuntimeFileError, apply_runtime_file, load_runtime_file
from controller.show import (
    ecmp_members,
    ecmp_note,
    format_entry,
    format_job,
    format_job_summary,
    format_topology,
    format_value,
)
from controller.topology import Topology, TopologyError

DEFAULT_PROGRAM = "p4/aggregation.p4"  # in the working directory, else in the project
ERRORS = (TopologyError, JobError, PipelineError, P4RuntimeClientError, JobDeleteError,
          RuntimeFileError, OSError)


class CtlError(Exception):
    pass


def _election(text: str) -> tuple[int, int]:
    high, sep, low = text.partition(",")
    try:
        return (int(high), int(low)) if sep else (0, int(high))
    except ValueError:
        raise argparse.ArgumentTypeError(f"election id {text!r} is not HIGH,LOW or a "
                                         "number") from None


def _job_id(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"job id {text!r} is not a number") from None


def add_ctl_parser(verbs: Any) -> None:
    """Register ``ina ctl`` in the ``ina`` verbs."""
    p = verbs.add_parser("ctl", help="the controller: setup, jobs, tables (P4Runtime)",
                         description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--topo", metavar="FILE",
                   help="the topology (JSON); every command but apply needs it")
    p.add_argument("--state", metavar="FILE",
                   help="the job state file (default: next to the topology, *.jobs.json)")
    p.add_argument("--timeout", type=float, default=5.0, metavar="S",
                   help="seconds to wait for a switch to answer (default 5)")
    p.add_argument("--election-id", type=_election, default=(0, 1), metavar="HIGH,LOW",
                   help="the P4Runtime election id (default 0,1)")
    p.set_defaults(func=cmd_ctl)
    cmds = p.add_subparsers(dest="ctl_command", required=True, metavar="COMMAND")

    topo = cmds.add_parser("topo", help="write or show the topology file")
    tcmds = topo.add_subparsers(dest="topo_command", required=True, metavar="ACTION")
    init = tcmds.add_parser("init", help="write the topology file from a spec (star,4, "
                            "fattree,4, net.yaml: see ina topo --help)")
    init.add_argument("spec", help="a topology spec, e.g. star,4 or fattree,4")
    init.set_defaults(ctl=ctl_topo_init)
    tcmds.add_parser("show", help="print the topology").set_defaults(ctl=ctl_topo_show)

    setup = cmds.add_parser("setup", help="push the pipeline to every switch, install routes")
    setup.add_argument("--program", help=f"P4 source for the built-in switch (default "
                       f"{DEFAULT_PROGRAM} unless --p4info/--config are given)")
    setup.add_argument("-I", dest="include_dirs", action="append", default=[],
                       metavar="DIR", help="include directory for --program")
    setup.add_argument("-D", dest="defines", action="append", default=[],
                       metavar="NAME[=VAL]", help="macro for --program (INA_K, INA_SLOTS)")
    setup.add_argument("--p4info", help="a compiled P4Info (with --config)")
    setup.add_argument("--config", help="the device config: `ina p4c -o` output for the "
                       "built-in switch, BMv2 JSON for simple_switch_grpc")
    routing = setup.add_mutually_exclusive_group()
    routing.add_argument("--no-routes", action="store_true", help="do not install routes")
    routing.add_argument("--no-ecmp", action="store_true",
                         help="one shortest path per host and switch (lowest port), no "
                              "ECMP groups")
    setup.set_defaults(ctl=ctl_setup)

    cmds.add_parser("arp", help="print the hosts' static ARP commands (Mininet CLI form)"
                    ).set_defaults(ctl=ctl_arp)

    job = cmds.add_parser("job", help="create, show, delete or list aggregation jobs")
    jcmds = job.add_subparsers(dest="job_command", required=True, metavar="ACTION")
    create = jcmds.add_parser("create", help="create a job")
    create.add_argument("--id", dest="job_id", type=_job_id, required=True)
    create.add_argument("--workers", required=True, help="hosts, comma separated")
    create.add_argument("--slots", type=int, default=DEFAULT_JOB_SLOTS,
                        help=f"slots of the job's region (>= the workers' window; "
                        f"default {DEFAULT_JOB_SLOTS})")
    create.add_argument("--root", metavar="SWITCH",
                        help="the root of the job's aggregation tree (default: the switch "
                             "that makes the tree shallowest and fits)")
    create.set_defaults(ctl=ctl_job_create)
    show = jcmds.add_parser("show", help="print a job's aggregation tree")
    show.add_argument("job_id", type=_job_id, metavar="JOB")
    show.set_defaults(ctl=ctl_job_show)
    delete = jcmds.add_parser("delete", help="delete a job")
    delete.add_argument("--id", dest="job_id", type=_job_id, required=True)
    delete.set_defaults(ctl=ctl_job_delete)
    jcmds.add_parser("list", help="list the jobs").set_defaults(ctl=ctl_job_list)

    table = cmds.add_parser("table", help="read tables")
    tcmd = table.add_subparsers(dest="table_command", required=True, metavar="ACTION")
    dump = tcmd.add_parser("dump", help="print the entries of a switch's tables")
    dump.add_argument("switch")
    dump.add_argument("table", nargs="?", help="one table (default: all)")
    dump.set_defaults(ctl=ctl_table_dump)

    reg = cmds.add_parser("register", help="read registers")
    rcmd = reg.add_subparsers(dest="register_command", required=True, metavar="ACTION")
    read = rcmd.add_parser("read", help="print register cells")
    read.add_argument("switch")
    read.add_argument("name")
    read.add_argument("index", nargs="?", type=int)
    read.set_defaults(ctl=ctl_register_read)

    counters = cmds.add_parser("counters", help="print the P4 counters of a switch")
    counters.add_argument("switch")
    counters.set_defaults(ctl=ctl_counters)

    shell = cmds.add_parser("shell", help="run p4runtime-shell connected to a switch")
    shell.add_argument("switch")
    shell.set_defaults(ctl=ctl_shell)

    apply = cmds.add_parser("apply", help="apply a runtime file as p4lang's tutorials write "
                            "them (sX-runtime.json: pipeline, table entries with default "
                            "actions, multicast groups, clone sessions) to one switch")
    apply.add_argument("file", metavar="RUNTIME.json")
    apply.add_argument("--grpc-addr", required=True, metavar="HOST:PORT",
                       help="the switch's P4Runtime address")
    apply.add_argument("--device-id", type=_job_id, default=0, metavar="N",
                       help="the switch's device id (default 0, as simple_switch_grpc's)")
    apply.set_defaults(ctl=ctl_apply)


def main(argv: list[str]) -> int:
    """``ina ctl ARGV...`` on its own (as ``ina`` runs it)."""
    parser = argparse.ArgumentParser(prog="ina")
    add_ctl_parser(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["ctl", *argv])
    return int(args.func(args))


def cmd_ctl(args: argparse.Namespace) -> int:
    if args.topo is None and args.ctl_command != "apply":  # a usage error: status 2
        print(f"ina ctl: error: {args.ctl_command}: --topo FILE is required (ina ctl --topo "
              f"FILE {args.ctl_command} ...)", file=sys.stderr)
        return 2
    try:
        return int(args.ctl(args) or 0)
    except (CtlError, *ERRORS) as e:
        text = str(e) if not isinstance(e, OSError) or not e.filename else (
            f"{e.filename}: {e.strerror}")
        if isinstance(e, NoPipelineError):
            text += f"; run `ina ctl --topo {args.topo} setup` first"
        print(f"ina ctl: error: {text}", file=sys.stderr)
        return 1


# ------------------------------------------------------------------------ helpers


def _topology(args: argparse.Namespace) -> Topology:
    return Topology.load(args.topo)


def _state_path(args: argparse.Namespace) -> Path:
    if args.state:
        return Path(args.state)
    topo = Path(args.topo)
    return topo.with_name(f"{topo.stem}.jobs.json")


def _controller(args: argparse.Namespace, topo: Topology, jobs: JobTable | None = None,
                primary: bool = True) -> Controller:
    return Controller(topo, election_id=args.election_id, timeout=args.timeout, jobs=jobs,
                      require_primary=primary)


def _read_only(args: argparse.Namespace, switch: str,
               body: Callable[[Controller], int]) -> int:
    """Connect to one switch (not necessarily as primary), load its P4Info, run."""
    topo = _topology(args)
    topo.switch(switch)
    with _controller(args, topo, primary=False).connect([switch]) as ctl:
        ctl.use_running_pipeline()
        return body(ctl)


# ----------------------------------------------------------------------- commands


def ctl_topo_init(args: argparse.Namespace) -> int:
    from topologies.spec import TopoSpecError, parse_topo_spec

    try:
        mininet_topo = parse_topo_spec(args.spec)
    except TopoSpecError as e:
        raise CtlError(str(e)) from None
    topo = Topology.from_mininet(mininet_topo)
    topo.save(args.topo)
    print(f"wrote {args.topo}: {len(topo.hosts)} hosts, {len(topo.switches)} switch(es)")
    return 0


def ctl_topo_show(args: argparse.Namespace) -> int:
    print("\n".join(format_topology(_topology(args))))
    return 0


def ctl_setup(args: argparse.Namespace) -> int:
    from ina.cli import parse_defines

    topo = _topology(args)
    if (args.p4info is None) != (args.config is None):
        raise CtlError("setup: --p4info and --config go together")
    if args.p4info and args.program:
        raise CtlError("setup: give either --program or --p4info/--config")
    with tempfile.TemporaryDirectory(prefix="ina-ctl-") as tmp:
        if args.p4info:
            files = given_pipeline(args.p4info, args.config)
        else:
            files = compile_pipeline(args.program or _default_program(), tmp,
                                     args.include_dirs, parse_defines(args.defines))
        with _controller(args, topo) as ctl:
            ctl.push_pipeline(files)
            routes = (InstalledRoutes() if args.no_routes
                      else ctl.install_routes(ecmp=not args.no_ecmp))
            ctl.jobs.save(_state_path(args))
    over = (f" ({routes.ecmp_routes} over {routes.groups} ECMP groups)" if routes.groups
            else "")
    print(f"pipeline set on {', '.join(topo.switches)}; {routes.routes} routes "
          f"installed{over}; no jobs")
    print(f"hosts need static ARP entries: ina ctl --topo {args.topo} arp")
    return 0


def _default_program() -> Path:
    here = Path(DEFAULT_PROGRAM)
    return here if here.is_file() else Path(__file__).resolve().parents[1] / DEFAULT_PROGRAM


def ctl_arp(args: argparse.Namespace) -> int:
    for host, entries in compute_arp(_topology(args)).items():
        for e in entries:
            print(f"{host} {' '.join(e.command())}")
    return 0


def _jobs(args: argparse.Namespace, topo: Topology) -> JobTable:
    return JobTable.load(topo, _state_path(args))


def ctl_job_create(args: argparse.Namespace) -> int:
    topo = _topology(args)
    workers = [w.strip() for w in args.workers.split(",") if w.strip()]
    jobs = _jobs(args, topo)
    with _controller(args, topo, jobs) as ctl:
        ctl.use_running_pipeline()
        job = ctl.create_job(args.job_id, workers, args.slots, root=args.root)
    jobs.save(_state_path(args))
    print("\n".join(format_job(job)))
    return 0


def ctl_job_delete(args: argparse.Namespace) -> int:
    topo = _topology(args)
    jobs = _jobs(args, topo)
    jobs.get(args.job_id)
    with _controller(args, topo, jobs) as ctl:
        ctl.use_running_pipeline()
        try:
            ctl.delete_job(args.job_id)
        finally:
            jobs.save(_state_path(args))
    print(f"job {args.job_id} deleted")
    return 0


def ctl_job_list(args: argparse.Namespace) -> int:
    jobs = _jobs(args, _topology(args))
    if not jobs.jobs:
        print("no jobs")
    for job_id in sorted(jobs.jobs):
        print(format_job_summary(jobs.jobs[job_id]))
    return 0


def ctl_job_show(args: argparse.Namespace) -> int:
    jobs = _jobs(args, _topology(args))
    print("\n".join(format_job(jobs.get(args.job_id))))
    return 0


def ctl_table_dump(args: argparse.Namespace) -> int:
    def body(ctl: Controller) -> int:
        client = ctl.client(args.switch)
        schema = client.schema
        tables = ([schema.table(args.table)] if args.table
                  else sorted(schema.info.tables, key=lambda t: t.preamble.name))
        members = ecmp_members(client.read_table(ECMP_TABLE)) if has_ecmp(client) else {}
        for t in tables:
            entries = client.read_table(t.preamble.name)
            print(f"{t.preamble.name}: {len(entries)} entries")
            for e in entries:
                print(f"  {format_entry(schema, e)}{ecmp_note(e, members)}")
        return 0

    return _read_only(args, args.switch, body)


def ctl_register_read(args: argparse.Namespace) -> int:
    def body(ctl: Controller) -> int:
        client = ctl.client(args.switch)
        reg = client.schema.register(args.name)
        if args.index is not None and not 0 <= args.index < reg.size:
            raise CtlError(f"register {reg.preamble.name} has {reg.size} cells; index "
                           f"{args.index} is out of range")
        width = reg.type_spec.bitstring.bit.bitwidth or reg.type_spec.bitstring.int.bitwidth
        for index, value in sorted(client.read_register(args.name, args.index).items()):
            shown = value if value < 0 else format_value(value, width, args.name)
            print(f"{reg.preamble.name}[{index}] = {shown}")
        return 0

    return _read_only(args, args.switch, body)


def ctl_counters(args: argparse.Namespace) -> int:
    def body(ctl: Controller) -> int:
        client = ctl.client(args.switch)
        counters = client.schema.info.counters
        if not counters:
            sw = ctl.topology.switch(args.switch)
            print(f"the program on {args.switch} has no indexed counters; port counters: "
                  f"ina switch-cli --device-id {sw.device_id} counters")
        for c in counters:
            for index, value in sorted(client.read_counter(c.preamble.name).items()):
                print(f"{c.preamble.name}[{index}]: {value.packets} packets, "
                      f"{value.bytes} bytes")
        return 0

    return _read_only(args, args.switch, body)


def shell_argv(args: argparse.Namespace, topo: Topology) -> list[str]:
    sw = topo.switch(args.switch)
    high, low = args.election_id
    return [sys.executable, "-m", "p4runtime_sh", "--grpc-addr", sw.grpc_address,
            "--device-id", str(sw.device_id), "--election-id", f"{high},{low}"]


def ctl_shell(args: argparse.Namespace) -> int:
    argv = shell_argv(args, _topology(args))
    os.execv(argv[0], argv)
    return 0  # not reached


def ctl_apply(args: argparse.Namespace) -> int:
    from controller.p4runtime_client import P4RuntimeClient

    rf = load_runtime_file(args.file)
    with P4RuntimeClient(args.grpc_addr, args.device_id, args.election_id,
                         timeout=args.timeout) as client:
        counts = apply_runtime_file(client, rf)
    done = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"{args.file}: pipeline set on device {args.device_id} at {args.grpc_addr}; {done}")
    return 0
