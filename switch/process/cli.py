"""The ``ina switch`` and ``ina switch-cli`` verbs (registered by ``ina.cli``)."""

from __future__ import annotations

import argparse
from typing import Any

from switch.process.switch_cli import add_switch_cli_parser


def cmd_switch(args: argparse.Namespace) -> int:
    from switch.process.main import run_switch

    return run_switch(args.argv)


def add_switch_parsers(verbs: Any) -> None:
    """Add ``switch`` and ``switch-cli`` to the ``ina`` sub-command parsers."""
    # ``ina switch`` parses its own command line (``switch.process.options``): it has a
    # target-options part after ``--`` that argparse's sub-commands cannot express.
    p = verbs.add_parser("switch", add_help=False, prefix_chars="\0",
                         help="run the built-in P4 switch (like simple_switch_grpc); "
                              "'ina switch --help' for its options")
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_switch)
    add_switch_cli_parser(verbs)
