"""``ina``: the project's command line, one function per verb."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path


def parse_defines(items: Sequence[str]) -> dict[str, str | None]:
    """``-D NAME`` / ``-D NAME=VALUE`` as cpp takes them."""
    defines: dict[str, str | None] = {}
    for item in items:
        name, eq, value = item.partition("=")
        defines[name] = value if eq else None
    return defines


def add_compile_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the #include search path")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]",
                   help="define a preprocessor macro")


def cmd_p4c(args: argparse.Namespace) -> int:
    """Compile a P4_16 program; optionally write its P4Info and the compiled artifact."""
    from switch.frontend import CompileError, compile_file
    from switch.v1model.engine_limits import check_engine_limits

    try:
        program = compile_file(args.program, args.include_dirs, parse_defines(args.defines))
    except CompileError as e:
        print(e, file=sys.stderr)
        return 1
    for warning in program.warnings:
        print(warning.format(), file=sys.stderr)  # type: ignore[attr-defined]
    try:
        check_engine_limits(program)
    except CompileError as e:
        print(e, file=sys.stderr)
        return 1
    if args.p4runtime_files:
        from switch.frontend.p4info import p4info_text

        _write(args.p4runtime_files, p4info_text(program))
    if args.output:
        from switch.frontend.artifact import dump_artifact

        _write(args.output, dump_artifact(program))
    return 0


def _write(path: str, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text)


def cmd_bench(args: argparse.Namespace) -> int:
    """Benchmarks that print figures."""
    if args.what == "engine":
        from ina.bench_engine import bench_engine

        if not args.program:
            print("ina bench engine: a P4 program is required", file=sys.stderr)
            return 2
        return bench_engine(args.program, args.packet, args.count, args.include_dirs,
                            parse_defines(args.defines), args.stf)
    if args.what == "switch":
        from ina.bench_switch import bench_switch

        return bench_switch(args.program, args.count, workers=args.workers,
                            window=args.window, include_dirs=args.include_dirs,
                            defines=args.defines)
    if args.what == "allreduce":
        from ina.bench_allreduce import BenchRequest, bench_allreduce

        request = BenchRequest(size=args.size, window=args.window, repeat=args.repeat,
                               runs_dir=args.runs_dir)
        if args.bw:
            request = replace(request, bws=tuple(args.bw))
        if args.topo:
            request = replace(request, topos=tuple(args.topo))
        if args.k:
            request = replace(request, ks=tuple(args.k))
        if args.loss:
            request = replace(request, losses=tuple(args.loss))
        return bench_allreduce(request)
    print(f"ina bench: unknown benchmark {args.what!r}", file=sys.stderr)
    return 2


def cmd_demo(args: argparse.Namespace) -> int:
    """In-network vs host-based all-reduce (``experiments/demo.toml``)."""
    from ina.demo import run_demo

    return run_demo(args.runs_dir, args.publish)


# Verbs whose parsers live beside their code; imported only when the verb is used (or
# for ``ina --help``), so one verb's imports never slow down or break another.
VERB_MODULES: dict[str, tuple[str, str]] = {
    "stf": ("switch.stf.cli", "add_stf_parser"),
    "ctl": ("controller.cli", "add_ctl_parser"),
    "switch": ("switch.process.cli", "add_switch_parsers"),
    "switch-cli": ("switch.process.cli", "add_switch_parsers"),
    "agent": ("hosts.agent_cli", "add_agent_parser"),
    "run": ("experiments.cli", "add_experiment_parsers"),
    "show": ("experiments.cli", "add_experiment_parsers"),
    "plot": ("experiments.cli", "add_experiment_parsers"),
    "model": ("experiments.cli", "add_experiment_parsers"),
    "topo": ("ina.topo_cli", "add_topo_parsers"),
    "net": ("ina.topo_cli", "add_topo_parsers"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``ina`` parser; with ``only``, a module-backed verb's parser is the only one
    imported (the built-in verbs are always there)."""
    parser = argparse.ArgumentParser(prog="ina", description="In-network aggregation emulator")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    p = verbs.add_parser("p4c", help="compile a P4_16 v1model program (like p4c-bm2-ss)")
    p.add_argument("program", help="the P4_16 source file")
    add_compile_options(p)
    p.add_argument("--p4runtime-files", metavar="OUT.txtpb",
                   help="write the P4Info in protobuf text format")
    p.add_argument("-o", dest="output", metavar="OUT", help="write the compiled program")
    p.set_defaults(func=cmd_p4c)

    wanted = [VERB_MODULES[only]] if only else list(dict.fromkeys(VERB_MODULES.values()))
    for module, function in wanted:
        getattr(importlib.import_module(module), function)(verbs)

    p = verbs.add_parser("bench", help="benchmarks (print figures)")
    p.add_argument("what", choices=["engine", "switch", "allreduce"],
                   help="what to measure")
    p.add_argument("program", nargs="?", help="the P4_16 program")
    add_compile_options(p)
    p.add_argument("--packet", metavar="HEX", help="the packet to inject (hex)")
    p.add_argument("--count", type=int, default=20000, help="packets to inject")
    p.add_argument("--stf", metavar="FILE.stf",
                   help="set the switch up with an STF file and inject its packets")
    p.add_argument("--bw", action="append", metavar="MBPS[,MBPS...]",
                   help="allreduce: link rates in Mbit/s (default 20)")
    p.add_argument("--size", type=int, default=300_000, metavar="N",
                   help="allreduce: values per worker (default 300000)")
    p.add_argument("--workers", type=int, default=2, metavar="N",
                   help="switch, aggregation program: worker ports (default 2)")
    p.add_argument("--window", type=int, default=64, metavar="S",
                   help="switch (aggregation program) and allreduce: chunks in flight = "
                        "the job's slots (default 64)")
    p.add_argument("--k", action="append", metavar="K[,K...]",
                   help="allreduce: values per packet (8, 16, 32, 64, 128, 256; "
                        "default 64,256)")
    p.add_argument("--topo", action="append", metavar="SPEC",
                   help="allreduce: topology, repeatable (default star,4 and star,8)")
    p.add_argument("--loss", action="append", metavar="P[,P...]",
                   help="allreduce: loss rates on every switch port (default 0,0.01,0.05)")
    p.add_argument("--repeat", default=1, metavar="R",
                   help="allreduce: measure every point R times (default 1)")
    p.add_argument("--runs-dir", default="runs", metavar="DIR",
                   help="allreduce: where the run directories go (default runs/)")
    p.set_defaults(func=cmd_bench)

    p = verbs.add_parser("demo", help="in-network vs ring vs parameter server on a "
                                      "Mininet star (root)",
                         description="Run experiments/demo.toml, print its table and draw "
                                     "its figures.")
    p.add_argument("--runs-dir", default="runs", metavar="DIR",
                   help="where the run directory goes (default runs/)")
    p.add_argument("--publish", metavar="DIR",
                   help="copy the results and the figure into DIR and rewrite the README's "
                        "demo block from them")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    verb = argv[0] if argv and argv[0] in VERB_MODULES else None
    args = build_parser(verb).parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
