"""The model against emulation, and at scale: ``ina model --validate`` and ``--plot``.

``validation_rows`` holds every measured point of some runs (``results.json``) beside
what the model says of it now (``experiments.model`` with the point's topology,
``experiments.model_topology``): one row per (topology, algorithm, size, link rate, K,
window). A repeat is *faithful* when it succeeded on shaped links (the model needs a
rate) and the fidelity monitor did not mark it ``cpu_bound``; a row's time is the mean
of its faithful repeats, or of all that succeeded (then the row is ``cpu_bound``).
``format_validation`` prints the table and how many faithful rows lie within
``TOLERANCE`` of the model.

``plot_speedup_vs_workers`` draws the in-network job's speedup over ring against N, the
model's curves for stars and fat-trees up to 1,024 workers at one size, rate, K and
window, with the measured points of the given runs and the model's value for each
(at that point's own size, rate and K) beside it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.model import ModelInput, bus_factor, predict
from experiments.model_topology import ShapeError, shape_of

TOLERANCE = 0.15
FAMILY_CURVES = {
    "star": [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024],
    "fattree": [2, 4, 6, 8, 10, 12, 14, 16],  # K: N = K^3/4, 2 .. 1024
}


@dataclass(frozen=True)
class ModelSettings:
    alpha: float
    hop: float
    tcp_efficiency: float


def model_input(topo: str, size: int, bw: float | None, k: int, window: int,
                settings: ModelSettings | None = None) -> ModelInput:
    """The model's input for a point on ``topo`` (``ShapeError`` for a bad one)."""
    shape = shape_of(topo)
    if settings is None:
        return ModelInput(shape.hosts, size, bw, k=k, window=window, shape=shape)
    return ModelInput(shape.hosts, size, bw, k=k, window=window, shape=shape,
                      alpha=settings.alpha, hop=settings.hop,
                      tcp_efficiency=settings.tcp_efficiency)


@dataclass
class ValidationRow:
    topo: str
    workers: int
    algo: str
    size: int
    bw: float | None
    k: int
    window: int
    runs: int  # repeats that succeeded
    faithful_runs: int  # of them, not cpu_bound
    seconds: float | None
    model: float | None

    @property
    def cpu_bound(self) -> bool:
        return self.runs > 0 and self.faithful_runs == 0

    @property
    def ratio(self) -> float | None:
        return self.seconds / self.model if self.seconds and self.model else None

    @property
    def faithful(self) -> bool:
        return self.faithful_runs > 0 and self.seconds is not None

    @property
    def within(self) -> bool:
        return self.ratio is not None and abs(self.ratio - 1) <= TOLERANCE


def validation_rows(docs: list[dict[str, Any]],
                    settings: ModelSettings | None = None) -> list[ValidationRow]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for doc in docs:
        for m in doc["measurements"]:
            o = m["options"]
            if o.get("loss") or o.get("duplicate"):
                continue  # the model has no loss
            key = (o["topo"], o["algo"], o["size"], o["bw"], o["k"], o["window"])
            groups.setdefault(key, []).append(m)
    rows = []
    for (topo, algo, size, bw, k, window), ms in groups.items():
        good = [m for m in ms if m["ok"] and m.get("completion_s")]
        faithful = [m for m in good if not m.get("cpu_bound") and bw is not None]
        times = [m["completion_s"] for m in (faithful or good)]
        try:
            m_in = model_input(topo, size, bw, k, window, settings)
        except ShapeError:
            continue
        p = predict(algo, m_in)
        rows.append(ValidationRow(topo, m_in.workers, algo, size, bw, k, window, len(good),
                                  len(faithful), statistics.fmean(times) if times else None,
                                  p.seconds if p else None))
    return rows


def format_validation(rows: list[ValidationRow], markdown: bool = False) -> str:
    from experiments.show import format_table

    def num(x: float | None, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    def note(r: ValidationRow) -> str:
        if r.bw is None:
            return "no rate"
        if r.cpu_bound:
            return "cpu_bound"
        if not r.within:
            return f"outside {100 * TOLERANCE:g}%"
        return ""

    table = [[r.topo, str(r.workers), r.algo, str(r.size), num(r.bw, "g"), str(r.k),
              f"{r.faithful_runs}/{r.runs}", num(r.seconds, ".3f"), num(r.model, ".3f"),
              num(r.ratio, ".2f"), note(r)] for r in rows]
    text = format_table(["topo", "N", "algo", "size", "bw (Mbit/s)", "K", "faithful",
                         "measured (s)", "model (s)", "measured/model", "note"], table,
                        markdown)
    faithful = [r for r in rows if r.faithful]
    inside = [r for r in faithful if r.within]
    verdict = (f"{len(inside)} of {len(faithful)} faithful points within "
               f"{100 * TOLERANCE:g}% of the model")
    outside = [r for r in faithful if not r.within]
    if outside:
        verdict += "; outside: " + ", ".join(
            f"{r.topo} {r.algo} ({r.ratio:.2f})" if r.ratio else f"{r.topo} {r.algo}"
            for r in outside)
    return f"{text}\n\n{verdict}"


# ----------------------------------------------------------------- the figure


def speedup(topo: str, size: int, bw: float, k: int, window: int,
            settings: ModelSettings | None = None) -> float:
    m = model_input(topo, size, bw, k, window, settings)
    ina, ring = predict("ina", m), predict("ring", m)
    assert ina and ring and ina.seconds and ring.seconds
    return ring.seconds / ina.seconds


def measured_speedups(docs: list[dict[str, Any]], settings: ModelSettings | None = None
                      ) -> list[tuple[str, int, float, float, bool]]:
    """(topology, N, measured speedup, the model's at that point, cpu_bound) for every
    topology, size, rate, K and window a run measured both ina and ring at."""
    rows = validation_rows(docs, settings)
    by = {(r.topo, r.algo, r.size, r.bw, r.k, r.window): r for r in rows}
    out = []
    for r in rows:
        base = by.get((r.topo, "ring", r.size, r.bw, r.k, r.window))
        if r.algo != "ina" or base is None or not r.seconds or not base.seconds:
            continue
        if not r.model or not base.model:
            continue
        out.append((r.topo, r.workers, base.seconds / r.seconds, base.model / r.model,
                    r.cpu_bound or base.cpu_bound))
    return out


def plot_speedup_vs_workers(out_dir: Path, size: int, bw: float, k: int, window: int,
                            docs: list[dict[str, Any]],
                            settings: ModelSettings | None = None) -> list[Path]:
    from experiments.plot import FORMATS, _pyplot, human_bytes

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for family, color in (("star", "tab:blue"), ("fattree", "tab:orange")):
        specs = [f"{family},{x}" for x in FAMILY_CURVES[family]]
        ns = [shape_of(s).hosts for s in specs]
        label = f"model, {family}" + (" (N = K³/4)" if family == "fattree" else "")
        ax.plot(ns, [speedup(s, size, bw, k, window, settings) for s in specs],
                color=color, marker="." if family == "fattree" else None, label=label)
    ns = [2 ** i for i in range(1, 11)]
    ax.plot(ns, [bus_factor(n) for n in ns], color="black", linestyle=":",
            label="2(N-1)/N")
    points = measured_speedups(docs, settings)
    markers = {"star": "o", "leafspine": "s", "fattree": "^"}
    shown: set[str] = set()
    any_bound = False
    for topo, n, measured, model, bound in points:
        family = topo.split(",")[0]
        marker = markers.get(family, "D")
        point_label = None if family in shown else f"emulated, {family}"
        shown.add(family)
        any_bound |= bound
        ax.plot([n], [measured], marker=marker, color="tab:green", linestyle="none",
                markerfacecolor="none" if bound else "tab:green", markersize=8,
                label=point_label)
        ax.plot([n], [model], marker="x", color="tab:red", linestyle="none", markersize=7,
                label=None if "model" in shown else "model at the emulated point")
        shown.add("model")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.set_xlabel("workers N")
    ax.set_ylabel("speedup of in-network over ring")
    ax.set_ylim(0, None)
    ax.set_title(f"in-network vs ring all-reduce, {human_bytes(4 * size)} per worker, "
                 f"{bw:g} Mbit/s, K = {k}, window {window}", fontsize=9)
    handles, labels = ax.get_legend_handles_labels()
    if any_bound:
        labels.append("hollow: cpu_bound")
        handles.append(plt.Line2D([], [], linestyle="none"))
    ax.legend(handles, labels, fontsize=8, loc="best")
    fig.tight_layout()
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in FORMATS:
        path = out_dir / f"speedup_vs_workers.{fmt}"
        fig.savefig(path, dpi=120)
        written.append(path)
    plt.close(fig)
    return written
