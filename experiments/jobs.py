"""Run all-reduce jobs in a running network and collect what every worker reports.

``run_jobs`` runs several jobs at once (their agents are released together), checks
each with its algorithm's check (``experiments.check``) and returns one ``JobOutcome``
per job. The completion time of a job is the slowest worker's (each worker times its
own all-reduce, and all start together); the goodput is the tensor's bits over that
time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from experiments.algorithms import ALGORITHMS, Algorithm
from experiments.allreduce_net import AllReduceNet, RunError
from experiments.check import CheckResult
from experiments.jobspec import JobSpec


@dataclass
class JobOutcome:
    job: JobSpec
    ok: bool  # every agent succeeded (and, if checked, the check passed)
    errors: list[str]
    stats: list[dict[str, Any]]  # per worker, in job.workers order
    outputs: list[npt.NDArray[np.float32]]
    check: CheckResult | None

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


def run_jobs(net: AllReduceNet, jobs: list[JobSpec], out_dir: Path, algo: str = "ina",
             check: bool = True) -> list[JobOutcome]:
    """Run ``jobs`` at once in ``net``; every job's switch state is removed after."""
    algorithm = get_algorithm(algo)
    out_dir = out_dir.resolve()  # the agents run in the project directory
    out_dir.mkdir(parents=True, exist_ok=True)
    prepared: list[JobSpec] = []
    try:
        for job in jobs:
            algorithm.prepare(net, job)
            prepared.append(job)
        agents = [algorithm.agents(net, job, out_dir) for job in jobs]
        finished = net.run_agents([a for group in agents for a in group])
    finally:
        for job in prepared:
            algorithm.finish(net, job)
    outcomes = []
    at = 0
    for job, group in zip(jobs, agents, strict=True):
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
        outcomes.append(JobOutcome(job, not errors, errors, stats, outputs, result))
    return outcomes
