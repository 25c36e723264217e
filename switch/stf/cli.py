"""``ina stf PROG.p4 TEST.stf``: compile a program and run an STF test on it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


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
        "stf", help="run an STF packet test on the software switch (like p4c's BMv2 tests)")
    p.add_argument("program", metavar="PROG.p4", help="the P4_16 v1model program")
    p.add_argument("stf", metavar="TEST.stf", help="the STF test")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the #include search path")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]",
                   help="define a preprocessor macro")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="trace every command and every packet that comes out")
    p.add_argument("--trace", action="store_true",
                   help="like -v, plus each packet's path through the pipeline")
    p.add_argument("--strict-ports", action="store_true",
                   help="also fail on packets sent to ports no packet/expect line names")
    p.add_argument("--seed", type=int, default=0, help="the switch's random seed")
    p.set_defaults(func=cmd_stf)
    return p


def cmd_stf(args: argparse.Namespace) -> int:
    """Exit status 0 when the test passes, 1 otherwise (compile errors included)."""
    from switch.frontend import CompileError, compile_file
    from switch.stf.parse_stf import StfError, parse_stf_file
    from switch.stf.run_stf import run_program

    try:
        program = compile_file(args.program, args.include_dirs, _defines(args.defines))
    except CompileError as e:
        print(e, file=sys.stderr)
        return 1
    for warning in getattr(program, "warnings", ()):
        print(warning.format(), file=sys.stderr)
    try:
        stf = parse_stf_file(args.stf)
    except StfError as e:
        print(e, file=sys.stderr)
        return 1
    result = run_program(program, stf, verbose=args.verbose, strict_ports=args.strict_ports,
                         seed=args.seed, trace=args.trace)
    print(result.report)
    return 0 if result.passed else 1
