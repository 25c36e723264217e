"""``ina train FILE --publish DIR``: the README's time-to-accuracy table and figure from a
training run (``make train-demo-publish`` runs ``experiments/train-demo.toml``).

Copies the run's ``results.json`` and its accuracy-against-time figure into DIR and
rewrites the README's block between the ``train-demo:begin`` and ``train-demo:end``
markers: one line saying where and when it was measured, the table of ``ina show``
(Markdown) and the figure.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FIGURE = "accuracy_vs_time.png"
BEGIN, END = "<!-- train-demo:begin -->", "<!-- train-demo:end -->"
SAME = ("topo", "N", "target")  # columns that are one value in the demo


def readme_block(doc: dict[str, Any], figure: str) -> str:
    from experiments.show import format_table
    from experiments.train_show import columns, summarize_training

    rows = summarize_training(doc["measurements"])
    machine = doc["machine"]
    cols = [c for c in columns(rows) if c[0] not in SAME]
    table = format_table([name for name, _ in cols], [[get(r) for _, get in cols]
                                                      for r in rows], markdown=True)
    links = ", ".join(sorted({"unshaped" if r.bw is None else f"{r.bw:g} Mbit/s"
                              for r in rows}))
    topos = ", ".join(dict.fromkeys(r.topo for r in rows))
    return "\n".join([
        BEGIN,
        f"Measured by `ina train experiments/train-demo.toml` on {machine.get('cpus')} "
        f"cores ({machine.get('cpu_model') or 'unknown CPU'}), git "
        f"{doc['git_revision'][:12]}, {doc['time'][:10]}; {topos}, {links} links:",
        "", table, "",
        f"![Test accuracy against training time, per algorithm, with the seeds' spread]"
        f"({figure})",
        END])


def publish_training(run_dir: Path, out: Path, readme: Path = README) -> None:
    from experiments.results import load_results
    from ina.demo import figure_link, replace_block

    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run_dir / "results.json", out / "results.json")
    shutil.copyfile(run_dir / "plots" / FIGURE, out / FIGURE)
    block = readme_block(load_results(out), figure_link(out / FIGURE, readme))
    readme.write_text(replace_block(readme.read_text(), block, BEGIN, END))
