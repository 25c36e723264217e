"""All-reduce algorithms by name: ``ALGORITHMS["ina"]`` and, later, host baselines.

An algorithm turns a job into the agents to run in the hosts, and sets up and tears
down whatever the network needs for it (the switch state of an in-network job).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from experiments.jobspec import AgentSpec, JobSpec

if TYPE_CHECKING:
    from experiments.allreduce_net import AllReduceNet


class Algorithm(Protocol):
    name: str

    def prepare(self, net: AllReduceNet, job: JobSpec) -> None: ...

    def agents(self, net: AllReduceNet, job: JobSpec, out_dir: Path) -> list[AgentSpec]: ...

    def finish(self, net: AllReduceNet, job: JobSpec) -> None: ...


class InNetwork:
    """Switch-side aggregation: the controller creates the job on the switches, every
    worker runs ``ina agent`` against its switch's aggregator address."""

    name = "ina"

    def prepare(self, net: AllReduceNet, job: JobSpec) -> None:
        net.create_job(job.job_id, list(job.workers), slots=job.window)

    def agents(self, net: AllReduceNet, job: JobSpec, out_dir: Path) -> list[AgentSpec]:
        plan = net.ctl.jobs.get(job.job_id)
        out = []
        for rank, host in enumerate(job.workers):
            args = ["--job", str(job.job_id), "--workers", str(len(job.workers)),
                    "--aggregator", plan.aggregator[host], "--window", str(job.window),
                    "--timeout", f"{job.timeout_ms:g}", "--k", str(job.k),
                    "--scaling", job.scaling, "--size", str(job.size),
                    "--seed", str(job.seed), "--rank", str(rank), "--dist", job.dist]
            stem = out_dir / f"job{job.job_id}-{host}"
            out.append(AgentSpec(host, args, stem.with_suffix(".npy"),
                                 stem.with_suffix(".json")))
        return out

    def finish(self, net: AllReduceNet, job: JobSpec) -> None:
        net.delete_job(job.job_id)


ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in (InNetwork(),)}
