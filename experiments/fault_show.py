"""What ``ina show`` and ``ina plot`` say about faults (``experiments.fault_run``
records them).

``fault_text``: what a fault did, in a line. ``fault_table``: one row per fault of
every measurement that had some (per fault and job it touched, for a measurement of
several jobs): when it was injected, how long the controller took to detect it and by
what, when a switch or a controller came back, how long after the detection the job
made progress again, the wire chunks resent because of it and what the job went on
with.

``draw_faults``: a measurement's panel of ``ina plot``'s ``goodput_over_time``: its
goodput over time (rank 0's progress, in data values reduced per second), each fault
marked where it was injected (solid), detected (dashed) and where the job moved again
(dotted). ``mark_job_faults`` marks the faults on the panel of a measurement of several
jobs: injected and detected in black, and where each job it touched moved again
(dash-dotted) in that job's colour.
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


def fault_text(f: dict[str, Any]) -> str:
    """What a fault did, in words (``experiments.fault_run`` records it)."""
    if f.get("error"):
        return f"FAILED: {f['error']}"
    parts = [f"injected at {f['injected_s']:.3f} s"]
    if f.get("detection_s") is not None:
        parts.append(f"detected {f['detection_s']:.3f} s later ({f['detected_by']})")
    if f.get("back_s") is not None:
        parts.append(f"back at {f['back_s']:.3f} s")
    if f.get("progress_s") is not None:
        how = f"on a tree rooted at {f['root']}" if f.get("algorithm") == "ina" else \
            f"by {f['algorithm']} on the hosts"
        parts.append(f"the job moved again {f['progress_s']:.3f} s after the detection, "
                     f"{how}, {f['chunks_resent']} chunks resent")
    if f.get("job_error"):
        parts.append(f"the job failed: {f['job_error']}")
    elif f.get("note"):
        parts.append(f["note"])
    return "; ".join(parts)


def job_faults(m: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(point label, fault entry) for every fault of measurement ``m``: of a
    measurement of several jobs, the entry of every job it touched (labelled with the
    job) or, where it touched none, its own."""
    label = _label(m)
    if len(m.get("jobs") or []) < 2:
        return [(label, f) for f in m.get("faults") or []]
    out = []
    for f in m.get("faults") or []:
        mine = [(f"{label} job {j['job_id']}", e) for j in m["jobs"]
                for e in j.get("faults") or []
                if (e["fault"], e["injected_s"]) == (f["fault"], f["injected_s"])]
        out += mine or [(label, f)]
    return out


def fault_table(doc: dict[str, Any], markdown: bool = False) -> str | None:
    rows = []
    for m in doc["measurements"]:
        for label, f in job_faults(m):
            if f.get("error"):
                what = f"FAILED: {f['error']}"
            elif f.get("job_error"):
                what = f"the job failed: {f['job_error']}"
            elif f.get("algorithm"):
                what = (f"ina, tree rooted at {f['root']}" if f["algorithm"] == "ina"
                        else f"{f['algorithm']} on the hosts")
            else:
                what = f.get("note") or "-"
            rows.append([label, f["fault"], _s(f.get("injected_s")),
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


def mark_job_faults(ax: Any, m: dict[str, Any], colors: list[Any]) -> None:
    """The faults of ``m``, a measurement of several jobs, on its goodput panel ``ax``
    (``colors``: the jobs', in order; see the module docstring)."""
    for f in m.get("faults") or []:
        for key, style in (("injected_s", "-"), ("detected_s", "--")):
            if f.get(key) is not None:
                ax.axvline(f[key], color="black", linestyle=style, linewidth=1, alpha=0.7)
        if f.get("injected_s") is not None:
            ax.annotate(f["fault"].rsplit(" at ", 1)[0], (f["injected_s"], 1.0),
                        xycoords=("data", "axes fraction"), xytext=(3, -12),
                        textcoords="offset points", fontsize=8)
    for job, color in zip(m["jobs"], colors, strict=True):
        for f in job.get("faults") or []:
            if f.get("recovered_s") is not None:
                ax.axvline(f["recovered_s"], color=color, linestyle="-.", linewidth=1)
