"""What a training run records, from its workers' logs: the per-step and per-evaluation
columns, the run's figures, the divergence and ``--check`` verdicts, the CSV columns and
the progress line.

A training measurement in ``results.json`` (``kind`` = ``train``) holds, besides the
point, the options, ``ok``, ``errors``, ``monitor``, ``cpu_bound`` and
``cpu_bound_reasons`` as ``ina run``'s do:

- ``settings``: what every worker shared (model, dataset, seed, workers, batch, lr,
  momentum, steps, eval_every, compute_time); ``parameters``: the model's size;
  ``target_accuracy``;
- ``steps``: columns, one value per step: ``loss`` (the training loss of the global
  mini-batch: the workers' mean), ``compute_s`` (the slowest worker's measured
  compute, before any padding), ``allreduce_s`` (rank 0's time in the all-reduce,
  waiting for slower workers included), ``bytes_sent`` (payload per worker, the mean),
  ``time_s`` (rank 0's training clock at the step's end);
- ``evals``: columns, one value per evaluation (after 0, ``eval_every``, ... and all
  updates): ``step`` (updates so far), ``epoch``, ``time_s``, ``test_accuracy``,
  ``test_loss``;
- ``final_accuracy``, ``final_loss``, ``time_to_target_s`` and ``steps_to_target``
  (the first evaluation at or above the target; null when it never got there),
  ``train_seconds``, ``allreduce_share`` (all-reduce time over training time),
  ``compute_mean_s``, ``allreduce_mean_s``, ``bytes_per_step``;
- ``compute_overruns``: the steps whose compute took longer than ``--compute-time`` on
  some worker (each such run is ``cpu_bound``);
- ``max_param_diff``: the largest difference between any worker's final parameters
  and rank 0's (0 unless a worker diverged), ``diverged_at``: the first update after
  which the workers' parameters differed (null);
- ``check`` (``--check``): ``ok``, ``steps`` checked, ``max_error_over_bound`` (the
  worst element's error over its allowance, any step) and ``message``;
- ``model``: ``allreduce_s`` (``experiments.model``'s all-reduce time for the gradient),
  ``compute_s`` (the measured or padded compute per step), ``step_s`` and
  ``time_to_target_s`` = ``steps_to_target`` x ``step_s``;
- ``workers``: every worker's host, rank and its communicator's counters.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

import numpy as np

from experiments.model import ModelInput, predict
from training.data import steps_per_epoch
from training.sgd import TrainSettings, build

STEP_COLUMNS = ("loss", "compute_s", "allreduce_s", "bytes_sent", "time_s")
EVAL_COLUMNS = ("step", "epoch", "time_s", "test_accuracy", "test_loss")


def train_base_record(point: Any, settings: TrainSettings | None) -> dict[str, Any]:
    o = point.options
    return {"index": point.index, "point": point.to_json(), "options": asdict(o),
            "settings": settings.to_json() if settings else None, "ok": False, "errors": [],
            "workers_count": settings.workers if settings else None, "job": None,
            "parameters": None, "target_accuracy": o.accuracy_target,
            "steps": {c: [] for c in STEP_COLUMNS}, "evals": {c: [] for c in EVAL_COLUMNS},
            "final_accuracy": None, "final_loss": None, "time_to_target_s": None,
            "steps_to_target": None, "train_seconds": None, "allreduce_share": None,
            "compute_mean_s": None, "allreduce_mean_s": None, "bytes_per_step": None,
            "compute_overruns": 0, "max_param_diff": None, "diverged_at": None,
            "check": None, "model": None, "workers": [], "monitor": None,
            "cpu_bound": False, "cpu_bound_reasons": []}


def combine_steps(logs: list[dict[str, Any]]) -> dict[str, list[float]]:
    """The job's per-step columns from every worker's log (rank order)."""
    n = len(logs[0]["loss"])
    out: dict[str, list[float]] = {c: [] for c in STEP_COLUMNS}
    for s in range(n):
        out["loss"].append(float(statistics.fmean(log["loss"][s] for log in logs)))
        out["compute_s"].append(max(log["compute_s"][s] for log in logs))
        out["allreduce_s"].append(logs[0]["allreduce_s"][s])
        out["bytes_sent"].append(float(statistics.fmean(log["bytes_sent"][s] for log in logs)))
        out["time_s"].append(logs[0]["time_s"][s])
    return out


def overruns(logs: Iterable[dict[str, Any]], settings: TrainSettings) -> int:
    """Steps whose compute exceeded ``compute_time`` on some worker."""
    if settings.compute_time is None:
        return 0
    logs = list(logs)
    return sum(1 for s in range(len(logs[0]["compute_s"]))
               if max(log["compute_s"][s] for log in logs) > settings.compute_time)


class Evaluator:
    """Test accuracy and loss of parameter snapshots."""

    def __init__(self, settings: TrainSettings) -> None:
        self.settings = settings
        self.model, self.data = build(settings)
        self.per_epoch = steps_per_epoch(self.data.train_size, settings.workers,
                                         settings.batch)
        self.evals: dict[str, list[float]] = {c: [] for c in EVAL_COLUMNS}

    def add(self, updates: int, params: np.ndarray, time_s: float) -> None:
        accuracy, loss = self.model.evaluate(params, self.data.x_test, self.data.y_test)
        e = self.evals
        e["step"].append(updates)
        e["epoch"].append(updates / self.per_epoch)
        e["time_s"].append(time_s)
        e["test_accuracy"].append(accuracy)
        e["test_loss"].append(loss)


def eval_time(updates: int, times: list[float]) -> float:
    """The training clock when the parameters had ``updates`` updates (the update
    itself is counted in the next step's compute)."""
    return times[updates - 1] if updates else 0.0


def allreduce_model(record: dict[str, Any], algo: str, options: Any) -> float | None:
    """The model's all-reduce time for one step's gradient (0 for ``local``; ``gloo``
    all-reduces CPU tensors by a ring, so it takes the ring's)."""
    if algo == "local":
        return 0.0
    job = record.get("job") or {}
    m = ModelInput(record["workers_count"], record["parameters"], options.bw, k=options.k,
                   window=job.get("window", 64))
    prediction = predict("ring" if algo == "gloo" else algo, m)  # Gloo's is a ring
    return prediction.seconds if prediction else None


def finish_record(record: dict[str, Any], options: Any, reasons: list[str]) -> None:
    """The run's figures from its columns (``steps``, ``evals``), and the verdicts."""
    steps, evals = record["steps"], record["evals"]
    settings = TrainSettings.from_json(record["settings"])
    if steps["time_s"]:
        total = steps["time_s"][-1]
        record["train_seconds"] = total
        record["allreduce_share"] = sum(steps["allreduce_s"]) / total if total > 0 else None
        record["compute_mean_s"] = statistics.fmean(steps["compute_s"])
        record["allreduce_mean_s"] = statistics.fmean(steps["allreduce_s"])
        record["bytes_per_step"] = statistics.fmean(steps["bytes_sent"])
    if evals["step"]:
        record["final_accuracy"] = evals["test_accuracy"][-1]
        record["final_loss"] = evals["test_loss"][-1]
        target = record["target_accuracy"]
        for u, t, acc in zip(evals["step"], evals["time_s"], evals["test_accuracy"],
                             strict=True):
            if acc >= target:
                record["steps_to_target"], record["time_to_target_s"] = u, t
                break
    if record["compute_overruns"]:
        worst = max(steps["compute_s"]) if steps["compute_s"] else 0.0
        reasons = [*reasons, f"the compute of {record['compute_overruns']} of "
                             f"{len(steps['compute_s'])} steps took longer than "
                             f"--compute-time {settings.compute_time:g} s (the longest "
                             f"{worst:.3f} s)"]
    record["cpu_bound"] = bool(reasons)
    record["cpu_bound_reasons"] = reasons
    if record["compute_mean_s"] is not None and record["parameters"]:
        t = allreduce_model(record, options.algo, options)
        padded = [max(c, settings.compute_time) if settings.compute_time is not None else c
                  for c in steps["compute_s"]]
        compute = statistics.fmean(padded)
        step = compute + t if t is not None else None
        record["model"] = {
            "allreduce_s": t, "compute_s": compute, "step_s": step,
            "time_to_target_s": (record["steps_to_target"] * step
                                 if step is not None and record["steps_to_target"] is not None
                                 else None)}
    record["ok"] = not record["errors"]


def divergence(digests: list[list[int]], finals: list[np.ndarray], hosts: list[str]
               ) -> tuple[float, int | None, str | None]:
    """(largest difference from rank 0's final parameters, the first update after
    which some worker's parameters differed, the error to report)."""
    diff = 0.0
    for p in finals[1:]:
        if p.shape != finals[0].shape:
            diff = float("inf")
        else:
            diff = max(diff, float(np.max(np.abs(p.astype(np.float64) - finals[0]))))
    first = None
    culprits: list[str] = []
    for u in range(len(digests[0])):
        odd = [hosts[r] for r in range(1, len(digests)) if digests[r][u] != digests[0][u]]
        if odd:
            first, culprits = u, odd
            break
    if first is None and diff == 0:
        return 0.0, None, None
    where = f"after update {first}" if first is not None else "at the end"
    return diff, first, (f"the workers' parameters diverged {where}: {', '.join(culprits)} "
                         f"differ from {hosts[0]}'s (largest difference {diff:.3g} at the "
                         f"end); every worker must hold the same parameters")


TRAIN_CSV_COLUMNS: dict[str, Any] = {
    "index": lambda m: m["index"],
    "topo": lambda m: m["point"]["topo"],
    "workers": lambda m: m.get("workers_count"),
    "algo": lambda m: m["point"]["algo"],
    "model": lambda m: m["point"]["model"],
    "dataset": lambda m: m["point"]["dataset"],
    "seed": lambda m: m["point"]["seed"],
    "bw_mbps": lambda m: m["point"]["bw"],
    "loss": lambda m: m["point"]["loss"],
    "target": lambda m: m["options"]["target"],
    "k": lambda m: m["options"]["k"],
    "parameters": lambda m: m.get("parameters"),
    "steps": lambda m: (m.get("settings") or {}).get("steps"),
    "ok": lambda m: m["ok"],
    "error": lambda m: "; ".join(m["errors"]),
    "final_accuracy": lambda m: m.get("final_accuracy"),
    "target_accuracy": lambda m: m.get("target_accuracy"),
    "time_to_target_s": lambda m: m.get("time_to_target_s"),
    "steps_to_target": lambda m: m.get("steps_to_target"),
    "train_seconds": lambda m: m.get("train_seconds"),
    "allreduce_share": lambda m: m.get("allreduce_share"),
    "compute_mean_s": lambda m: m.get("compute_mean_s"),
    "allreduce_mean_s": lambda m: m.get("allreduce_mean_s"),
    "bytes_per_step": lambda m: m.get("bytes_per_step"),
    "model_allreduce_s": lambda m: (m.get("model") or {}).get("allreduce_s"),
    "model_time_to_target_s": lambda m: (m.get("model") or {}).get("time_to_target_s"),
    "compute_overruns": lambda m: m.get("compute_overruns"),
    "max_param_diff": lambda m: m.get("max_param_diff"),
    "check_ok": lambda m: (m.get("check") or {}).get("ok"),
    "cpu_bound": lambda m: m.get("cpu_bound"),
}


def train_result_text(m: dict[str, Any]) -> str:
    """One line about a training run, for the progress output."""
    if m["final_accuracy"] is None:
        return "FAILED: " + "; ".join(m["errors"])
    text = f"test accuracy {100 * m['final_accuracy']:.1f}%"
    if m["time_to_target_s"] is not None:
        text += (f", {100 * m['target_accuracy']:g}% after {m['steps_to_target']} steps, "
                 f"{m['time_to_target_s']:.1f} s")
    else:
        text += f", never {100 * m['target_accuracy']:g}%"
    if m["train_seconds"] is not None:
        text += f"; {m['train_seconds']:.1f} s in all"
        if m["allreduce_share"] is not None:
            text += f", {100 * m['allreduce_share']:.0f}% in all-reduce"
    if m["check"] is not None:
        text += ", check " + ("passed" if m["check"]["ok"] else "FAILED")
    if m["cpu_bound"]:
        text += ", cpu_bound"
    if not m["ok"]:
        text += " FAILED: " + "; ".join(m["errors"])
    return text
