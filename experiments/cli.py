"""The experiment verbs of ``ina``: ``run``, ``show``, ``plot`` and ``model``.

    ina run [FILE.toml] [--topo SPEC ...] [--algo A,B] [--size N,N] [--bw R,R]
            [--loss P,P] [--repeat R] [--check] [--root SWITCH] [--pcap] [--cli]
            [--jobs N] [--slots N] [--on-full refuse|shrink|fallback] ...
    ina show RUN_DIR [--markdown]
    ina plot RUN_DIR [--out DIR]
    ina model --workers N[,N] | --topo SPEC ... --size S[,S] [--bw MBPS] [--k K] [--alpha US]
              [--hop US] [--measured RUN_DIR ... [--validate] [--markdown]] [--plot DIR]

``ina run`` measures every combination of the listed values in Mininet (root) and
writes one run directory (``results.json``, ``results.csv``); exit status 0 when every
point succeeded (and, with ``--check``, every result was right), 1 otherwise, 2 for
bad options; with ``--cli`` it sets one point up and leaves the user at the mininet>
prompt instead (``experiments.interactive``). ``show`` prints the run's table,
``plot`` draws its figures, ``model`` prints the alpha-beta model without running
anything.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from experiments.options import FIELDS, RunError, read_flag

RUN_HELP = """Run all-reduce experiments in Mininet (as root): every combination of the
listed values, each --repeat times, in one run directory under --runs-dir.

    ina run --topo star,4 --algo ina --size 100000 --check
    ina run --topo star,4 --topo star,8 --algo ina,ring,ps,hd --size 1e6 --bw 10 --check
    ina run experiments/speedup.toml
    ina run experiments/two-jobs.toml

Lists: --algo, --size, --bw and --loss take comma-separated values, --topo repeats.
An experiment file (TOML) takes the same options as keys (runs_dir for --runs-dir,
plus repeat and description, and [[job]] tables for several jobs at once: hosts,
algo, size, window, start); options on the command line override it. A point that
fails is recorded with its error and the sweep goes on. Exit status 0 when every point
succeeded, 1 otherwise, 2 for bad options."""


def add_experiment_parsers(verbs: Any) -> None:
    """Register ``ina run``, ``ina show``, ``ina plot`` and ``ina model``."""
    p = verbs.add_parser("run", help="run all-reduce experiments in Mininet (root)",
                         description=RUN_HELP, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("file", nargs="?", metavar="FILE.toml", help="an experiment file")
    for f in FIELDS.values():
        if f.read is read_flag:
            p.add_argument(f.option, action=argparse.BooleanOptionalAction, default=None,
                           help=f.help)
        else:
            p.add_argument(f.option, dest=f.attr,
                           action="append" if f.axis or f.repeated else "store",
                           default=None, metavar=f.metavar or f.attr.upper(), help=f.help)
    p.add_argument("--repeat", metavar="R", help="measure every point R times (default 1)")
    p.set_defaults(func=cmd_run)

    p = verbs.add_parser("show", help="print the table of a run directory",
                         description="Print a run's measurements in nccl-tests' terms "
                                     "(see experiments/show.py).")
    p.add_argument("run_dir", metavar="RUN_DIR",
                   help="a run directory of 'ina run' or 'ina train'")
    p.add_argument("--markdown", action="store_true", help="Markdown tables")
    p.set_defaults(func=cmd_show)

    p = verbs.add_parser("plot", help="draw the figures of a run directory (PNG, SVG)",
                         description="Draw a run's figures into RUN_DIR/plots (see "
                                     "experiments/plot.py).")
    p.add_argument("run_dir", metavar="RUN_DIR",
                   help="a run directory of 'ina run' or 'ina train'")
    p.add_argument("--out", metavar="DIR", help="where the figures go (default RUN_DIR/plots)")
    p.set_defaults(func=cmd_plot)

    p = verbs.add_parser("model", help="print the alpha-beta model of every algorithm",
                         description="The analytical model of experiments/model.py for "
                                     "given N (or topologies), S, B: nothing is run. "
                                     "--validate and --plot compare it with runs.")
    p.add_argument("--workers", "-N", default="4", metavar="N[,N...]",
                   help="workers on a star (default 4)")
    p.add_argument("--topo", action="append", metavar="SPEC",
                   help="a topology instead of a star, repeatable (star,1024, "
                        "leafspine,L,S,H and fattree,K up to K = 16 at any size; other "
                        "specs as ina run takes them)")
    p.add_argument("--size", "-S", default="1e6", metavar="S[,S...]",
                   help="float32 values per worker (default 1e6)")
    p.add_argument("--bw", "-B", metavar="MBPS", help="link rate in Mbit/s (without it: "
                                                      "bytes only)")
    p.add_argument("--k", default="64", metavar="K", help="in-network values per packet")
    p.add_argument("--window", default="64", metavar="W", help="in-network window")
    p.add_argument("--alpha", default=None, metavar="US",
                   help="seconds per message step, in microseconds (default 100)")
    p.add_argument("--tcp-efficiency", default=None, metavar="E",
                   help="the share of a link's rate TCP gets (default 0.88, as on the "
                        "emulator's links; 1 for the plain alpha-beta model)")
    p.add_argument("--hop", default=None, metavar="US",
                   help="latency of each switch past the first on a path, in microseconds "
                        "(default 50)")
    p.add_argument("--algo", metavar="A[,A...]", help="algorithms (default all)")
    p.add_argument("--measured", action="append", default=[], metavar="RUN_DIR",
                   help="runs of 'ina run' (directories or results.json) to compare with")
    p.add_argument("--validate", action="store_true",
                   help="print every point of the --measured runs beside the model")
    p.add_argument("--markdown", action="store_true", help="--validate's table in Markdown")
    p.add_argument("--plot", metavar="DIR",
                   help="draw the speedup of in-network over ring against N up to 1024 "
                        "(stars and fat-trees, at the first --size and --bw) with the "
                        "--measured points, into DIR/speedup_vs_workers.png and .svg")
    p.set_defaults(func=cmd_model)


# --------------------------------------------------------------------- run


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    from experiments.sweep import Setting, read_experiment_file

    settings: dict[str, Setting] = {}
    if args.file:
        settings.update(read_experiment_file(args.file))
    for attr, f in FIELDS.items():
        value = getattr(args, attr)
        if value is None:
            continue
        if f.axis and attr != "topo":
            value = [item for arg in value for item in arg.split(",")]
        settings[attr] = Setting(value, f.option)
    if args.repeat is not None:
        settings["repeat"] = Setting(args.repeat, "--repeat")
    return settings


def cmd_run(args: argparse.Namespace) -> int:
    from experiments.sweep import build_sweep

    try:
        settings = _settings(args)
        sweep = build_sweep(settings, name="sweep")
    except RunError as e:
        print(f"ina run: error: {e}", file=sys.stderr)
        return 2
    from experiments.progress import Progress
    from experiments.run_allreduce import estimate_seconds, format_summary, run_sweep
    from experiments.show import format_run

    points = sweep.points()
    o = points[0].options
    if o.cli:
        return _run_cli(points)
    name = (Path(args.file).stem if args.file else
            f"{o.algo}-{o.topo.replace(',', '')}" if len(points) == 1 else "sweep")
    sweep = replace(sweep, name=name)
    progress = Progress(points, estimate=estimate_seconds)
    try:
        outcome = run_sweep(sweep, progress, command=args.command_line)
    except RunError as e:
        print(f"ina run: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ina run: interrupted; results.json keeps the points measured so far",
              file=sys.stderr)
        return 130
    if len(points) == 1:
        print(format_summary(outcome.measurements[0]))
    else:
        print()
        print(format_run(outcome.doc))
        print(f"\nresults: {outcome.run_dir}/results.json (and results.csv); "
              f"'ina plot {outcome.run_dir}' draws the figures")
    return 0 if outcome.ok else 1


def _run_cli(points: list[Any]) -> int:
    """``ina run --cli``: one point's network and job, at the mininet> prompt
    (``experiments.interactive``)."""
    from experiments.interactive import run_interactive

    if len(points) != 1:
        print(f"ina run: error: --cli sets up one point, and the options make "
              f"{len(points)}", file=sys.stderr)
        return 2
    try:
        run_interactive(points[0].options, with_job=True)
    except RunError as e:
        print(f"ina run: error: {e}", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------- show, plot


def cmd_show(args: argparse.Namespace) -> int:
    from experiments.results import ResultsError, load_results
    from experiments.show import format_run

    try:
        doc = load_results(args.run_dir)
    except ResultsError as e:
        print(f"ina show: error: {e}", file=sys.stderr)
        return 1
    if doc.get("kind") == "train":
        from experiments.train_show import format_train_run

        print(format_train_run(doc, markdown=args.markdown))
    else:
        print(format_run(doc, markdown=args.markdown))
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from experiments.plot import plot_run
    from experiments.results import ResultsError, load_results

    try:
        doc = load_results(args.run_dir)
    except ResultsError as e:
        print(f"ina plot: error: {e}", file=sys.stderr)
        return 1
    out = Path(args.out) if args.out else Path(args.run_dir) / "plots"
    if doc.get("kind") == "train":
        from experiments.train_plot import plot_train_run as plot_run
    try:
        written, notes = plot_run(doc, out)
    except OSError as e:
        print(f"ina plot: error: cannot write into {out}: {e.strerror or e}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    for note in notes:
        print(f"note: {note}")
    return 0


# ------------------------------------------------------------------ model


def _list(text: str, option: str, read: Any) -> list[Any]:
    out = []
    for item in text.split(","):
        try:
            out.append(read(item))
        except ValueError as e:
            raise RunError(f"{option} {item}: {e}") from None
    return out


def cmd_model(args: argparse.Namespace) -> int:
    from experiments.model import (
        DEFAULT_ALPHA,
        DEFAULT_HOP,
        MODELS,
        TCP_EFFICIENCY,
        ModelInput,
    )
    from experiments.model_report import ModelSettings
    from experiments.model_topology import MAX_HOSTS, ShapeError, shape_of
    from experiments.options import read_count, read_number
    from hosts.wire import ALLOWED_K

    try:
        workers = _list(args.workers, "--workers", read_count)
        sizes = _list(args.size, "--size", read_count)
        bw = read_number(args.bw) if args.bw is not None else None
        k, window = read_count(args.k), read_count(args.window)
        alpha = read_number(args.alpha) * 1e-6 if args.alpha is not None else DEFAULT_ALPHA
        hop = read_number(args.hop) * 1e-6 if args.hop is not None else DEFAULT_HOP
        tcp = (read_number(args.tcp_efficiency) if args.tcp_efficiency is not None
               else TCP_EFFICIENCY)
        if not 0 < tcp <= 1:
            raise RunError(f"--tcp-efficiency {args.tcp_efficiency}: must be in (0, 1]")
        algos = args.algo.split(",") if args.algo else list(MODELS)
        shapes = []
        for spec in args.topo or []:
            try:
                shapes.append(shape_of(spec))
            except ShapeError as e:
                raise RunError(f"--topo {spec}: {e}") from None
        if hop < 0:
            raise RunError(f"--hop {args.hop}: must not be negative")
        if args.plot and bw is None:
            raise RunError("--plot: give the link rate (--bw)")
        if args.validate and not args.measured:
            raise RunError("--validate: give the runs to compare with (--measured RUN_DIR)")
        for n in workers:
            if not 1 <= n <= MAX_HOSTS:
                raise RunError(f"--workers {n}: must be in [1, {MAX_HOSTS}]")
        for s in sizes:
            if s < 1:
                raise RunError(f"--size {s}: must be at least 1")
        if bw is not None and not bw > 0:
            raise RunError(f"--bw {bw:g}: must be positive")
        if k not in ALLOWED_K:
            raise RunError(f"--k {k}: not one of {', '.join(map(str, ALLOWED_K))}")
        if window < 1:
            raise RunError(f"--window {window}: must be at least 1")
        if alpha < 0:
            raise RunError(f"--alpha {args.alpha}: must not be negative")
        unknown = [a for a in algos if a not in MODELS]
        if unknown:
            raise RunError(f"--algo {unknown[0]}: no model (models: {', '.join(MODELS)})")
    except (RunError, ValueError) as e:
        message = str(e) if isinstance(e, RunError) else f"{e}"
        print(f"ina model: error: {message}", file=sys.stderr)
        return 2
    settings = ModelSettings(alpha, hop, tcp)
    if args.measured:
        return _model_against_runs(args, settings, sizes[0], bw, k, window)
    blocks = []
    inputs = ([ModelInput(shape.hosts, size, bw, k=k, window=window, alpha=alpha, hop=hop,
                          shape=shape, tcp_efficiency=tcp)
               for shape in shapes for size in sizes] if shapes else
              [ModelInput(n, size, bw, k=k, window=window, alpha=alpha, hop=hop,
                          tcp_efficiency=tcp) for n in workers for size in sizes])
    for m in inputs:
        blocks.append(format_model(m, [MODELS[a](m) for a in algos]))
    print("\n\n".join(blocks))
    if args.plot:
        from experiments.model_report import plot_speedup_vs_workers

        assert bw is not None
        for path in plot_speedup_vs_workers(Path(args.plot), sizes[0], bw, k, window, [],
                                            settings):
            print(f"wrote {path}")
    return 0


def _model_against_runs(args: argparse.Namespace, settings: Any, size: int,
                        bw: float | None, k: int, window: int) -> int:
    """``ina model --measured RUN ... [--validate] [--plot DIR]``."""
    from experiments.model_report import (
        format_validation,
        plot_speedup_vs_workers,
        validation_rows,
    )
    from experiments.results import ResultsError, load_results

    try:
        docs = [load_results(run) for run in args.measured]
    except ResultsError as e:
        print(f"ina model: error: {e}", file=sys.stderr)
        return 1
    if args.validate or not args.plot:
        print(format_validation(validation_rows(docs, settings), args.markdown))
    if args.plot:
        assert bw is not None
        for path in plot_speedup_vs_workers(Path(args.plot), size, bw, k, window, docs,
                                            settings):
            print(f"wrote {path}")
    return 0


def format_model(m: Any, predictions: list[Any]) -> str:
    from experiments.model import bus_factor
    from experiments.show import format_table

    rate = "unshaped (bytes only)" if m.bw_mbps is None else f"B = {m.bw_mbps:g} Mbit/s"
    head = (f"N = {m.workers}, S = {m.size} float32 values ({m.tensor_bytes} B), {rate}, "
            f"K = {m.k}, window {m.window}, alpha = {m.alpha * 1e6:g} us, TCP gets "
            f"{m.tcp_efficiency:g} of a link")
    if m.shape is not None:
        head = (f"{m.shape.spec}: {m.shape.switches} switches, the in-network tree "
                f"{m.shape.tree_depth} links deep, hop = {m.hop * 1e6:g} us; " + head)
    rows = []
    for p in predictions:
        t = p.seconds
        algbw = m.tensor_bytes * 8 / t / 1e6 if t else None
        rows.append([p.algo, "-" if t is None else f"{t:.4f}",
                     "-" if algbw is None else f"{algbw:.2f}",
                     "-" if algbw is None else f"{algbw * bus_factor(m.workers):.2f}",
                     f"{p.bytes_sent_per_host:.0f}", f"{p.wire_bytes_sent_per_host:.0f}",
                     str(p.steps), p.formula])
    table = format_table(["algo", "time (s)", "algbw (Mbit/s)", "busbw (Mbit/s)",
                          "sent/host (B)", "wire/host (B)", "steps", "formula"], rows)
    out = [head, table]
    by = {p.algo: p for p in predictions}
    if "ina" in by and "ring" in by and by["ina"].seconds and by["ring"].seconds:
        out.append(f"in-network over ring: {by['ring'].seconds / by['ina'].seconds:.2f} "
                   f"(2(N-1)/N = {bus_factor(m.workers):.2f} for the bytes alone)")
    return "\n".join(out)
