"""``ina plot RUN_DIR`` for a training run: PNG and SVG figures in ``RUN_DIR/plots/``.

- ``accuracy_vs_time``: test accuracy against the training clock (seconds), one line
  per algorithm: the mean over the seeds at each evaluation, drawn at the seeds' mean
  time, with the band from the lowest to the highest seed; the target dotted;
- ``accuracy_vs_step``: the same against the step;
- ``loss_vs_step``: the training loss against the step (the seeds' mean, a running
  mean over a few steps, with the seeds' band).

One panel per (topology, model, link rate, loss). Runs marked ``cpu_bound`` are drawn
dashed: they describe the emulator, not the network.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from experiments.plot import FORMATS, _colors, _panels, _pyplot
from experiments.train_show import TrainRow, summarize_training

CPU_BOUND_STYLE = "--"


def _title(r: TrainRow) -> str:
    rate = "unshaped links" if r.bw is None else f"{r.bw:g} Mbit/s"
    return f"{r.model} on {r.dataset}, {r.topo}, {rate}, loss {r.loss:g}"


def _panel_groups(rows: list[TrainRow]) -> dict[tuple[Any, ...], list[TrainRow]]:
    groups: dict[tuple[Any, ...], list[TrainRow]] = {}
    for r in rows:
        if any(m["evals"]["step"] for m in r.seeds if m["ok"]):
            groups.setdefault(r.group, []).append(r)
    return groups


def _stack(runs: list[dict[str, Any]], part: str, column: str) -> np.ndarray | None:
    """The runs' columns as rows of one array, cut to the shortest."""
    series = [m[part][column] for m in runs if m["ok"] and m[part][column]]
    if not series:
        return None
    n = min(len(s) for s in series)
    return np.array([s[:n] for s in series], dtype=np.float64)


def _smooth(values: np.ndarray, width: int) -> np.ndarray:
    if width <= 1 or values.shape[-1] < width:
        return values
    kernel = np.ones(width) / width
    return np.array([np.convolve(v, kernel, mode="valid") for v in values])


def _draw(plt: Any, rows: list[TrainRow], x_of: Callable[[list[dict[str, Any]]], Any],
          y_part: str, y_column: str, xlabel: str, ylabel: str, percent: bool,
          target: bool) -> Any | None:
    groups = _panel_groups(rows)
    if not groups:
        return None
    colors = _colors(list(dict.fromkeys(r.algo for r in rows)))
    fig, axes = _panels(plt, len(groups))
    for ax, group in zip(axes, groups.values(), strict=True):
        for r in group:
            ys = _stack(r.seeds, y_part, y_column)
            xs = x_of(r.seeds)
            if ys is None or xs is None:
                continue
            n = min(ys.shape[1], len(xs))
            ys, xs = ys[:, :n], np.asarray(xs[:n])
            if y_part == "steps":
                width = max(1, n // 40)
                ys = _smooth(ys, width)
                xs = xs[width - 1:]
            scale = 100.0 if percent else 1.0
            style = CPU_BOUND_STYLE if r.cpu_bound else "-"
            label = r.algo + (" (cpu_bound)" if r.cpu_bound else "")
            ax.plot(xs, scale * ys.mean(axis=0), color=colors[r.algo], linestyle=style,
                    label=label)
            if ys.shape[0] > 1:
                ax.fill_between(xs, scale * ys.min(axis=0), scale * ys.max(axis=0),
                                color=colors[r.algo], alpha=0.2, linewidth=0)
        if target and group[0].target_accuracy is not None:
            ax.axhline(100 * group[0].target_accuracy, color="gray", linestyle=":",
                       label=f"target {100 * group[0].target_accuracy:g}%")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(_title(group[0]), fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _eval_times(runs: list[dict[str, Any]]) -> Any:
    times = _stack(runs, "evals", "time_s")
    return None if times is None else times.mean(axis=0)


def _eval_steps(runs: list[dict[str, Any]]) -> Any:
    steps = _stack(runs, "evals", "step")
    return None if steps is None else steps[0]


def _steps(runs: list[dict[str, Any]]) -> Any:
    losses = _stack(runs, "steps", "loss")
    return None if losses is None else np.arange(1, losses.shape[1] + 1)


def plot_accuracy_vs_time(plt: Any, rows: list[TrainRow]) -> Any | None:
    return _draw(plt, rows, _eval_times, "evals", "test_accuracy",
                 "training time (s, the seeds' mean)", "test accuracy (%)", True, True)


def plot_accuracy_vs_step(plt: Any, rows: list[TrainRow]) -> Any | None:
    return _draw(plt, rows, _eval_steps, "evals", "test_accuracy", "step",
                 "test accuracy (%)", True, True)


def plot_loss_vs_step(plt: Any, rows: list[TrainRow]) -> Any | None:
    return _draw(plt, rows, _steps, "steps", "loss", "step",
                 "training loss (running mean)", False, False)


TRAIN_PLOTS: dict[str, Callable[[Any, list[TrainRow]], Any | None]] = {
    "accuracy_vs_time": plot_accuracy_vs_time,
    "accuracy_vs_step": plot_accuracy_vs_step,
    "loss_vs_step": plot_loss_vs_step,
}


def plot_train_run(doc: dict[str, Any], out_dir: Path) -> tuple[list[Path], list[str]]:
    """Write every figure the run has data for; (files written, notes on skipped ones)."""
    plt = _pyplot()
    rows = summarize_training(doc["measurements"])
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    notes: list[str] = []
    for name, draw in TRAIN_PLOTS.items():
        fig = draw(plt, rows)
        if fig is None:
            notes.append(f"{name}: skipped, no run trained")
            continue
        for fmt in FORMATS:
            path = out_dir / f"{name}.{fmt}"
            fig.savefig(path, dpi=120, metadata={"Date": None} if fmt == "svg" else None)
            written.append(path)
        plt.close(fig)
    return written, notes
