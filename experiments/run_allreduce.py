"""One all-reduce experiment, start to finish: ``ina run`` and ``run_allreduce``.

    from experiments.run_allreduce import run_allreduce
    results = run_allreduce(topo="star,4", size=100_000, check=True)

starts the network (``experiments.allreduce_net``), optionally impairs every switch
port (``loss``, ``duplicate``: built-in switch only), runs one job with every host of
the topology as a worker (``experiments.jobs``), and writes ``results.json`` (with the
parameters, git revision and machine) and the switch logs to a new run directory under
``runs_dir``. The returned dict is the ``results`` part of that file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from experiments.allreduce_net import AllReduceNet, RunError, need_root
from experiments.jobs import get_algorithm, run_jobs
from experiments.jobspec import TARGETS, JobSpec
from experiments.rundir import RunDir
from hosts.inputs import DISTRIBUTIONS
from hosts.quantize import Scaling
from hosts.wire import ALLOWED_K

JOB_ID = 1


@dataclass(frozen=True)
class RunOptions:
    topo: str = "star,4"
    algo: str = "ina"
    size: int = 100_000
    dist: str = "normal"
    seed: int = 0
    check: bool = False
    bw: float | None = None  # Mbit/s of every link (None: unshaped)
    loss: float = 0.0  # per switch port and direction
    duplicate: float = 0.0  # per switch port and direction
    target: str = "builtin"
    window: int = 64
    k: int = 64
    scaling: str = "tight"
    timeout_ms: float = 100.0
    runs_dir: str = "runs"

    def validate(self) -> None:
        """Raise ``RunError`` naming the first bad option."""
        get_algorithm(self.algo)
        if self.target not in TARGETS:
            raise RunError(f"--target {self.target!r}: not one of {', '.join(TARGETS)}")
        if self.dist not in DISTRIBUTIONS:
            raise RunError(f"--dist {self.dist!r}: not one of {', '.join(DISTRIBUTIONS)}")
        if self.scaling not in [s.value for s in Scaling]:
            raise RunError(f"--scaling {self.scaling!r}: not tight or pow2")
        if self.k not in ALLOWED_K:
            raise RunError(f"--k {self.k}: not one of {ALLOWED_K}")
        if not 1 <= self.size <= 1 << 28:
            raise RunError(f"--size {self.size}: must be in [1, {1 << 28}]")
        if not 1 <= self.window <= 256:
            raise RunError(f"--window {self.window}: must be in [1, 256] (the program's "
                           f"slots)")
        if self.bw is not None and not 0 < self.bw <= 10_000:
            raise RunError(f"--bw {self.bw:g}: must be in (0, 10000] Mbit/s")
        for name in ("loss", "duplicate"):
            p = getattr(self, name)
            if not 0 <= p < 1:
                raise RunError(f"--{name} {p:g}: must be in [0, 1)")
            if p and self.target != "builtin":
                raise RunError(f"--{name} needs the built-in switch (ina switch-cli), "
                               f"not --target {self.target}")
        if self.seed < 0:
            raise RunError(f"--seed {self.seed}: must be non-negative")
        if not self.timeout_ms > 0:
            raise RunError(f"--timeout {self.timeout_ms:g}: must be positive")
        from topologies.spec import TopoSpecError, parse_topo_spec

        try:
            parse_topo_spec(self.topo)
        except TopoSpecError as e:
            raise RunError(str(e)) from None


def impairment_spec(loss: float, duplicate: float) -> str | None:
    parts = [f"loss={loss:g}"] if loss else []
    parts += [f"duplicate={duplicate:g}"] if duplicate else []
    return ",".join([*parts, "direction=both"]) if parts else None


def run_allreduce(options: RunOptions | None = None, **changes: Any) -> dict[str, Any]:
    """Run the experiment; the results dict (see the module docstring). Options come
    as a ``RunOptions`` or as its fields: ``run_allreduce(topo="star,8", check=True)``."""
    options = replace(options or RunOptions(), **changes)
    options.validate()
    why = need_root()
    if why:
        raise RunError(f"ina run {why}")
    name = f"{options.algo}-{options.topo.replace(',', '')}"
    run_dir = RunDir.create(Path(options.runs_dir).resolve(), name)
    net = AllReduceNet(options.topo, run_dir.path, options.target, options.bw, options.k)
    with net:
        spec = impairment_spec(options.loss, options.duplicate)
        if spec:
            net.impair(spec)
        job = JobSpec(JOB_ID, tuple(net.hosts), options.size, options.dist, options.seed,
                      options.window, options.k, options.scaling, options.timeout_ms)
        [outcome] = run_jobs(net, [job], run_dir.sub("agents"), options.algo,
                             check=options.check)
        counters = _switch_counters(net)
    results: dict[str, Any] = outcome.to_json()
    results["workers_count"] = len(job.workers)
    results["link_mbps"] = options.bw
    if options.bw and outcome.stats:
        results["goodput_fraction"] = outcome.goodput_mbps / options.bw
    results["switch_counters"] = counters
    results["run_dir"] = str(run_dir.path)
    run_dir.write_results(asdict(options), results)
    return results


def _switch_counters(net: AllReduceNet) -> dict[str, Any]:
    if net.target != "builtin":
        return {}
    out = {}
    for sw in net.switches():
        reply = sw.cli("--json", "counters")
        if reply.returncode == 0:
            out[sw.name] = json.loads(reply.stdout)
    return out


def format_summary(results: dict[str, Any]) -> str:
    """What ``ina run`` prints."""
    job = results["job"]
    lines = [f"all-reduce ({len(job['workers'])} workers, "
             f"{job['size']} float32 values, {job['dist']}, K={job['k']}, "
             f"window {job['window']}, {job['scaling']} scaling)"]
    if results["completion_s"] is not None:
        line = (f"  completion time {results['completion_s']:.3f} s, goodput "
                f"{results['goodput_mbps']:.2f} Mbit/s")
        if results.get("goodput_fraction") is not None:
            line += (f" = {100 * results['goodput_fraction']:.1f}% of the "
                     f"{results['link_mbps']:g} Mbit/s link rate")
        lines.append(line)
        counters = [w["counters"] for w in results["workers"]]
        if all("retransmitted" in c for c in counters):
            retx = sum(c["retransmitted"] for c in counters)
            dups = sum(c["duplicate_results"] for c in counters)
            lines.append(f"  packets: retransmitted {retx}, duplicate results {dups}")
        else:  # a host-based algorithm over TCP
            sent = sum(w["bytes_sent"] for w in results["workers"])
            tcp = sum(c.get("tcp_retransmits", 0) for c in counters)
            lines.append(f"  bytes sent {sent} ({sent // len(counters)} per worker), "
                         f"TCP retransmissions {tcp}")
    check = results["check"]
    if check is not None:
        verdict = "PASSED" if check["ok"] else "FAILED"
        lines.append(f"  check {verdict}: {check['message']} (max error "
                     f"{check['max_error']:.3g}, {100 * check['max_error_over_bound']:.1f}% "
                     f"of the allowed error{', exact' if check['exact'] else ''})")
    for e in results["errors"]:
        lines.append(f"  error: {e}")
    lines.append(f"  results: {results['run_dir']}/results.json")
    return "\n".join(lines)
