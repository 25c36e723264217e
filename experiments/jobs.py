"""Run all-reduce jobs in a running network and collect what every worker reports.

``run_jobs`` runs several jobs at once (their agents are released together, or each
job's ``start`` seconds after the first), checks each with its algorithm's check
(``experiments.check``) and returns one ``JobOutcome`` per job. The completion time of
a job is the slowest worker's (each worker times its own all-reduce, from its job's
start); the goodput is the tensor's bits over that time.

The switches' memory is given out before any job starts, in job order: an in-network
job whose window the register arrays cannot give (``controller.jobs.NoRoomError``) is
refused (its outcome says why; the others run), shrunk to the slots that are free, or
run by a host-based algorithm instead, as ``on_full`` says
(``experiments.options.ON_FULL``); its outcome keeps the job as asked and a note.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from controller.jobs import NoRoomError
from experiments.algorithms import ALGORITHMS, Algorithm
from experiments.allreduce_net import AllReduceNet, RunError
from experiments.check import CheckResult
from experiments.jobspec import JobSpec


@dataclass
class JobOutcome:
    job: JobSpec  # as it ran (``asked``: as it was asked, where the switches changed it)
    ok: bool  # every agent succeeded (and, if checked, the check passed)
    errors: list[str]
    stats: list[dict[str, Any]]  # per worker, in job.workers order
    outputs: list[npt.NDArray[np.float32]]
    check: CheckResult | None
    asked: JobSpec | None = None
    note: str | None = None  # what the switches' memory did to the job

    @property
    def on_full(self) -> str | None:
        """``shrink`` or ``fallback`` when the job ran so for want of switch memory."""
        if self.asked is None:
            return None
        return "fallback" if self.asked.algo != self.job.algo else "shrink"

    @property
    def completion_s(self) -> float:
        return max(s["seconds"] for s in self.stats) if self.stats else float("nan")

    @property
    def goodput_mbps(self) -> float:
        return self.job.size * 32 / self.completion_s / 1e6

    def counter(self, name: str) -> int:
        """A packet counter summed over the workers (e.g. ``retransmitted``)."""
        return sum(int(s["counters"][name]) for s in self.stats)

    def to_json(self) -> dict[str, Any]:
        return {
            "job": self.job.to_json(),
            "ok": self.ok,
            "errors": self.errors,
            "completion_s": self.completion_s if self.stats else None,
            "goodput_mbps": self.goodput_mbps if self.stats else None,
            "check": self.check.to_json() if self.check else None,
            "workers": [{"host": h, **s} for h, s in zip(self.job.workers, self.stats,
                                                          strict=True)] if self.stats else [],
        }


def get_algorithm(name: str) -> Algorithm:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise RunError(f"unknown algorithm {name!r} (algorithms: "
                       f"{', '.join(sorted(ALGORITHMS))})") from None


def set_up(net: AllReduceNet, job: JobSpec, on_full: str = "refuse",
           fallback: str = "ring") -> tuple[JobSpec, str | None]:
    """Prepare ``job`` in ``net``: the job as it will run, and a note when the
    switches' memory changed it (``on_full``: see the module docstring); raises
    ``NoRoomError`` for a job refused."""
    if job.algo != "ina":
        get_algorithm(job.algo).prepare(net, job)
        return job, None
    try:
        plan = net.create_job(job.job_id, list(job.workers), slots=job.window,
                              root=job.root, shrink=on_full == "shrink")
    except NoRoomError as e:
        if on_full != "fallback":
            raise
        ran = replace(job, algo=fallback)
        get_algorithm(fallback).prepare(net, ran)
        return ran, f"ran {fallback}, not ina: {e}"
    if plan.slots < job.window:
        return replace(job, window=plan.slots), (
            f"window {plan.slots}, not {job.window}: the switches had {plan.slots} "
            f"slots free for it")
    return job, None


def run_jobs(net: AllReduceNet, jobs: list[JobSpec], out_dir: Path, algo: str | None = None,
             check: bool = True, on_full: str = "refuse", fallback: str = "ring"
             ) -> list[JobOutcome]:
    """Run ``jobs`` at once in ``net`` (every one by ``algo`` when given, else by its
    own); every job's switch state is removed after."""
    if algo is not None:
        jobs = [replace(job, algo=algo) for job in jobs]
    for job in jobs:
        get_algorithm(job.algo)
    get_algorithm(fallback)
    out_dir = out_dir.resolve()  # the agents run in the project directory
    out_dir.mkdir(parents=True, exist_ok=True)
    prepared: list[JobSpec] = []
    refused: dict[int, str] = {}
    notes: dict[int, str | None] = {}
    try:
        for job in jobs:
            try:
                ran, notes[job.job_id] = set_up(net, job, on_full, fallback)
            except NoRoomError as e:
                refused[job.job_id] = str(e)
                continue
            prepared.append(ran)
        agents = [get_algorithm(job.algo).agents(net, job, out_dir) for job in prepared]
        finished = net.run_agents([a for group in agents for a in group],
                                  starts=[job.start for job, group in
                                          zip(prepared, agents, strict=True) for _ in group])
    finally:
        for job in prepared:
            get_algorithm(job.algo).finish(net, job)
    outcomes = []
    at = 0
    ran_as = {job.job_id: (job, group) for job, group in zip(prepared, agents, strict=True)}
    for asked in jobs:
        if asked.job_id in refused:
            outcomes.append(JobOutcome(asked, False, [refused[asked.job_id]], [], [], None))
            continue
        job, group = ran_as[asked.job_id]
        algorithm = get_algorithm(job.algo)
        results = finished[at:at + len(group)]
        at += len(group)
        errors = [f"{r.host}: exit status {r.returncode}: {r.stderr.strip()}"
                  for r in results if r.returncode != 0]
        stats: list[dict[str, Any]] = []
        outputs: list[npt.NDArray[np.float32]] = []
        if not errors:
            for a in group:
                stats.append(json.loads(a.stats.read_text()))
                outputs.append(np.load(a.output, allow_pickle=False))
        result = None
        if check and not errors:
            result = algorithm.check(job, job.inputs(), outputs)
            if not result.ok:
                errors.append(f"check failed: {result.message}")
        note = notes[job.job_id]
        outcomes.append(JobOutcome(job, not errors, errors, stats, outputs, result,
                                   asked if note else None, note))
    return outcomes
