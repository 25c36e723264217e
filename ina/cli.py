"""``ina``: the project's command line, one function per verb."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ina.p4c_options import add_p4c_compat_options


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
    from ina.p4c_options import P4cOptionError, check_p4c_options, output_path
    from switch.frontend import CompileError, compile_file
    from switch.v1model.engine_limits import check_engine_limits

    try:
        check_p4c_options(args)
    except P4cOptionError as e:
        print(f"ina p4c: error: {e}", file=sys.stderr)
        return 2
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

        _write(output_path(args.output, args.program), dump_artifact(program))
    return 0


def _write(path: str, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text)


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
    "train": ("experiments.train_cli", "add_train_parser"),
    "show": ("experiments.cli", "add_experiment_parsers"),
    "plot": ("experiments.cli", "add_experiment_parsers"),
    "model": ("experiments.cli", "add_experiment_parsers"),
    "topo": ("ina.topo_cli", "add_topo_parsers"),
    "bench": ("ina.bench_cli", "add_bench_parser"),
    "net": ("ina.topo_cli", "add_topo_parsers"),
    "recovery": ("experiments.recovery", "add_recovery_parser"),
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
    p.add_argument("-o", dest="output", metavar="OUT",
                   help="write the compiled program (into OUT/PROGRAM.json when OUT is a "
                        "directory, as p4c does)")
    add_p4c_compat_options(p)
    p.set_defaults(func=cmd_p4c)

    wanted = [VERB_MODULES[only]] if only else list(dict.fromkeys(VERB_MODULES.values()))
    for module, function in wanted:
        getattr(importlib.import_module(module), function)(verbs)

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
    _plain_descriptions(parser)
    return parser


def _plain_descriptions(parser: argparse.ArgumentParser) -> None:
    """Verbs whose description is their module's docstring print it without the
    docstring's markup (``name`` becomes name)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if sub.description:
                    sub.description = sub.description.replace("``", "")
                _plain_descriptions(sub)


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    verb = argv[0] if argv and argv[0] in VERB_MODULES else None
    args = build_parser(verb).parse_args(argv)
    args.command_line = ["ina", *argv]  # as given, for the results a verb records
    try:
        return int(args.func(args))
    except BrokenPipeError:  # the output went to a pipe that closed early (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
