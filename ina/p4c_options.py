"""The options of ``p4c-bm2-ss`` and the ``p4c`` driver that ``ina p4c`` takes besides
its own, so that build scripts written for them (p4lang's tutorials pass ``--p4v 16``,
p4c's test scripts ``--target bmv2 --arch v1model``) run unchanged.

An option that asks for the one thing ``ina p4c`` does (P4_16, BMv2, v1model) is
accepted; one that asks for anything else is refused with what is supported.
"""

from __future__ import annotations

import argparse
from pathlib import Path

#: option -> (the values that mean what ina p4c does, what to say otherwise)
ACCEPTED_VALUES: dict[str, tuple[tuple[str, ...], str]] = {
    "p4v": (("16",), "only P4_16 is supported (--p4v 16); P4_14 programs are not"),
    "std": (("p4-16", "p4_16"), "only P4_16 is supported (--std p4-16); P4_14 programs "
                                "are not"),
    "target": (("bmv2",), "the only target is bmv2 (the built-in switch runs what BMv2 runs)"),
    "arch": (("v1model",), "the only architecture is v1model"),
}


class P4cOptionError(Exception):
    """An option of p4c that ``ina p4c`` cannot honour; the message says which and why."""


def add_p4c_compat_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--p4v", metavar="16", help="P4 language version, as p4c-bm2-ss takes it "
                                               "(16 only)")
    p.add_argument("--std", metavar="p4-16", help="P4 language version, as p4c takes it "
                                                  "(p4-16 only)")
    p.add_argument("--target", metavar="bmv2", help="as p4c takes it (bmv2 only)")
    p.add_argument("--arch", metavar="v1model", help="as p4c takes it (v1model only)")
    p.add_argument("--emit-externs", action="store_true", help=argparse.SUPPRESS)


def check_p4c_options(args: argparse.Namespace) -> None:
    """Raise P4cOptionError for a p4c option value that asks for something else."""
    for name, (accepted, why) in ACCEPTED_VALUES.items():
        value = getattr(args, name)
        if value is not None and value.lower() not in accepted:
            raise P4cOptionError(f"--{name} {value}: {why}")
    if args.emit_externs:
        raise P4cOptionError("--emit-externs: extern types a program declares itself are not "
                             "supported (BMv2 needs them built into the switch)")


def output_path(output: str, program: str) -> str:
    """``-o``: a file, or (as the p4c driver takes it) a directory that gets PROGRAM.json."""
    out = Path(output)
    if out.is_dir():
        return str(out / (Path(program).stem + ".json"))
    return output
