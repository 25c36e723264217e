"""``ina plot RUN_DIR``: the figures of a run, as PNG and SVG in ``RUN_DIR/plots/``.

- ``time_vs_size``: completion time against tensor size per algorithm (log-log), the
  model as dashed lines; one panel per (topology, link rate, loss) with two sizes or more.
- ``speedup_vs_workers``: in-network over ring against N, with the model (framing
  included, dashed) and the ideal 2(N-1)/N (dotted).
- ``goodput_vs_loss``: goodput (algbw) against the loss rate per algorithm, one panel
  per (topology, link rate) at its largest size, when the run has two loss rates or more.
- ``bytes_per_host``: bytes sent per host over the tensor's bytes, per algorithm,
  measured and modelled, payload and wire (frames); the largest size of each topology.
- ``goodput_over_time``: one panel per measurement of several jobs at once or with
  faults (the first ``MAX_TIMELINES``): each job's goodput over time
  (``experiments.job_results``), one line per job, from the first job's start, a dotted
  line marking each job's start and its faults marked where they were injected (solid)
  and detected (dashed) and where each job they touched moved again (dash-dotted, in
  the job's colour); or, for one job, its goodput from its agents' progress, the faults
  marked where they were injected, detected and where the job moved again
  (``experiments.fault_show``). A run of one job at a time without faults has none
  (and no note says so).

Points marked ``cpu_bound`` by the fidelity monitor are drawn hollow (and bars hatched):
they describe the emulator, not the network. A figure the run has no data for is
skipped with a note.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from experiments.summary import Row, Speedup, several, speedups, summarize

FORMATS = ("png", "svg")
PANEL = (5.2, 3.8)  # inches per panel
COLUMNS = 3
CPU_BOUND_LABEL = "hollow: cpu_bound (emulator-limited)"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                         "svg.fonttype": "none", "svg.hashsalt": "ina"})
    return plt


def human_bytes(n: float) -> str:
    """``4000000`` as ``4 MB`` (decimal units, as link rates are)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def _rate(bw: float | None) -> str:
    return "unshaped links" if bw is None else f"{bw:g} Mbit/s"


def _panels(plt: Any, count: int) -> tuple[Any, list[Any]]:
    cols = min(count, COLUMNS)
    rows = -(-count // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(PANEL[0] * cols, PANEL[1] * rows),
                             squeeze=False)
    flat = [ax for line in axes for ax in line]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def _colors(names: list[str]) -> dict[str, Any]:
    import matplotlib

    cycle = matplotlib.colormaps["tab10"]
    return {name: cycle(i % 10) for i, name in enumerate(names)}


def _marker_face(color: Any, cpu_bound: bool) -> Any:
    return "none" if cpu_bound else color


def _scatter(ax: Any, xs: Sequence[float], ys: Sequence[float], bound: Sequence[bool],
             color: Any,
             marker: str = "o") -> None:
    for x, y, b in zip(xs, ys, bound, strict=True):
        ax.plot([x], [y], marker=marker, color=color, markerfacecolor=_marker_face(color, b),
                markersize=7, linestyle="none")


def _legend_items(axes: list[Any], any_bound: bool) -> tuple[list[Any], list[str]]:
    """Every panel's legend entries once, plus the hollow-marker key if needed."""
    items: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            items.setdefault(label, handle)
    if any_bound:
        from matplotlib.lines import Line2D

        items[CPU_BOUND_LABEL] = Line2D([], [], marker="o", color="gray",
                                        markerfacecolor="none", linestyle="none")
    return list(items.values()), list(items)


def _hollow_legend(ax: Any, any_bound: bool, loc: str = "best") -> None:
    handles, labels = _legend_items([ax], any_bound)
    ax.legend(handles, labels, fontsize=8, loc=loc)


def _figure_legend(fig: Any, axes: list[Any], any_bound: bool) -> None:
    """One legend for all panels, below them, so that no panel's data hides under it."""
    handles, labels = _legend_items(axes, any_bound)
    columns = min(len(labels), 4)
    rows = -(-len(labels) // columns)
    fig.legend(handles, labels, loc="lower center", ncols=columns, fontsize=9)
    height = fig.get_size_inches()[1]
    fig.tight_layout(rect=(0, min(0.3, (0.25 * rows + 0.15) / height), 1, 1))


def plot_time_vs_size(plt: Any, rows: list[Row]) -> Any | None:
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        if r.seconds:
            groups.setdefault((r.topo, r.bw, r.loss), []).append(r)
    groups = {k: v for k, v in groups.items() if len({r.size for r in v}) >= 2}
    if not groups:
        return None
    colors = _colors(list(dict.fromkeys(r.algo for r in rows)))
    fig, axes = _panels(plt, len(groups))
    for ax, ((topo, bw, loss), group) in zip(axes, groups.items(), strict=True):
        for algo in dict.fromkeys(r.algo for r in group):
            mine = sorted((r for r in group if r.algo == algo), key=lambda r: r.size)
            xs = [r.tensor_bytes for r in mine]
            ys = [r.seconds or 0.0 for r in mine]
            ax.plot(xs, ys, color=colors[algo], label=algo)
            _scatter(ax, xs, ys, [r.cpu_bound for r in mine], colors[algo])
            model = [(r.tensor_bytes, r.model_seconds) for r in mine if r.model_seconds]
            if model:
                ax.plot(*zip(*model, strict=True), color=colors[algo], linestyle="--",
                        label=f"{algo} (model)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tensor size per worker (bytes)")
        ax.set_ylabel("completion time (s)")
        ax.set_title(f"{topo}, {_rate(bw)}, loss {loss:g}")
    _figure_legend(fig, axes, any(r.cpu_bound for g in groups.values() for r in g))
    return fig


def plot_speedup(plt: Any, rows: list[Row]) -> Any | None:
    ups = speedups(rows)
    if not ups:
        return None
    panels: dict[tuple[Any, ...], list[Speedup]] = {}
    for s in ups:
        panels.setdefault((s.bw, s.loss), []).append(s)
    sizes = sorted({s.size for s in ups})
    colors = _colors([str(size) for size in sizes])
    workers = sorted({s.workers for s in ups})
    hi = max(workers)
    ns = [2 + (hi - 2) * i / 50 for i in range(51)] if hi > 2 else [2.0]
    top = 1.2 * max([2.0, *(s.measured for s in ups), *(s.model or 0 for s in ups)])
    fig, axes = _panels(plt, len(panels))
    for ax, ((bw, loss), group) in zip(axes, panels.items(), strict=True):
        ax.plot(ns, [2 * (n - 1) / n for n in ns], color="black", linestyle=":")
        ax.plot(workers, [2 * (n - 1) / n for n in workers], color="black", linestyle=":",
                marker="_", markersize=14, label="2(N-1)/N")
        for size in sizes:
            mine = sorted((s for s in group if s.size == size), key=lambda s: s.workers)
            if not mine:
                continue
            color, label = colors[str(size)], f"{human_bytes(4 * size)} per worker"
            xs = [s.workers for s in mine]
            ax.plot(xs, [s.measured for s in mine], color=color, label=label)
            _scatter(ax, xs, [s.measured for s in mine], [s.cpu_bound for s in mine], color)
            model = [(s.workers, s.model) for s in mine if s.model]
            if model:
                ax.plot(*zip(*model, strict=True), color=color, linestyle="--", marker="x",
                        label=f"{label} (model)")
        ax.set_xlabel("workers N")
        ax.set_ylabel("speedup of in-network over ring")
        ax.set_xticks(workers)
        ax.set_xlim(min(workers) - 1, hi + 1)
        ax.set_ylim(0, top)
        ax.set_title(f"in-network vs ring, {_rate(bw)}, loss {loss:g}")
    _figure_legend(fig, axes, any(s.cpu_bound for s in ups))
    return fig


def plot_goodput_vs_loss(plt: Any, rows: list[Row]) -> Any | None:
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        if r.seconds:
            groups.setdefault((r.topo, r.bw), []).append(r)
    chosen = {}
    for key, group in groups.items():
        largest = max(r.size for r in group)
        group = [r for r in group if r.size == largest]
        if len({r.loss for r in group}) >= 2:
            chosen[key] = group
    if not chosen:
        return None
    colors = _colors(list(dict.fromkeys(r.algo for r in rows)))
    fig, axes = _panels(plt, len(chosen))
    for ax, ((topo, bw), group) in zip(axes, chosen.items(), strict=True):
        for algo in dict.fromkeys(r.algo for r in group):
            mine = sorted((r for r in group if r.algo == algo), key=lambda r: r.loss)
            xs = [100 * r.loss for r in mine]
            ys = [r.algbw_mbps or 0.0 for r in mine]
            ax.plot(xs, ys, color=colors[algo], label=algo)
            _scatter(ax, xs, ys, [r.cpu_bound for r in mine], colors[algo])
        if bw is not None:
            ax.axhline(bw, color="gray", linestyle=":", label="link rate")
        ax.set_xlabel("loss rate per switch port and direction (%)")
        ax.set_ylabel("goodput S/t (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{topo}, {_rate(bw)}, {human_bytes(4 * group[0].size)} per worker")
    _figure_legend(fig, axes, any(r.cpu_bound for g in chosen.values() for r in g))
    return fig


def plot_bytes_per_host(plt: Any, rows: list[Row]) -> Any | None:
    groups: dict[str, list[Row]] = {}
    for r in rows:
        if r.bytes_sent is not None or r.wire_bytes_sent is not None:
            groups.setdefault(r.topo, []).append(r)
    if not groups:
        return None
    fig, axes = _panels(plt, len(groups))
    bars = [("payload, measured", "bytes_sent", "C0", None),
            ("payload, model", "model_bytes_sent", "C0", "//"),
            ("wire, measured", "wire_bytes_sent", "C1", None),
            ("wire, model", "model_wire_bytes_sent", "C1", "//")]
    for ax, (topo, group) in zip(axes, groups.items(), strict=True):
        largest = max(r.size for r in group)
        mine = [r for r in group if r.size == largest and r.loss == min(g.loss for g in group)]
        mine = list({r.algo: r for r in mine}.values())
        width = 0.8 / len(bars)
        for i, (label, attr, color, hatch) in enumerate(bars):
            xs, ys = [], []
            for j, r in enumerate(mine):
                value = getattr(r, attr)
                if value is not None:
                    xs.append(j + (i - 1.5) * width)
                    ys.append(value / r.tensor_bytes)
            if not ys:
                continue
            measured = hatch is None
            ax.bar(xs, ys, width, label=label, color=color if measured else "white",
                   edgecolor=color, hatch=hatch)
        for j, r in enumerate(mine):
            if r.cpu_bound:
                ax.annotate("cpu_bound", (j, 0), xytext=(0, 2), textcoords="offset points",
                            ha="center", fontsize=7, color="red")
        ax.set_xticks(range(len(mine)), [r.algo for r in mine])
        ax.set_ylabel("bytes sent per host / tensor bytes")
        ax.set_title(f"{topo}, {human_bytes(4 * largest)} per worker")
        top = max([1.0, *(v / r.tensor_bytes for r in mine for _, attr, _, _ in bars
                          if (v := getattr(r, attr)) is not None)])
        ax.set_ylim(0, 1.35 * top)
        ax.legend(fontsize=8, ncols=2, loc="upper left")
    fig.tight_layout()
    return fig


MAX_TIMELINES = 6


def timeline_label(number: int, job: dict[str, Any]) -> str:
    """``job 2 (h3,h4): ina, window 4 of 12``, ``job 2 (h3,h4): ring, fallback``."""
    how = job["algo"] + (", fallback" if job["on_full"] == "fallback" else "")
    if job["window"] is not None:
        how += (f", window {job['window']} of {job['asked_window']}"
                if job["on_full"] == "shrink" else f", window {job['window']}")
    return f"job {number} ({','.join(job['hosts'])}): {how}"


def _over_time(m: dict[str, Any]) -> bool:
    """Whether ``goodput_over_time`` has a panel for measurement ``m``."""
    from experiments.fault_show import goodput_series

    if several(m):
        return any(j.get("timeline") for j in m["jobs"])
    return bool(m.get("faults")) and goodput_series(m) is not None


def plot_goodput_over_time(plt: Any, measurements: list[dict[str, Any]]) -> Any | None:
    from experiments.fault_show import draw_faults, mark_job_faults

    chosen = [m for m in measurements if _over_time(m)][:MAX_TIMELINES]
    if not chosen:
        return None
    fig, axes = _panels(plt, len(chosen))
    for ax, m in zip(axes, chosen, strict=True):
        if not several(m):
            draw_faults(ax, m)
            continue
        colors = _colors([str(n) for n in range(len(m["jobs"]))])
        for n, job in enumerate(m["jobs"]):
            line = job.get("timeline")
            if not line:
                continue
            ax.plot([0.0, *line["t"]], [0.0, *line["goodput_mbps"]], color=colors[str(n)],
                    drawstyle="steps-pre", label=timeline_label(n + 1, job))
            if job["start_s"]:
                ax.axvline(job["start_s"], color=colors[str(n)], linestyle=":")
        mark_job_faults(ax, m, [colors[str(n)] for n in range(len(m["jobs"]))])
        o = m["options"]
        if o.get("bw"):
            ax.axhline(o["bw"], color="gray", linestyle="--", label="link rate")
        bound = " (cpu_bound)" if m.get("cpu_bound") else ""
        marks = ("\nfaults injected (solid), detected (dashed), each job moving again "
                 "(dash-dot)" if m.get("faults") else "")
        ax.set_title(f"point {m['index'] + 1}: {m['point']['topo']}, {_rate(o.get('bw'))}, "
                     f"{o.get('slots')} slots, --on-full {o.get('on_full')}{bound}{marks}",
                     fontsize=9)
        ax.set_xlabel("time since the first job started (s)")
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
    fig.set_size_inches(fig.get_size_inches()[0], fig.get_size_inches()[1] * 1.25)
    fig.tight_layout()
    return fig


PLOTS: dict[str, tuple[Callable[[Any, list[Row]], Any | None], str]] = {
    "time_vs_size": (plot_time_vs_size, "the run has fewer than two sizes per "
                                        "(topology, link rate, loss)"),
    "speedup_vs_workers": (plot_speedup, "the run has no in-network and ring pair of "
                                         "successful measurements"),
    "goodput_vs_loss": (plot_goodput_vs_loss, "the run has fewer than two loss rates"),
    "bytes_per_host": (plot_bytes_per_host, "no measurement counted the bytes sent"),
}


def draw_figures(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Every figure the run has data for, by name (open matplotlib figures, for the
    caller to save and close), and notes on the skipped ones."""
    plt = _pyplot()
    rows = summarize(doc["measurements"])
    figures: dict[str, Any] = {}
    notes: list[str] = []
    for name, (draw, why) in PLOTS.items():
        fig = draw(plt, rows)
        if fig is None:
            notes.append(f"{name}: skipped, {why}")
        else:
            figures[name] = fig
    fig = plot_goodput_over_time(plt, doc["measurements"])
    if fig is not None:  # (a run of one job at a time has no such figure to skip)
        figures["goodput_over_time"] = fig
        count = sum(1 for m in doc["measurements"] if _over_time(m))
        if count > MAX_TIMELINES:
            notes.append(f"goodput_over_time: the first {MAX_TIMELINES} of the {count} "
                         f"measurements of several jobs or with faults")
    elif any(m.get("faults") for m in doc["measurements"]):
        notes.append("goodput_over_time: skipped, no measurement with faults has a "
                     "timeline")
    return figures, notes


def plot_run(doc: dict[str, Any], out_dir: Path) -> tuple[list[Path], list[str]]:
    """Write every figure the run has data for; (files written, notes on skipped ones)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figures, notes = draw_figures(doc)
    plt = _pyplot()
    written: list[Path] = []
    try:
        for name, fig in figures.items():
            for fmt in FORMATS:
                path = out_dir / f"{name}.{fmt}"
                fig.savefig(path, dpi=120, metadata={"Date": None} if fmt == "svg" else None)
                written.append(path)
    finally:
        for fig in figures.values():
            plt.close(fig)
    return written, notes
