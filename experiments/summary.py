"""Measurements averaged over repeats: one ``Row`` per (topology, algorithm, size, link
rate, loss), what ``ina show`` prints and ``ina plot`` draws.

Times and byte counts are means over the repeats that succeeded; a row is
``cpu_bound`` when any of its repeats was (its figures describe the emulator).
Measurements of several jobs at once have no row: their figures are their jobs'
(``experiments.job_results``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from experiments.model import bus_factor

VALUE_BYTES = 4


@dataclass
class Row:
    topo: str
    workers: int | None
    algo: str
    size: int  # float32 values per worker
    bw: float | None  # Mbit/s, None: unshaped
    loss: float
    runs: int = 0
    ok_runs: int = 0
    seconds: float | None = None  # mean completion time of the successful repeats
    seconds_sd: float | None = None
    model_seconds: float | None = None
    bytes_sent: float | None = None  # per host, application payload
    model_bytes_sent: float | None = None
    wire_bytes_sent: float | None = None  # per host, frames on its link
    model_wire_bytes_sent: float | None = None
    cpu_bound: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.topo, self.algo, self.size, self.bw, self.loss)

    @property
    def tensor_bytes(self) -> int:
        return VALUE_BYTES * self.size

    @property
    def algbw_mbps(self) -> float | None:
        """nccl-tests' algorithm bandwidth S / t, in Mbit/s."""
        return self.tensor_bytes * 8 / self.seconds / 1e6 if self.seconds else None

    @property
    def busbw_mbps(self) -> float | None:
        """algbw * 2(N-1)/N: comparable across N and with the link rate."""
        if self.algbw_mbps is None or not self.workers:
            return None
        return self.algbw_mbps * bus_factor(self.workers)

    @property
    def goodput_fraction(self) -> float | None:
        return self.algbw_mbps / self.bw if self.algbw_mbps and self.bw else None


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def several(measurement: dict[str, Any]) -> bool:
    """Whether a measurement ran more than one job."""
    return len(measurement.get("jobs") or []) > 1


def phase_goodput(entry: dict[str, Any], others: list[dict[str, Any]]
                  ) -> tuple[float | None, float | None]:
    """A job's mean goodput over time (its entry's ``timeline``,
    ``experiments.job_results``) while one of ``others`` (the other jobs of its
    measurement) ran too, and while it ran alone; None for a part it did not have.
    Each sample interval within the job's run counts where its middle falls."""
    line = entry.get("timeline")
    if not line or entry["end_s"] is None:
        return None, None
    runs = [(j["start_s"], j["end_s"] if j["end_s"] is not None else float("inf"))
            for j in others]
    bits = {True: 0.0, False: 0.0}
    time = {True: 0.0, False: 0.0}
    for t0, t1, g in zip([0.0, *line["t"]], line["t"], line["goodput_mbps"], strict=False):
        middle = (t0 + t1) / 2
        if not entry["start_s"] <= middle <= entry["end_s"]:
            continue
        shared = any(a <= middle <= b for a, b in runs)
        bits[shared] += g * (t1 - t0)
        time[shared] += t1 - t0
    beside, alone = (bits[k] / time[k] if time[k] > 0 else None for k in (True, False))
    return beside, alone


def summarize(measurements: Iterable[dict[str, Any]]) -> list[Row]:
    """One row per (topology, algorithm, size, bw, loss), in the order first seen; none
    for the measurements of several jobs."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for m in measurements:
        if several(m):
            continue
        p = m["point"]
        groups.setdefault((p["topo"], p["algo"], p["size"], p["bw"], p["loss"]), []).append(m)
    rows = []
    for (topo, algo, size, bw, loss), ms in groups.items():
        good = [m for m in ms if m["ok"] and m.get("completion_s")]
        times = [m["completion_s"] for m in good]
        models = [m["model"] for m in ms if m.get("model")]
        model = models[0] if models else {}
        row = Row(topo, next((m["workers_count"] for m in ms if m.get("workers_count")), None),
                  algo, size, bw, loss, runs=len(ms), ok_runs=len(good),
                  seconds=_mean(times),
                  seconds_sd=statistics.stdev(times) if len(times) > 1 else None,
                  model_seconds=model.get("seconds"),
                  bytes_sent=_mean([m["bytes_sent_per_host"] for m in good
                                    if m.get("bytes_sent_per_host") is not None]),
                  model_bytes_sent=model.get("bytes_sent_per_host"),
                  wire_bytes_sent=_mean([m["wire_bytes_sent_per_host"] for m in good
                                         if m.get("wire_bytes_sent_per_host") is not None]),
                  model_wire_bytes_sent=model.get("wire_bytes_sent_per_host"),
                  cpu_bound=any(m.get("cpu_bound") for m in ms),
                  errors=[e for m in ms for e in m["errors"]])
        rows.append(row)
    return rows


@dataclass(frozen=True)
class Speedup:
    """In-network over ring at one (topology, size, bw, loss)."""

    topo: str
    workers: int
    size: int
    bw: float | None
    loss: float
    measured: float
    model: float | None  # the model's ring time / its in-network time (framing included)
    ideal: float  # 2(N-1)/N
    cpu_bound: bool


def speedups(rows: list[Row], over: str = "ring", algo: str = "ina") -> list[Speedup]:
    by_key = {r.key: r for r in rows}
    out = []
    for r in rows:
        if r.algo != algo or not r.seconds or not r.workers:
            continue
        base = by_key.get((r.topo, over, r.size, r.bw, r.loss))
        if base is None or not base.seconds:
            continue
        model = (base.model_seconds / r.model_seconds
                 if base.model_seconds and r.model_seconds else None)
        out.append(Speedup(r.topo, r.workers, r.size, r.bw, r.loss, base.seconds / r.seconds,
                           model, bus_factor(r.workers), r.cpu_bound or base.cpu_bound))
    return out
