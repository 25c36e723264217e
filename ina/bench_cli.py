"""``ina bench engine|switch|allreduce``: benchmarks that print figures, each with its
own options (so an option meant for another benchmark is an error, not ignored)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any


def add_bench_parser(verbs: Any) -> None:
    from ina.cli import add_compile_options

    p = verbs.add_parser("bench", help="benchmarks (print figures)")
    kinds = p.add_subparsers(dest="what", required=True, metavar="WHAT")

    e = kinds.add_parser("engine", help="packets per second through the engine (no I/O)")
    e.add_argument("program", help="the P4_16 program")
    add_compile_options(e)
    e.add_argument("--packet", metavar="HEX", help="the packet to inject (hex)")
    e.add_argument("--count", type=int, default=20000, help="packets to inject")
    e.add_argument("--stf", metavar="FILE.stf",
                   help="set the switch up with an STF file and inject its packets")
    e.add_argument("--engine", choices=("python", "native"), default="python",
                   help="the generated Python (default) or the native engine, which takes "
                        "the packets in batches of 64")
    e.set_defaults(func=cmd_bench_engine)

    s = kinds.add_parser("switch", help="an ina switch process on veth pairs (root)")
    s.add_argument("program", nargs="?",
                   help="the P4_16 program (default p4/ipv4_forward.p4; 'aggregation' "
                        "names p4/aggregation.p4)")
    add_compile_options(s)
    s.add_argument("--count", type=int, default=20000, help="packets to send")
    s.add_argument("--workers", type=int, default=2, metavar="N",
                   help="aggregation program: worker ports (default 2)")
    s.add_argument("--window", type=int, default=64, metavar="S",
                   help="aggregation program: chunks in flight = the job's slots "
                        "(default 64)")
    s.add_argument("--target", default="ina", metavar="T[,T]",
                   help="the switch: ina (the built-in one, default) or bmv2 "
                        "(simple_switch_grpc); ina,bmv2 runs both and puts their figures "
                        "side by side")
    s.add_argument("--engine", choices=("auto", "native", "python"), default="auto",
                   help="the built-in switch's engine (ina switch --engine; default auto)")
    s.set_defaults(func=cmd_bench_switch)

    a = kinds.add_parser("allreduce", help="in-network all-reduce in Mininet (root)")
    a.add_argument("--bw", action="append", metavar="MBPS[,MBPS...]",
                   help="link rates in Mbit/s (default 20)")
    a.add_argument("--size", type=int, default=300_000, metavar="N",
                   help="values per worker (default 300000)")
    a.add_argument("--window", type=int, default=64, metavar="S",
                   help="chunks in flight = the job's slots (default 64)")
    a.add_argument("--k", action="append", metavar="K[,K...]",
                   help="values per packet (8, 16, 32, 64, 128, 256; default 64,256)")
    a.add_argument("--topo", action="append", metavar="SPEC",
                   help="topology, repeatable (default star,4 and star,8)")
    a.add_argument("--loss", action="append", metavar="P[,P...]",
                   help="loss rates on every switch port (default 0,0.01,0.05)")
    a.add_argument("--repeat", default=1, metavar="R",
                   help="measure every point R times (default 1)")
    a.add_argument("--runs-dir", default="runs", metavar="DIR",
                   help="where the run directories go (default runs/)")
    a.set_defaults(func=cmd_bench_allreduce)


def cmd_bench_engine(args: argparse.Namespace) -> int:
    from ina.bench_engine import bench_engine
    from ina.cli import parse_defines

    return bench_engine(args.program, args.packet, args.count, args.include_dirs,
                        parse_defines(args.defines), args.stf, args.engine)


def cmd_bench_switch(args: argparse.Namespace) -> int:
    from ina.bench_switch import bench_switch

    return bench_switch(args.program, args.count, workers=args.workers, window=args.window,
                        include_dirs=args.include_dirs, defines=args.defines,
                        targets=[t.strip() for t in args.target.split(",") if t.strip()],
                        engine=args.engine)


def cmd_bench_allreduce(args: argparse.Namespace) -> int:
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
    return bench_allreduce(request, command=args.command_line)

