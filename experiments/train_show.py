"""``ina show RUN_DIR`` for a training run (``ina train``).

One row per (topology, model, link rate, loss, algorithm), over the seeds: the final
test accuracy (mean and standard deviation over the seeds, and its difference from
``local``'s, the exact-average reference), the time and the steps to the target
accuracy (means over the seeds that reached it; ``2/3`` says how many did), the share
of the training time spent in all-reduce, the mean step time, and the speedup in time
to target over ``ring`` with the model's (the compute measured per step plus
``experiments.model``'s all-reduce time, times the steps to target).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from experiments.show import CPU_BOUND_NOTE, format_table


@dataclass
class TrainRow:
    topo: str
    workers: int | None
    model: str
    dataset: str
    bw: float | None
    loss: float
    algo: str
    runs: int = 0
    ok_runs: int = 0
    accuracy: float | None = None  # mean final test accuracy of the runs that trained
    accuracy_sd: float | None = None
    reached: int = 0  # seeds that reached the target
    time_to_target: float | None = None
    steps_to_target: float | None = None
    model_time_to_target: float | None = None
    allreduce_share: float | None = None
    step_s: float | None = None
    target_accuracy: float | None = None
    cpu_bound: bool = False
    errors: list[str] = field(default_factory=list)
    seeds: list[dict[str, Any]] = field(default_factory=list)  # the measurements

    @property
    def group(self) -> tuple[Any, ...]:
        return (self.topo, self.model, self.dataset, self.bw, self.loss)


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def summarize_training(measurements: list[dict[str, Any]]) -> list[TrainRow]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for m in measurements:
        p = m["point"]
        key = (p["topo"], p["model"], p["dataset"], p["bw"], p["loss"], p["algo"])
        groups.setdefault(key, []).append(m)
    rows = []
    for (topo, model, dataset, bw, loss, algo), ms in groups.items():
        good = [m for m in ms if m["ok"] and m.get("final_accuracy") is not None]
        accs = [m["final_accuracy"] for m in good]
        hit = [m for m in good if m.get("time_to_target_s") is not None]
        steps = [m["train_seconds"] / len(m["steps"]["time_s"]) for m in good
                 if m.get("train_seconds") and m["steps"]["time_s"]]
        rows.append(TrainRow(
            topo, next((m["workers_count"] for m in ms if m.get("workers_count")), None),
            model, dataset, bw, loss, algo, runs=len(ms), ok_runs=len(good),
            accuracy=_mean(accs), accuracy_sd=statistics.stdev(accs) if len(accs) > 1 else None,
            reached=len(hit), time_to_target=_mean([m["time_to_target_s"] for m in hit]),
            steps_to_target=_mean([m["steps_to_target"] for m in hit]),
            model_time_to_target=_mean([t for m in hit
                                        if (t := (m.get("model") or {})
                                            .get("time_to_target_s")) is not None]),
            allreduce_share=_mean([m["allreduce_share"] for m in good
                                   if m.get("allreduce_share") is not None]),
            step_s=_mean(steps), target_accuracy=ms[0].get("target_accuracy"),
            cpu_bound=any(m.get("cpu_bound") for m in ms),
            errors=[e for m in ms for e in m["errors"]], seeds=ms))
    return rows


def reference(rows: list[TrainRow], row: TrainRow, algo: str) -> TrainRow | None:
    return next((r for r in rows if r.group == row.group and r.algo == algo), None)


def speedup(rows: list[TrainRow], row: TrainRow, over: str = "ring") -> float | None:
    """Time to target of ``over`` over this row's."""
    base = reference(rows, row, over)
    if base is None or not base.time_to_target or not row.time_to_target:
        return None
    return base.time_to_target / row.time_to_target


def model_speedup(rows: list[TrainRow], row: TrainRow, over: str = "ring") -> float | None:
    base = reference(rows, row, over)
    if base is None or not base.model_time_to_target or not row.model_time_to_target:
        return None
    return base.model_time_to_target / row.model_time_to_target


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _accuracy(r: TrainRow) -> str:
    if r.accuracy is None:
        return "-"
    text = f"{100 * r.accuracy:.1f}"
    return text + (f" ± {100 * r.accuracy_sd:.1f}" if r.accuracy_sd is not None else "")


def _note(r: TrainRow) -> str:
    notes = []
    if r.cpu_bound:
        notes.append("cpu_bound")
    if r.ok_runs < r.runs:
        failed = r.runs - r.ok_runs
        first = " ".join(r.errors[0].split()) if r.errors else ""
        notes.append(f"{failed} failed" + (f": {first[:57]}..." if len(first) > 60
                                           else f": {first}" if first else ""))
    return "; ".join(notes)


def columns(rows: list[TrainRow]) -> list[tuple[str, Callable[[TrainRow], str]]]:
    def vs_local(r: TrainRow) -> str:
        base = reference(rows, r, "local")
        if base is None or base.accuracy is None or r.accuracy is None:
            return "-"
        return f"{100 * (r.accuracy - base.accuracy):+.1f}"

    def ratio(get: Callable[..., float | None]) -> Callable[[TrainRow], str]:
        return lambda r: _num(get(rows, r), ".2f")

    return [
        ("topo", lambda r: r.topo),
        ("N", lambda r: _num(r.workers, "d")),
        ("model", lambda r: r.model),
        ("bw (Mbit/s)", lambda r: "none" if r.bw is None else f"{r.bw:g}"),
        ("loss", lambda r: f"{r.loss:g}"),
        ("algo", lambda r: r.algo),
        ("seeds", lambda r: f"{r.ok_runs}/{r.runs}"),
        ("accuracy (%)", _accuracy),
        ("vs local", vs_local),
        ("target", lambda r: _num(None if r.target_accuracy is None
                                  else 100 * r.target_accuracy, "g") + "%"),
        ("reached", lambda r: f"{r.reached}/{r.ok_runs}"),
        ("time to target (s)", lambda r: _num(r.time_to_target, ".1f")),
        ("steps to target", lambda r: _num(r.steps_to_target, ".1f")),
        ("step (s)", lambda r: _num(r.step_s, ".3f")),
        ("all-reduce share", lambda r: _num(None if r.allreduce_share is None
                                            else 100 * r.allreduce_share, ".0f") + "%"),
        ("speedup over ring", ratio(speedup)),
        ("model", ratio(model_speedup)),
        ("note", _note),
    ]


def format_train_run(doc: dict[str, Any], markdown: bool = False) -> str:
    rows = summarize_training(doc["measurements"])
    machine = doc.get("machine", {})
    head = (f"run {doc.get('run_dir', '')}: {len(doc['measurements'])} training runs, "
            f"{doc.get('time', '?')}, git {doc.get('git_revision', '?')[:12]}, "
            f"{machine.get('cpus', '?')} CPUs ({machine.get('cpu_model') or '?'})")
    if not rows:
        return head + "\n(no runs)"
    cols = columns(rows)
    out = [head, "", format_table([name for name, _ in cols],
                                  [[get(r) for _, get in cols] for r in rows], markdown)]
    if any(r.cpu_bound for r in rows):
        out += ["", CPU_BOUND_NOTE + " (or a step's compute overran --compute-time)"]
    return "\n".join(out)
