"""All-reduce algorithms by name: ``ALGORITHMS["ina"]`` (in-network aggregation) and
the host-based baselines ``ring``, ``ps``, ``ps-sharded`` and ``hd``
(``hosts.baselines``).

An algorithm turns a job into the agents to run in the hosts, sets up and tears down
whatever the network needs for it (the switch state of an in-network job; nothing for
the baselines, whose TCP traffic takes the IPv4 routes the controller installed when
the network started), and checks the workers' results with the bound that fits its
arithmetic (``experiments.check``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from experiments.jobspec import AgentSpec, JobSpec
from hosts.baselines.registry import COLLECTIVES
from hosts.baselines.tcp import DEFAULT_PORT

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from experiments.allreduce_net import AllReduceNet
    from experiments.check import CheckResult

    Floats = npt.NDArray[np.float32]


class Algorithm(Protocol):
    name: str

    def prepare(self, net: AllReduceNet, job: JobSpec) -> None: ...

    def agents(self, net: AllReduceNet, job: JobSpec, out_dir: Path) -> list[AgentSpec]: ...

    def finish(self, net: AllReduceNet, job: JobSpec) -> None: ...

    def check(self, job: JobSpec, inputs: list[Floats], outputs: list[Floats]
              ) -> CheckResult: ...


class InNetwork:
    """Switch-side aggregation: the controller creates the job on the switches, every
    worker runs ``ina agent`` against its switch's aggregator address."""

    name = "ina"

    def prepare(self, net: AllReduceNet, job: JobSpec) -> None:
        net.create_job(job.job_id, list(job.workers), slots=job.window, root=job.root)

    def agents(self, net: AllReduceNet, job: JobSpec, out_dir: Path) -> list[AgentSpec]:
        plan = net.ctl.jobs.get(job.job_id)
        out = []
        for rank, host in enumerate(job.workers):
            args = ["--job", str(job.job_id), "--workers", str(len(job.workers)),
                    "--aggregator", plan.aggregator[host], "--window", str(job.window),
                    "--timeout", f"{job.timeout_ms:g}", "--k", str(job.k),
                    "--scaling", job.scaling, "--size", str(job.size),
                    "--seed", str(job.seed), "--rank", str(rank), "--dist", job.dist]
            if net.supervisor is not None:  # the controller watches: its control channel
                args += ["--control", str(net.control_socket)]
            stem = out_dir / f"job{job.job_id}-{host}"
            out.append(AgentSpec(host, args, stem.with_suffix(".npy"),
                                 stem.with_suffix(".json")))
        return out

    def finish(self, net: AllReduceNet, job: JobSpec) -> None:
        net.delete_job(job.job_id)

    def check(self, job: JobSpec, inputs: list[Floats], outputs: list[Floats]
              ) -> CheckResult:
        """The quantized sum: within the quantizer's bound."""
        from experiments.check import check_allreduce
        from hosts.quantize import Scaling

        return check_allreduce(inputs, outputs, job.k, Scaling(job.scaling))


class HostBased:
    """A host-based all-reduce (``hosts.baselines``): one ``ina agent --algo NAME`` per
    worker, rank = position in the job, connected over TCP to the others' addresses.
    The parameter server (``ps``) is the job's ``ps_host``, by default its first
    worker (rank 0)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def prepare(self, net: AllReduceNet, job: JobSpec) -> None:
        pass

    def agents(self, net: AllReduceNet, job: JobSpec, out_dir: Path) -> list[AgentSpec]:
        topology = net.ctl.topology
        peers = ",".join(topology.host(h).ip for h in job.workers)
        out = []
        for rank, host in enumerate(job.workers):
            args = ["--algo", self.name, "--peers", peers, "--port", str(DEFAULT_PORT),
                    "--rank", str(rank), "--size", str(job.size), "--seed", str(job.seed),
                    "--dist", job.dist, "--segment", str(job.segment)]
            if self.name == "ps" and job.ps_host is not None:
                args += ["--ps-host", str(job.workers.index(job.ps_host))]
            stem = out_dir / f"job{job.job_id}-{host}"
            out.append(AgentSpec(host, args, stem.with_suffix(".npy"),
                                 stem.with_suffix(".json")))
        return out

    def finish(self, net: AllReduceNet, job: JobSpec) -> None:
        pass

    def check(self, job: JobSpec, inputs: list[Floats], outputs: list[Floats]
              ) -> CheckResult:
        """A float32 sum in some order: within the float32 summation bound."""
        from experiments.check import check_float32_sum

        return check_float32_sum(inputs, outputs)


_ALL: list[Algorithm] = [InNetwork(), *(HostBased(name) for name in COLLECTIVES)]
ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in _ALL}
