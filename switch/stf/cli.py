"""``ina stf PROG.p4 TEST.stf``: compile a program and run an STF test on it, on the
built-in switch or (``--target bmv2``) on BMv2."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from switch.stf.targets import TARGETS


def _defines(items: Sequence[str]) -> dict[str, str | None]:
    """``-D NAME`` / ``-D NAME=VALUE`` as cpp takes them."""
    defines: dict[str, str | None] = {}
    for item in items:
        name, eq, value = item.partition("=")
        defines[name] = value if eq else None
    return defines


def add_stf_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``stf`` verb on an ``add_subparsers()`` object."""
    p = subparsers.add_parser(
        "stf", help="run an STF packet test on the software switch or BMv2 "
                    "(like p4c's BMv2 tests)")
    p.add_argument("program", metavar="PROG.p4", help="the P4_16 v1model program")
    p.add_argument("stf", metavar="TEST.stf", help="the STF test")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the #include search path")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]",
                   help="define a preprocessor macro")
    p.add_argument("--target", default="builtin", choices=list(TARGETS),
                   help="where to run: the built-in switch (default), or BMv2's "
                        "simple_switch_grpc with the program compiled by p4c-bm2-ss")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="trace every command and every packet that comes out")
    p.add_argument("--trace", action="store_true",
                   help="like -v, plus each packet's path through the pipeline "
                        "(BMv2's debug log with --target bmv2)")
    p.add_argument("--strict-ports", action="store_true",
                   help="also fail on packets sent to ports no packet/expect line names")
    p.add_argument("--seed", type=int, default=0,
                   help="the built-in switch's random seed (BMv2's cannot be set)")
    p.set_defaults(func=cmd_stf)
    return p


def cmd_stf(args: argparse.Namespace) -> int:
    """Exit status 0 when the test passes, 1 otherwise (compile errors included)."""
    from switch.stf.run_stf import run_stf

    result = run_stf(args.program, args.stf, args.include_dirs, _defines(args.defines),
                     target=args.target, verbose=args.verbose,
                     strict_ports=args.strict_ports, seed=args.seed, trace=args.trace)
    for warning in result.warnings:
        print(warning, file=sys.stderr)
    if result.stage in ("stf", "compile"):
        print(result.report, file=sys.stderr)
    else:
        print(result.report)
    return 0 if result.passed else 1
