"""What a measurement records about each of its jobs (``results.json``'s ``jobs``).

One entry per job, whatever their number: its id, hosts and start; the algorithm and
window it ran with and those it asked for (``on_full``, ``shrink`` or ``fallback``,
with a ``note``, where the switches' memory changed them); ``ok``, ``errors``,
``completion_s`` (the slowest worker's time from the job's start) and ``end_s``
(start + completion), ``goodput_mbps`` (its tensor's bits over that time),
``busbw_mbps``, ``bytes_sent_per_host``, ``check``; ``model``, the alpha-beta model of
the job alone on the network; and ``timeline``, its goodput over time.

The timeline comes from the fidelity monitor's samples of the switch interfaces that
face the job's hosts (``experiments.monitor``, every 50 ms): what those interfaces
sent is what the job's hosts received, and the job's tensor bits are spread over the
samples as that traffic was, so that the timeline's mean over the job's run is its
goodput. ``t`` is in seconds since the first job started, the same clock for every
job of the measurement.

A measurement of several jobs (``several``) has no figures of its own beyond
``completion_s``, the time from the first job's start until the last job ended: its
``jobs`` hold them, and ``ina show`` and ``ina plot`` read them there. There each job
also has ``goodput_beside_mbps`` and ``goodput_alone_mbps``: its timeline's mean over
the part of its run during which another job ran too, and over the part during which
it ran alone (None where there was none): what the jobs did to each other, where they
share a link or a switch's CPU.
"""

from __future__ import annotations

from typing import Any

from experiments.fault_show import fault_text
from experiments.jobs import JobOutcome
from experiments.model import ModelInput, bus_factor, predict
from experiments.monitor import MonitorReport
from experiments.options import RunOptions
from experiments.summary import phase_goodput


def goodput_timeline(samples: list[tuple[float, dict[str, tuple[int, int]]]],
                     ifaces: list[str], size: int) -> dict[str, list[float]] | None:
    """The goodput over time of a job of ``size`` values per worker whose hosts sit
    behind the switch interfaces ``ifaces`` (see the module docstring); None without
    samples or traffic."""
    received = [sum(links[i][1] for i in ifaces if i in links) for _, links in samples]
    total = received[-1] - received[0] if received else 0
    if total <= 0:
        return None
    times: list[float] = []
    goodput: list[float] = []
    for (t0, _), (t1, _), r0, r1 in zip(samples, samples[1:], received, received[1:],
                                        strict=False):
        if t1 > t0:
            times.append(round(t1, 4))
            goodput.append(round(size * 32 * (r1 - r0) / total / (t1 - t0) / 1e6, 4))
    return {"t": times, "goodput_mbps": goodput}


def job_record(outcome: JobOutcome, options: RunOptions, report: MonitorReport | None,
               host_ifaces: dict[str, str]) -> dict[str, Any]:
    """One job's entry of a measurement (see the module docstring)."""
    job = outcome.job
    asked = outcome.asked or job
    n = len(job.workers)
    seconds = outcome.completion_s if outcome.stats else None
    prediction = predict(job.algo, ModelInput(n, job.size, options.bw, k=job.k,
                                              window=job.window))
    sent = [s["bytes_sent"] for s in outcome.stats if "bytes_sent" in s]
    ifaces = [host_ifaces[h] for h in job.workers if h in host_ifaces]
    goodput = job.size * 32 / seconds / 1e6 if seconds else None
    return {
        "job_id": job.job_id, "hosts": list(job.workers), "start_s": job.start,
        "algo": job.algo, "asked_algo": asked.algo, "size": job.size,
        "window": job.window if job.algo == "ina" else None,
        "asked_window": asked.window if asked.algo == "ina" else None,
        "on_full": outcome.on_full, "note": outcome.note,
        "ok": outcome.ok, "errors": list(outcome.errors),
        "completion_s": seconds, "end_s": job.start + seconds if seconds else None,
        "goodput_mbps": goodput,
        "busbw_mbps": goodput * bus_factor(n) if goodput else None,
        "bytes_sent_per_host": sum(sent) / len(sent) if sent and len(sent) == n else None,
        "check": outcome.check.to_json() if outcome.check else None,
        "model": prediction.to_json() if prediction else None,
        "timeline": goodput_timeline(report.link_samples, ifaces, job.size)
        if report is not None and seconds else None,
    }


def job_error(entry: dict[str, Any], error: str) -> str:
    """A job's error as its measurement lists it: naming the job."""
    name = f"job {entry['job_id']}"
    return error if error.startswith(f"{name} ") else f"{name}: {error}"


def fill_several(record: dict[str, Any], outcomes: list[JobOutcome]) -> None:
    """The figures of a measurement of several jobs, from its ``jobs`` entries (already
    in ``record``): ``ok``, ``errors`` (each job's, named), every worker's stats (with
    its job) and ``completion_s`` (see the module docstring)."""
    jobs = record["jobs"]
    for entry in jobs:
        record["errors"] += [job_error(entry, e) for e in entry["errors"]]
    record["ok"] = all(entry["ok"] for entry in jobs) and not record["errors"]
    record["workers"] = [{**w, "job": o.job.job_id}
                         for o in outcomes for w in o.to_json()["workers"]]
    ends = [entry["end_s"] for entry in jobs if entry["end_s"] is not None]
    record["completion_s"] = max(ends) if ends else None
    for entry in jobs:
        entry["goodput_beside_mbps"], entry["goodput_alone_mbps"] = phase_goodput(
            entry, [j for j in jobs if j is not entry])


# ------------------------------------------------------------------- text


def job_head(entry: dict[str, Any]) -> str:
    """``job 2 (h3,h4, from 0.5 s): ina, window 4 of 12, 200000 values``."""
    where = ",".join(entry["hosts"])
    if entry["start_s"]:
        where += f", from {entry['start_s']:g} s"
    how = entry["algo"]
    if entry["on_full"] == "fallback":
        how += f" (fallback: {entry['asked_algo']} did not fit)"
    if entry["window"] is not None:
        asked = entry["asked_window"]
        how += (f", window {entry['window']} of {asked} (shrunk)"
                if asked != entry["window"] else f", window {entry['window']}")
    return f"job {entry['job_id']} ({where}): {how}, {entry['size']} values"


def job_result(entry: dict[str, Any]) -> str:
    """``0.812 s, goodput 7.88 Mbit/s, check passed`` (or why the job failed)."""
    if entry["completion_s"] is None:
        return "FAILED: " + "; ".join(entry["errors"])
    text = f"{entry['completion_s']:.3f} s, goodput {entry['goodput_mbps']:.2f} Mbit/s"
    phases = [f"{entry[key]:.2f} {what}" for key, what in
              (("goodput_beside_mbps", "beside another job"), ("goodput_alone_mbps", "alone"))
              if entry.get(key) is not None]
    if phases:
        text += f" ({', '.join(phases)})"
    check = entry["check"]
    if check is not None:
        text += ", check " + ("passed" if check["ok"] else "FAILED")
        if check["ok"] and check.get("exact"):
            text += " (exact)"
    if entry["errors"]:
        text += " FAILED: " + "; ".join(entry["errors"])
    return text


def jobs_lines(record: dict[str, Any]) -> list[str]:
    """Every job of a measurement, one line each, and what the switches and the faults
    did to it."""
    lines = []
    for entry in record["jobs"]:
        lines.append(f"{job_head(entry)}: {job_result(entry)}")
        if entry["note"]:
            lines.append(f"  {entry['note']}")
        for f in entry.get("faults") or []:
            lines.append(f"  fault {f['fault']}: {fault_text(f)}")
        if entry.get("finished_with") not in (None, "ina"):
            lines.append(f"  finished by {entry['finished_with']} on the hosts (no tree "
                         "could serve the job)")
    return lines
