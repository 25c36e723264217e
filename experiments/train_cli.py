"""``ina train``: synchronous data-parallel SGD through the emulated network.

    ina train [FILE.toml] [--topo SPEC ...] [--algo A,B] [--model M] [--seeds 0,1,2]
              [--bw R,R] [--loss P,P] [--epochs E | --steps S] [--batch B] [--lr LR]
              [--target-accuracy ACC] [--compute-time SECONDS] [--check] ...

Every combination of the listed values is one training run, in one run directory
(``results.json``, ``results.csv``); exit status 0 when every run trained (and, with
``--check``, every all-reduce was right), 1 otherwise, 2 for bad options. ``ina show``
and ``ina plot`` read its run directory as they read ``ina run``'s.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from experiments.options import RunError, read_flag
from experiments.train_options import TRAIN_FIELDS

TRAIN_HELP = """Train a model by synchronous data-parallel SGD across the hosts of a
topology in Mininet (as root; --algo local needs no network): every step each host's
worker computes the gradient of its shard of the mini-batch, all-reduces it with the
chosen algorithm, averages and updates. Records the loss, compute and all-reduce time
of every step, the test accuracy over time, and the time and steps to the target
accuracy.

    ina train --topo star,4 --bw 10 --algo ina,ring,local --seeds 0,1,2
    ina train --model wide-mlp --steps 14 --k 256 --bw 10 --algo ina,ring
    ina train experiments/train-demo.toml

Lists: --algo, --model, --seeds, --bw and --loss take comma-separated values, --topo
repeats. An experiment file (TOML) takes the options shared with ina run at the top
and the training options in a [train] section (several [[train]] sections: several
groups of runs); options on the command line override it. Exit status 0 when every run
trained, 1 otherwise, 2 for bad options."""


def add_train_parser(verbs: Any) -> None:
    p = verbs.add_parser("train", help="train a model through the emulated network (root)",
                         description=TRAIN_HELP, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("file", nargs="?", metavar="FILE.toml", help="an experiment file")
    for f in TRAIN_FIELDS.values():
        names = [f.option, "--seed"] if f.attr == "seed" else [f.option]
        if f.read is read_flag:
            p.add_argument(*names, action=argparse.BooleanOptionalAction, default=None,
                           help=f.help)
        else:
            p.add_argument(*names, dest=f.attr, action="append" if f.axis else "store",
                           default=None, metavar=f.metavar or f.attr.upper(), help=f.help)
    p.add_argument("--publish", metavar="DIR",
                   help="after the run, copy its results and accuracy figure into DIR and "
                        "rewrite the README's time-to-accuracy block from them")
    p.set_defaults(func=cmd_train)


def command_line_settings(args: argparse.Namespace) -> dict[str, Any]:
    from experiments.sweep import Setting

    settings: dict[str, Setting] = {}
    for attr, f in TRAIN_FIELDS.items():
        value = getattr(args, attr)
        if value is None:
            continue
        if f.axis and attr != "topo":
            value = [item for arg in value for item in arg.split(",")]
        settings[attr] = Setting(value, f.option)
    return settings


def cmd_train(args: argparse.Namespace) -> int:
    from experiments.train_sweep import build_train_sweep, read_train_file, train_sections

    try:
        file = read_train_file(args.file) if args.file else None
        sweep = build_train_sweep(train_sections(file, command_line_settings(args)),
                                  description=file.description if file else "")
    except RunError as e:
        print(f"ina train: error: {e}", file=sys.stderr)
        return 2
    from experiments.progress import Progress
    from experiments.run_allreduce import run_sweep
    from experiments.run_train import TrainRunner, estimate_train_seconds
    from experiments.train_show import format_train_run

    points = sweep.points()
    o: Any = points[0].options
    name = (Path(args.file).stem if args.file else
            f"train-{o.model}-{o.algo}-{o.topo.replace(',', '')}" if len(points) == 1
            else f"train-{o.model}")
    sweep = replace(sweep, name=name)
    progress = Progress(points, estimate=estimate_train_seconds)
    try:
        outcome = run_sweep(sweep, progress, command=args.command_line,
                            runner=TrainRunner)
    except RunError as e:
        print(f"ina train: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ina train: interrupted; results.json keeps the runs finished so far",
              file=sys.stderr)
        return 130
    from experiments.train_plot import plot_train_run

    print()
    print(format_train_run(outcome.doc))
    written, _ = plot_train_run(outcome.doc, outcome.run_dir / "plots")
    print(f"\nresults: {outcome.run_dir}/results.json (and results.csv); figures: "
          f"{', '.join(str(p) for p in written if p.suffix == '.png')}")
    if args.publish:
        from experiments.train_publish import FIGURE, publish_training

        publish_training(outcome.run_dir, Path(args.publish))
        print(f"published: {args.publish}/results.json, {args.publish}/{FIGURE}, README.md")
    return 0 if outcome.ok else 1
