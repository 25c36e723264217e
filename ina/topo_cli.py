"""``ina topo`` (a topology without running it) and ``ina net`` (running it).

    ina topo show SPEC [--job J [--workers H,H] [--root S] [--slots N]]
    ina topo draw SPEC [-o FILE.png] [--job J ...]
    ina net SPEC [--target builtin|bmv2] [--bw MBPS] [--k K] [--pcap] [--runs-dir DIR]

SPEC is a topology spec (``fattree,4``) or a topology file (``net.yaml``): see
``topologies.spec`` and ``topologies.topofile``. ``show`` prints the switches with what
sits behind each port, the hosts with their addresses, and the links that have a rate,
a delay or a loss; ``draw`` writes a picture (PNG, or SVG/PDF by the suffix). With
``--job J`` both add the aggregation tree that the controller would build for job J
(every host a worker unless ``--workers`` says otherwise; ``--root`` as ``ina ctl job
create --root``): ``show`` prints it as ``ina ctl job show`` does, ``draw`` draws it
over the topology with its root marked. ``ina net`` starts the network (as root) and
leaves you at the ``mininet>`` prompt (``experiments.interactive``). Errors print as
one ``ina topo: error: ...`` line, exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

FAMILIES_HELP = """topologies:
  star,N              N hosts on one switch
  linear,S,H          a chain of S switches, H hosts on each
  leafspine,L,S,H     L leaves on S spines, H hosts per leaf
  fattree,K           the k-ary fat-tree (K even; K = 4: 20 switches, 16 hosts)
  torus,X,Y[,H]       an X by Y 2-D torus of switches, H hosts on each (default 1)
  dragonfly,G,A,H     G groups of A switches, H hosts per switch
  FILE.yaml/.json     hosts, switches and links (bw, delay, loss) from a file
every spec takes bw=MBPS, the rate of every link: fattree,4,bw=100"""


def add_topo_parsers(verbs: Any) -> None:
    """Register ``ina topo`` and ``ina net``."""
    p = verbs.add_parser("topo", help="show or draw a topology (without running it)",
                         description=__doc__, epilog=FAMILIES_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="topo_action", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="print the topology (and a job's tree)",
                              epilog=FAMILIES_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("spec", metavar="SPEC", help="a topology spec or file")
    _job_options(show)
    show.set_defaults(func=cmd_topo_show)
    draw = actions.add_parser("draw", help="draw the topology (and a job's tree) into a "
                                           "picture", epilog=FAMILIES_HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    draw.add_argument("spec", metavar="SPEC", help="a topology spec or file")
    draw.add_argument("-o", "--output", metavar="FILE",
                      help="the picture (.png, .svg or .pdf; default: SPEC[-jobJ].png in "
                           "the current directory)")
    _job_options(draw)
    draw.set_defaults(func=cmd_topo_draw)

    p = verbs.add_parser("net", help="start a topology in Mininet and leave you at its "
                                     "prompt (root)",
                         description="Start the network of SPEC (switches, pipeline, "
                                     "routes, ARP) and leave you at the mininet> prompt; "
                                     "leaving it tears everything down.",
                         epilog=FAMILIES_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", metavar="SPEC", nargs="?", help="a topology spec or file")
    p.add_argument("--topo", metavar="FILE",
                   help="instead of SPEC: a topology.json as p4lang's tutorials write it "
                        "(hosts with ip, mac and commands; switches with runtime_json; links "
                        "of sN-pP); each switch is programmed from its runtime file, without "
                        "the project's routes and jobs")
    p.add_argument("--program", metavar="FILE",
                   help="with --topo: the compiled program of switches that name none "
                        "(ina p4c -o output; BMv2 JSON with --target bmv2)")
    p.add_argument("--target", default="builtin",
                   help="the switch: builtin (ina switch) or bmv2 (simple_switch_grpc)")
    p.add_argument("--bw", metavar="MBPS", help="the rate of every link in Mbit/s")
    p.add_argument("--k", default="64", metavar="K", help="values per aggregation packet")
    p.add_argument("--pcap", action="store_true",
                   help="keep every switch port's capture (RUN_DIR/pcaps/)")
    p.add_argument("--runs-dir", default="runs", metavar="DIR",
                   help="where the run directory goes (default runs/)")
    p.add_argument("--cluster", metavar="FILE.toml",
                   help="run the network on the servers of a cluster file")
    p.set_defaults(func=cmd_net)


def _job_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--job", type=int, metavar="J", help="add job J's aggregation tree")
    p.add_argument("--workers", metavar="H,H,...",
                   help="the job's workers (default: every host)")
    p.add_argument("--root", metavar="SWITCH", help="the root of the job's tree")
    p.add_argument("--slots", type=int, default=64, metavar="N",
                   help="the job's slots (default 64)")


class TopoCliError(Exception):
    pass


def _error(e: Exception, verb: str = "topo") -> int:
    print(f"ina {verb}: error: {e}", file=sys.stderr)
    return 1


def _load(spec: str) -> Any:
    from topologies.spec import TopoSpecError, parse_topo_spec

    try:
        return parse_topo_spec(spec)
    except TopoSpecError as e:
        raise TopoCliError(str(e)) from None


def _job(args: argparse.Namespace, mininet_topo: Any) -> Any:
    """The job ``--job`` asks for, planned on the topology (nothing runs), or None."""
    if args.job is None:
        if args.workers or args.root:
            raise TopoCliError("--workers and --root describe a job: give --job J too")
        return None
    from controller.jobs import JobError, JobTable
    from controller.topology import Topology, TopologyError, sorted_names

    topology = Topology.from_mininet(mininet_topo)
    workers = ([w.strip() for w in args.workers.split(",") if w.strip()] if args.workers
               else sorted_names(topology.hosts))
    try:
        return JobTable(topology).create(args.job, workers, args.slots, args.root).job
    except (JobError, TopologyError) as e:
        raise TopoCliError(str(e)) from None


def cmd_topo_show(args: argparse.Namespace) -> int:
    from topologies.describe import describe

    try:
        topo = _load(args.spec)
        job = _job(args, topo)
    except TopoCliError as e:
        return _error(e)
    print("\n".join(describe(topo)))
    if job is not None:
        from controller.show import format_job

        print("\n".join(format_job(job)))
    return 0


def cmd_topo_draw(args: argparse.Namespace) -> int:
    from topologies.draw import Highlight, draw_topology
    from topologies.graph import topo_graph

    try:
        topo = _load(args.spec)
        job = _job(args, topo)
    except TopoCliError as e:
        return _error(e)
    highlight = None
    if job is not None:
        tree = job.tree
        edges = [(name, c.node) for name, node in tree.switches.items() for c in node.children]
        highlight = Highlight(edges, tree.root, f"job {job.job_id}: {len(job.workers)} "
                                                f"workers, root {tree.root}, tree depth "
                                                f"{tree.depth}")
    out = args.output or default_picture(topo.spec, args.job)
    try:
        path = draw_topology(topo_graph(topo), out, topo.spec, highlight)
    except (OSError, ValueError) as e:
        return _error(TopoCliError(f"cannot write {out}: {getattr(e, 'strerror', None) or e}"))
    print(f"wrote {path}")
    return 0


def default_picture(spec: str, job: int | None) -> str:
    head, _, rest = spec.partition(",")
    stem = Path(head).stem if head.lower().endswith((".json", ".yaml", ".yml")) else head
    name = stem + "".join(c for c in rest if c.isalnum())
    return f"{name}{f'-job{job}' if job is not None else ''}.png"


def _net_exercise(args: argparse.Namespace) -> int:
    from experiments.interactive import run_exercise_interactive
    from experiments.options import RunError

    if args.bw is not None or args.k != "64":
        print("ina net: error: --bw and --k do not go with --topo FILE (the file gives the "
              "links' rates)", file=sys.stderr)
        return 2
    try:
        run_exercise_interactive(args.topo, args.program, args.target, args.pcap,
                                 args.runs_dir)
    except RunError as e:
        return _error(e, "net")
    return 0


def cmd_net(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from experiments.interactive import run_interactive
    from experiments.options import FIELDS, RunError, RunOptions

    if (args.spec is None) == (args.topo is None):
        print("ina net: error: give a topology spec (ina net star,4) or a tutorials' "
              "topology.json (ina net --topo FILE), not both", file=sys.stderr)
        return 2
    if args.topo is not None:
        return _net_exercise(args)
    if args.program is not None:
        print("ina net: error: --program goes with --topo FILE (the project's networks run "
              "p4/aggregation.p4)", file=sys.stderr)
        return 2
    try:
        options = replace(RunOptions(), topo=args.spec, target=args.target,
                          bw=FIELDS["bw"].parse(args.bw, "--bw") if args.bw else None,
                          k=FIELDS["k"].parse(args.k, "--k"), pcap=args.pcap,
                          runs_dir=args.runs_dir,
                          cluster=FIELDS["cluster"].parse(args.cluster, "--cluster")
                          if args.cluster else None)
        options.validate()
    except RunError as e:
        print(f"ina net: error: {e}", file=sys.stderr)
        return 2
    try:
        run_interactive(options, with_job=False)
    except RunError as e:
        return _error(e, "net")
    return 0
