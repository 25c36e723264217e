"""What ``ina show`` and ``ina plot`` say about faults (``experiments.fault_run``
records them).

``fault_table``: one row per fault of every measurement that had some: when it was
injected, how long the controller took to detect it and by what, when a switch or a
controller came back, how long after the detection the job made progress again, the
wire chunks resent because of it and what the job went on with.

``draw_faults``: a measurement's panel of ``ina plot``'s ``goodput_over_time``: its
goodput over time (rank 0's progress, in data values reduced per second), each fault
marked where it was injected (solid), detected (dashed) and where the job moved again
(dotted).
"""

from __future__ import annotations

from typing import Any

from experiments.show import format_table

RESAMPLE = 0.2  # seconds per goodput point


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _label(m: dict[str, Any]) -> str:
    o = m.get("options") or {}
    return (f"{o.get('topo', '?')} {o.get('algo', '?')} {o.get('target', 'builtin')} "
            f"#{m['index'] + 1}")


def fault_table(doc: dict[str, Any], markdown: bool = False) -> str | None:
    rows = []
    for m in doc["measurements"]:
        for f in m.get("faults") or []:
            if f.get("error"):
                what = f"FAILED: {f['error']}"
            elif f.get("job_error"):
                what = f"the job failed: {f['job_error']}"
            elif f.get("algorithm"):
                what = (f"ina, tree rooted at {f['root']}" if f["algorithm"] == "ina"
                        else f"{f['algorithm']} on the hosts")
            else:
                what = f.get("note") or "-"
            rows.append([_label(m), f["fault"], _s(f.get("injected_s")),
                         _s(f.get("detection_s")), f.get("detected_by") or "-",
                         _s(f.get("back_s")), _s(f.get("progress_s")),
                         "-" if f.get("chunks_resent") is None else str(f["chunks_resent"]),
                         what])
    if not rows:
        return None
    return format_table(["point", "fault", "injected (s)", "detected after (s)", "by",
                         "back at (s)", "moving after (s)", "chunks resent", "went on with"],
                        rows, markdown)


def goodput_series(m: dict[str, Any]) -> tuple[list[float], list[float]] | None:
    """(times, Mbit/s of float32 values reduced) from a measurement's timeline (the wire
    chunks rank 0 had done, sampled): the chunks done in every ``RESAMPLE`` seconds,
    never below zero (a rewind sends some again)."""
    timeline = m.get("timeline")
    if not timeline or len(timeline.get("t") or []) < 2:
        return None
    ts, chunks, k = timeline["t"], timeline["chunks"], int(timeline["k"])
    steps = int(ts[-1] / RESAMPLE) + 1
    done = []
    i = 0
    for n in range(steps + 1):  # the chunks done at n * RESAMPLE
        while i + 1 < len(ts) and ts[i + 1] <= n * RESAMPLE:
            i += 1
        done.append(chunks[i])
    times = [(n + 0.5) * RESAMPLE for n in range(steps)]
    rates = [max(0, done[n + 1] - done[n]) * k * 32 / RESAMPLE / 1e6 for n in range(steps)]
    return times, rates


def draw_faults(ax: Any, m: dict[str, Any]) -> None:
    """Measurement ``m``'s goodput over time on ``ax``, its faults marked."""
    import matplotlib

    series = goodput_series(m)
    assert series is not None
    color = matplotlib.colormaps["tab10"](0)
    ax.plot(*series, color=color, label=_label(m), linewidth=1.5)
    for f in m["faults"]:
        for key, style in (("injected_s", "-"), ("detected_s", "--"), ("recovered_s", ":")):
            if f.get(key) is not None:
                ax.axvline(f[key], color=color, linestyle=style, linewidth=1, alpha=0.8)
        if f.get("injected_s") is not None:
            ax.annotate(f["fault"].rsplit(" at ", 1)[0], (f["injected_s"], 1.0),
                        xycoords=("data", "axes fraction"), xytext=(3, -12),
                        textcoords="offset points", fontsize=8, color=color)
    bw = (m.get("options") or {}).get("bw")
    if bw:
        ax.axhline(bw, color="gray", linewidth=0.8, linestyle="-.",
                   label=f"link rate {bw:g} Mbit/s")
    ax.set_xlabel("time since the agents started (s)")
    ax.set_ylabel("goodput (Mbit/s of float32 values)")
    ax.set_title(f"point {m['index'] + 1}: faults injected (solid), detected (dashed), "
                 "moving again (dotted)", fontsize=9)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="lower right")
