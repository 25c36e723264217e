"""``ina demo``: in-network aggregation against host-based all-reduce, in one command.

Runs the sweep of ``experiments/demo.toml`` (a Mininet star of 4 hosts around the
built-in switch running ``p4/aggregation.p4``; ``ina``, ``ring`` and ``ps`` at three
tensor sizes on shaped links, every result checked), prints the table of
``ina show`` and draws the figures of ``ina plot`` into the run directory (``runs/``
in the working directory). Needs root (Mininet).

``--publish DIR`` also copies the run's ``results.json`` and its completion-time
figure into DIR and rewrites the README's demo block (between the ``demo:begin`` and
``demo:end`` markers) from them: how the README's figures are regenerated.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO_FILE = ROOT / "experiments" / "demo.toml"
README = ROOT / "README.md"
FIGURE = "time_vs_size.png"
BEGIN, END = "<!-- demo:begin -->", "<!-- demo:end -->"


def run_demo(runs_dir: str = "runs", publish: str | None = None) -> int:
    from experiments.allreduce_net import need_root
    from experiments.options import RunError
    from experiments.plot import plot_run
    from experiments.progress import Progress
    from experiments.run_allreduce import estimate_seconds, run_sweep
    from experiments.show import format_run
    from experiments.sweep import build_sweep, read_experiment_file

    why = need_root()
    if why:
        print(f"ina demo: {why}; run it as root (sudo make demo)", file=sys.stderr)
        return 1
    try:
        sweep = build_sweep(read_experiment_file(DEMO_FILE), name="demo")
    except RunError as e:
        print(f"ina demo: error: {e}", file=sys.stderr)
        return 1
    sweep = replace(sweep, base=replace(sweep.base, runs_dir=runs_dir))
    points = sweep.points()
    print(f"ina demo: {sweep.description} ({len(points)} all-reduces; "
          f"{DEMO_FILE.relative_to(ROOT)})", flush=True)
    try:
        outcome = run_sweep(sweep, Progress(points, estimate=estimate_seconds),
                            command=["ina", "demo"])
    except (RunError, OSError) as e:
        print(f"ina demo: error: {e}", file=sys.stderr)
        return 1
    print()
    print(format_run(outcome.doc))
    written, notes = plot_run(outcome.doc, outcome.run_dir / "plots")
    print()
    for path in written:
        if path.suffix == ".png":
            print(f"figure: {path}")
    for note in notes:
        print(f"note: {note}")
    if publish:
        publish_demo(outcome.run_dir, Path(publish))
        print(f"published: {publish}/results.json, {publish}/{FIGURE}, README.md")
    return 0 if outcome.ok else 1


# ------------------------------------------------------------------ publishing


def readme_block(doc: dict[str, Any], figure: str) -> str:
    """The README's demo block for a results document."""
    from experiments.show import MAIN_COLUMNS, SPEEDUP_COLUMNS, table
    from experiments.summary import speedups, summarize

    rows = summarize(doc["measurements"])
    machine = doc["machine"]
    same = ("topo", "N", "bw (Mbit/s)", "loss", "runs")  # one value in the demo
    links = ", ".join(sorted({"unshaped" if r.bw is None else f"{r.bw:g} Mbit/s"
                              for r in rows}))
    lines = [BEGIN,
             f"Measured by `ina demo` on {machine.get('cpus')} cores "
             f"({machine.get('cpu_model') or 'unknown CPU'}), git "
             f"{doc['git_revision'][:12]}, {doc['time'][:10]}; a star of "
             f"{rows[0].workers} hosts, {links} links:",
             "", table([c for c in MAIN_COLUMNS if c[0] not in same], rows, markdown=True),
             ""]
    ups = speedups(rows)
    if ups:
        lines += ["In-network over ring:", "",
                  table([c for c in SPEEDUP_COLUMNS if c[0] not in same], ups,
                        markdown=True), ""]
    lines += [f"![Completion time against tensor size, measured and modelled]({figure})",
              END]
    return "\n".join(lines)


def figure_link(figure: Path, readme: Path) -> str:
    """How ``readme`` links ``figure``: relative to the README's folder when the figure
    lies below it (as docs/ does), else by its absolute path."""
    figure = figure.resolve()
    try:
        return str(figure.relative_to(readme.resolve().parent))
    except ValueError:
        return str(figure)


def replace_block(text: str, block: str, begin: str = BEGIN, end: str = END) -> str:
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"README.md has no {begin} ... {end} block")
    return pattern.sub(lambda _: block, text, count=1)


def publish_demo(run_dir: Path, out: Path, readme: Path = README) -> None:
    from experiments.results import load_results

    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run_dir / "results.json", out / "results.json")
    shutil.copyfile(run_dir / "plots" / FIGURE, out / FIGURE)
    block = readme_block(load_results(out), figure_link(out / FIGURE, readme))
    readme.write_text(replace_block(readme.read_text(), block))
