"""A measurement point with faults: the controller on watch, the faults injected on
time, and what the point records about each.

``FaultSession(net, options)`` puts the network's controller on watch
(``AllReduceNet.supervise``: probes every ``--probe-period``, ``--fallback``,
``--hold``) before the jobs are created, so every in-network job's agents get its
control channel; ``release(t0)`` starts the injector when the agents start;
``finish(outcomes)`` stops both and returns what goes into the point's record:

- ``faults``: one entry per fault: when it was injected, when the controller detected
  it (``detection_s`` after the injection, and by what: probes or the P4Runtime
  stream), when a switch or a controller came back (``back_s``), when the job made
  progress again (``progress_s`` after the detection), the wire chunks resent because
  of it, and the algorithm the job went on with (``ina`` on a new tree, ``ring`` or
  ``ps`` on the hosts), the new tree's root, and why the job failed if it did
  (``job_error``); ``error`` when the fault itself could not be done;
- ``finished_with``: the algorithm that completed the job;
- ``timeline``: rank 0's progress over time (seconds, wire chunks done), which ``ina
  plot`` turns into goodput;
- ``controller_events``: every detection, recovery, take-over the controllers logged.

With several jobs (``--jobs``, ``[[job]]``) a fault may touch some of them: the
controller pauses, re-plans and resumes each job whose tree used what failed, and the
others run on. Then ``faults`` has the fault's own figures (injected, detected, back)
and ``jobs``, the ids of the jobs it touched, and ``finished_with`` and ``timeline``
stay empty; ``per_job`` has, for each job (into its entry of the record's ``jobs``),
``faults``, its entries of the faults that touched it (the fault's figures and the
job's recovery: when it moved again, chunks resent, what it went on with; none for a
job no fault touched), ``finished_with`` and ``progress``, its rank 0's wire chunks
done over time.

Times are seconds from the agents' start (the first job's start).
"""

from __future__ import annotations

import time
from typing import Any

from controller.supervisor import Recovery, SupervisorSettings
from experiments.allreduce_net import AllReduceNet
from experiments.fault_injector import FaultInjector, Injection
from experiments.faults import Fault, parse_faults
from experiments.jobs import JobOutcome
from experiments.options import RunOptions


class FaultSession:
    def __init__(self, net: AllReduceNet, options: RunOptions) -> None:
        self.net = net
        self.faults = parse_faults(options.faults)
        settings = SupervisorSettings(probe_period=options.probe_period,
                                      fallback=options.fallback, hold=options.hold_s,
                                      ecmp=net.ecmp)
        self.first_supervisor = len(net.supervisors)
        net.supervise(settings)
        self.injector = FaultInjector(net, self.faults)
        self.t0: float | None = None

    def release(self, t0: float | None = None) -> None:
        self.t0 = time.monotonic() if t0 is None else t0
        self.injector.start(self.t0)

    def finish(self, outcomes: list[JobOutcome]) -> dict[str, Any]:
        """What the faults did to the jobs of ``outcomes`` (see the module docstring;
        ``per_job``: job id -> that job's figures, with several jobs)."""
        self.injector.stop()
        t0 = self.t0 if self.t0 is not None else time.monotonic()
        supervisors = self.net.supervisors[self.first_supervisor:]
        events = sorted((e for s in supervisors for e in s.events), key=lambda e: e["t"])
        recoveries = [r for s in supervisors for r in s.recoveries]
        ends = [o.job.start + o.completion_s for o in outcomes if o.stats]
        end = max(ends) if ends else None
        one = outcomes[0].job.job_id if len(outcomes) == 1 else None
        out: dict[str, Any] = {
            "faults": [fault_entry(i, events, recoveries, t0, end, one)
                       for i in self.injector.records],
            "controller_events": [_relative(e, t0) for e in events],
            "finished_with": None, "timeline": None, "errors": [], "per_job": {},
        }
        for entry in out["faults"]:
            if one is None:
                _fault_alone(entry)
            if entry["error"]:
                out["errors"].append(f"fault {entry['fault']!r}: {entry['error']}")
        if one is not None:
            out["finished_with"], out["timeline"] = _progress(outcomes[0])
            return out
        for outcome in outcomes:
            job_id = outcome.job.job_id
            mine = [fault_entry(i, events, recoveries, t0, end, job_id)
                    for i in self.injector.records]
            finished_with, progress = _progress(outcome)
            out["per_job"][job_id] = {
                "faults": [e for e in mine if e["jobs"]],
                "finished_with": finished_with, "progress": progress}
        return out


JOB_FIELDS = ("progress_s", "recovered_s", "chunks_resent", "algorithm", "root",
              "job_error")


def _fault_alone(entry: dict[str, Any]) -> None:
    """A measurement of several jobs keeps, in its own entry of a fault, the fault's
    figures and the jobs it touched; each job's recovery is in that job's entry."""
    for key in JOB_FIELDS:
        entry[key] = None
    if entry["jobs"]:
        entry["note"] = ("touched job " if len(entry["jobs"]) == 1 else "touched jobs ") + \
            ", ".join(str(j) for j in entry["jobs"])
    if entry["error"] and entry["error"].startswith("not injected: the job had"):
        entry["error"] = entry["error"].replace("the job had", "the jobs had")


def _progress(outcome: JobOutcome) -> tuple[str | None, dict[str, Any] | None]:
    """The algorithm that finished ``outcome``'s job and its rank 0's progress over time
    (seconds from the first job's start, wire chunks done); Nones without stats."""
    if not outcome.stats:
        return None, None
    control = outcome.stats[0].get("control") or {}
    line = control.get("timeline", [])
    start = outcome.job.start
    return control.get("finished_with"), {
        "t": [round(start + t, 4) for t, _ in line], "chunks": [c for _, c in line],
        "k": outcome.job.k}


def _relative(event: dict[str, Any], t0: float) -> dict[str, Any]:
    out = {k: v for k, v in event.items() if k not in ("t", "at")}
    out["t_s"] = round(event["t"] - t0, 4)
    if "at" in event:
        out["at_s"] = round(event["at"] - t0, 4)
    return out


def _detection(fault: Fault, events: list[dict[str, Any]], after: float
               ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The controller's detection of ``fault`` and, for a switch or controller that
    comes back, its return (the first matching events from ``after`` on)."""
    def first(event: str, subject: Any) -> dict[str, Any] | None:
        for e in events:
            if e["event"] == event and subject(e["subject"]) and e.get("at", e["t"]) >= after:
                return e
        return None

    kind, target, action = fault.kind, fault.target, fault.action
    if kind in ("link", "host"):
        ends = set(target)

        def is_link(subject: str) -> bool:
            if not subject.startswith("link "):
                return False
            names = set(subject[5:].split("-"))
            return names == ends if kind == "link" else target[0] in names
        return first("down" if action == "down" else "up", is_link), None
    if kind == "switch":
        def is_switch(subject: str) -> bool:
            return subject == f"switch {target[0]}"
        down = first("down", is_switch) if action in ("down", "restart") else None
        up = first("up", is_switch) if action in ("up", "restart") else None
        return (down or up), up
    if action in ("up", "restart"):
        return None, first("take-over", lambda s: s == "controller")
    return None, None


def fault_entry(injection: Injection, events: list[dict[str, Any]],
                recoveries: list[Recovery], t0: float, end: float | None,
                job: int | None = None) -> dict[str, Any]:
    """The record of one fault: the fault's own figures and the recovery from it of
    ``job`` (None: of the one job it touched). ``jobs``: the ids of the jobs whose
    tree it touched (of ``job`` alone, when given)."""
    f = injection.fault

    def rel(t: float | None) -> float | None:
        return None if t is None else round(t - t0, 4)

    entry: dict[str, Any] = {**f.to_json(), "injected_s": rel(injection.started),
                             "detected_s": None, "detected_by": None, "detection_s": None,
                             "back_s": None, "progress_s": None, "recovered_s": None,
                             "chunks_resent": None, "algorithm": None, "root": None,
                             "note": "", "job_error": None, "jobs": [],
                             "error": injection.error}
    if injection.started is None:
        when = "" if end is None else f": the job had finished at {end:.3f} s"
        entry["error"] = f"not injected{when}"
        return entry
    detected, back = _detection(f, events, injection.started - 0.05)
    if back is not None:
        entry["back_s"] = rel(back.get("at", back["t"]))
    if detected is None:
        if f.kind == "controller":
            entry["note"] = "the data plane needs no controller: the job ran on"
        return entry
    at = detected.get("at", detected["t"])
    entry["detected_s"] = rel(at)
    entry["detected_by"] = detected.get("by")
    entry["detection_s"] = round(at - injection.started, 4)
    cause = f"{detected['subject']} {detected['event']}"
    touched = [r for r in recoveries if r.cause == cause and abs(r.detected - at) < 1e-6]
    mine = [r for r in touched if job is None or r.job == job]
    if not mine:
        entry["note"] = "no job's tree used it" if job is None or not touched else \
            "the job's tree did not use it"
        return entry
    entry["jobs"] = sorted({r.job for r in mine})
    rec = mine[0]
    entry["chunks_resent"] = rec.resent
    entry["algorithm"] = rec.algorithm
    entry["root"] = rec.root
    entry["note"] = rec.note
    entry["job_error"] = rec.error
    if rec.moving is not None:
        entry["recovered_s"] = rel(rec.moving)
        entry["progress_s"] = round(rec.moving - at, 4)
    return entry
