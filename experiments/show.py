"""``ina show RUN_DIR``: the table of a run, in nccl-tests' terms.

One line per (topology, algorithm, size, link rate, loss), averaged over the repeats:
the size in bytes and in float32 values (count), the completion time, the algorithm
bandwidth algbw = S / t and the bus bandwidth busbw = algbw * 2(N-1)/N (for a
bandwidth-optimal all-reduce, busbw approaches the link rate whatever N is), the
model's time (``experiments.model``) and the ``cpu_bound`` mark of the fidelity
monitor. Then, when the run has them, in-network over ring speedups against the model
and bytes sent per host against the model, and the measurements of several jobs at
once: one line per job, with the algorithm and window it ran with (``JOB_COLUMNS``).
``--markdown`` prints Markdown tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from experiments.summary import Row, Speedup, phase_goodput, several, speedups, summarize

CPU_BOUND_NOTE = ("cpu_bound: a switch or agent process (or the whole machine) was "
                  "CPU-saturated; those figures describe the emulator, not the network")


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _rate(bw: float | None) -> str:
    return "none" if bw is None else f"{bw:g}"


def _note(row: Row) -> str:
    notes = []
    if row.cpu_bound:
        notes.append("cpu_bound")
    if row.ok_runs < row.runs:
        failed = row.runs - row.ok_runs
        notes.append(f"{failed} failed: {_shorten(row.errors[0])}" if row.errors
                     else f"{failed} failed")
    return "; ".join(notes)


NOTE_WIDTH = 60


def _shorten(text: str) -> str:
    """An error for the note column (results.json has it whole)."""
    text = " ".join(text.split())
    return text if len(text) <= NOTE_WIDTH else text[:NOTE_WIDTH - 3] + "..."


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


MAIN_COLUMNS: list[tuple[str, Callable[[Row], str]]] = [
    ("topo", lambda r: r.topo),
    ("N", lambda r: _num(r.workers, "d")),
    ("algo", lambda r: r.algo),
    ("size (B)", lambda r: str(r.tensor_bytes)),
    ("count", lambda r: str(r.size)),
    ("bw (Mbit/s)", lambda r: _rate(r.bw)),
    ("loss", lambda r: f"{r.loss:g}"),
    ("time (s)", lambda r: _num(r.seconds, ".4f")),
    ("algbw (Mbit/s)", lambda r: _num(r.algbw_mbps, ".2f")),
    ("busbw (Mbit/s)", lambda r: _num(r.busbw_mbps, ".2f")),
    ("model (s)", lambda r: _num(r.model_seconds, ".4f")),
    ("time/model", lambda r: _num(_ratio(r.seconds, r.model_seconds), ".2f")),
    ("runs", lambda r: f"{r.ok_runs}/{r.runs}"),
    ("note", _note),
]

SPEEDUP_COLUMNS: list[tuple[str, Callable[[Speedup], str]]] = [
    ("topo", lambda s: s.topo),
    ("N", lambda s: str(s.workers)),
    ("size (B)", lambda s: str(4 * s.size)),
    ("bw (Mbit/s)", lambda s: _rate(s.bw)),
    ("loss", lambda s: f"{s.loss:g}"),
    ("ina over ring", lambda s: f"{s.measured:.2f}"),
    ("model", lambda s: _num(s.model, ".2f")),
    ("2(N-1)/N", lambda s: f"{s.ideal:.2f}"),
    ("measured/model", lambda s: _num(_ratio(s.measured, s.model), ".2f")),
    ("note", lambda s: "cpu_bound" if s.cpu_bound else ""),
]

BYTES_COLUMNS: list[tuple[str, Callable[[Row], str]]] = [
    ("topo", lambda r: r.topo),
    ("algo", lambda r: r.algo),
    ("size (B)", lambda r: str(r.tensor_bytes)),
    ("sent/host (B)", lambda r: _num(r.bytes_sent, ".0f")),
    ("model (B)", lambda r: _num(r.model_bytes_sent, ".0f")),
    ("sent/model", lambda r: _num(_ratio(r.bytes_sent, r.model_bytes_sent), ".3f")),
    ("wire/host (B)", lambda r: _num(r.wire_bytes_sent, ".0f")),
    ("model wire (B)", lambda r: _num(r.model_wire_bytes_sent, ".0f")),
    ("wire/model", lambda r: _num(_ratio(r.wire_bytes_sent, r.model_wire_bytes_sent), ".3f")),
]


def _job_algo(j: dict[str, Any]) -> str:
    return f"{j['algo']} (fallback)" if j["on_full"] == "fallback" else j["algo"]


def _job_window(j: dict[str, Any]) -> str:
    if j["window"] is None:
        return "-"
    return f"{j['window']}/{j['asked_window']}" if j["on_full"] == "shrink" else str(j["window"])


def _job_check(j: dict[str, Any]) -> str:
    check = j["check"]
    if check is None:
        return "-"
    return ("exact" if check.get("exact") else "ok") if check["ok"] else "FAILED"


def _job_note(m: dict[str, Any], j: dict[str, Any]) -> str:
    notes = ["cpu_bound"] if m.get("cpu_bound") else []
    if j["errors"]:
        notes.append(_shorten(j["errors"][0]))
    return "; ".join(notes)


JobLine = tuple[dict[str, Any], int, dict[str, Any]]  # measurement, job number, job


def _phases(x: JobLine) -> tuple[float | None, float | None]:
    """The job's goodput beside another job and alone (``phase_goodput``)."""
    return phase_goodput(x[2], [j for j in x[0]["jobs"] if j is not x[2]])

JOB_COLUMNS: list[tuple[str, Callable[[JobLine], str]]] = [
    ("point", lambda x: str(x[0]["index"] + 1)),
    ("topo", lambda x: x[0]["point"]["topo"]),
    ("job", lambda x: str(x[1])),
    ("hosts", lambda x: ",".join(x[2]["hosts"])),
    ("start (s)", lambda x: f"{x[2]['start_s']:g}"),
    ("algo", lambda x: _job_algo(x[2])),
    ("window", lambda x: _job_window(x[2])),
    ("size (B)", lambda x: str(4 * x[2]["size"])),
    ("time (s)", lambda x: _num(x[2]["completion_s"], ".4f")),
    ("end (s)", lambda x: _num(x[2]["end_s"], ".4f")),
    ("algbw (Mbit/s)", lambda x: _num(x[2]["goodput_mbps"], ".2f")),
    ("beside another job (Mbit/s)", lambda x: _num(_phases(x)[0], ".2f")),
    ("alone (Mbit/s)", lambda x: _num(_phases(x)[1], ".2f")),
    ("model alone (s)", lambda x: _num((x[2]["model"] or {}).get("seconds"), ".4f")),
    ("time/model", lambda x: _num(_ratio(x[2]["completion_s"],
                                         (x[2]["model"] or {}).get("seconds")), ".2f")),
    ("check", lambda x: _job_check(x[2])),
    ("note", lambda x: _job_note(x[0], x[2])),
]


def job_lines(measurements: list[dict[str, Any]]) -> list[JobLine]:
    """Every job of the measurements of several jobs."""
    return [(m, n, j) for m in measurements if several(m)
            for n, j in enumerate(m["jobs"], 1)]


def format_table(header: list[str], rows: list[list[str]], markdown: bool = False) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    numeric = [all(_numeric(r[i]) for r in rows) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if right else c.ljust(w)
                         for c, w, right in zip(cells, widths, numeric, strict=True)).rstrip()
    return "\n".join([line(header), *[line(r) for r in rows]])


def _numeric(cell: str) -> bool:
    """Right-aligned: numbers, ``-`` and ``ok/total``."""
    if cell == "-" or re.fullmatch(r"\d+/\d+", cell):
        return True
    try:
        float(cell)
    except ValueError:
        return False
    return True


def table(columns: list[tuple[str, Callable[[Any], str]]], items: list[Any],
           markdown: bool) -> str:
    return format_table([name for name, _ in columns],
                        [[get(item) for _, get in columns] for item in items], markdown)


def format_run(doc: dict[str, Any], markdown: bool = False) -> str:
    """The whole ``ina show`` output for a results document."""
    rows = summarize(doc["measurements"])
    jobs = job_lines(doc["measurements"])
    machine = doc.get("machine", {})
    head = (f"run {doc.get('run_dir', '')}: {len(doc['measurements'])} measurements, "
            f"{doc.get('time', '?')}, git {doc.get('git_revision', '?')[:12]}, "
            f"{machine.get('cpus', '?')} CPUs ({machine.get('cpu_model') or '?'})")
    if not rows and not jobs:
        return head + "\n(no measurements)"
    out = [head]
    if rows:
        out += ["", table(MAIN_COLUMNS, rows, markdown)]
    ups = speedups(rows)
    if ups:
        out += ["", "in-network over ring (time of ring / time of ina):",
                table(SPEEDUP_COLUMNS, ups, markdown)]
    counted = [r for r in rows if r.bytes_sent is not None or r.wire_bytes_sent is not None]
    if counted:
        out += ["", "bytes sent per host (payload as the agents count it; wire: frames "
                    "on the host's link, as htb counts them):",
                table(BYTES_COLUMNS, counted, markdown)]
    if jobs:
        out += ["", "several jobs at once (time: from the job's start; end: from the first "
                    "job's start; window: given/asked where the switches had fewer slots "
                    "free; model: the job alone):",
                table(JOB_COLUMNS, jobs, markdown)]
    from experiments.fault_show import fault_table

    faults = fault_table(doc, markdown)
    if faults:
        out += ["", "faults (seconds from the agents' start; detected and moving again: "
                    "after the injection and after the detection):", faults]
    if any(r.cpu_bound for r in rows) or any(m.get("cpu_bound") for m, _, _ in jobs):
        out += ["", CPU_BOUND_NOTE]
    return "\n".join(out)
