"""Training runs, start to finish: ``ina train``.

A training run is another kind of measurement on the networks of ``ina run``:
``run_sweep`` (``experiments.run_allreduce``) starts one Mininet network per group of
runs that share a topology, link rate, switch, K and routing, and ``TrainRunner``
runs each of them in it. For a run it sets the switch ports' loss, creates the
in-network job (``ina``; the host-based algorithms need nothing on the switch), starts
one training worker per host (``training.worker``, released together as ``ina run``'s
agents are) with the fidelity monitor watching, and then, from what the workers left:
evaluates rank 0's checkpoints on the test set, compares the workers' parameter
digests and final parameters (a worker that diverged fails the run), checks every
step's all-reduce against the exact sum with ``--check`` (the algorithm's bound,
``experiments.check``) and stores the record (``experiments.train_results``).

``local`` runs need no network: every worker's gradient is computed in this process
and averaged exactly (``training.sgd.train_local``).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

from experiments.algorithms import ALGORITHMS, HostBased
from experiments.jobspec import AgentSpec
from experiments.options import RunError
from experiments.run_allreduce import NetworkRunner
from experiments.sweep import Point
from experiments.train_options import TrainOptions
from experiments.train_results import (
    Evaluator,
    combine_steps,
    divergence,
    eval_time,
    finish_record,
    overruns,
    train_base_record,
    train_result_text,
)
from training.sgd import TrainSettings, build, train_local
from training.worker import WorkerSpec, check_paths, checkpoint_path

TRAIN_COMMAND = (sys.executable, "-m", "training.worker")
START_SLACK_S = 120.0  # imports, connections, evaluation: besides the steps themselves
STEP_SLACK = 10.0  # a run may take this many times the model's all-reduce per step


def run_timeout(options: TrainOptions, settings: TrainSettings, model_step: float | None
                ) -> float:
    per_step = STEP_SLACK * (model_step or 0.5) + (settings.compute_time or 0.0) + 1.0
    return START_SLACK_S + settings.steps * per_step


class TrainRunner(NetworkRunner):
    """The training runs of one network (see the module docstring)."""

    @staticmethod
    def result_text(record: dict[str, Any]) -> str:
        return train_result_text(record)

    def run(self, point: Point) -> dict[str, Any]:
        """The run's record; never raises for the run's own failure."""
        options: TrainOptions = point.options  # type: ignore[assignment]
        try:
            settings = options.resolve()
        except (ValueError, RunError) as e:
            record = train_base_record(point, None)
            record["errors"].append(str(e))
            return record
        record = train_base_record(point, settings)
        model, _ = build(settings)
        record["parameters"] = model.size
        out_dir = self.run_dir.sub("agents") / f"p{point.index + 1:04d}"
        out_dir.mkdir(parents=True, exist_ok=True)
        if options.algo == "local":
            try:
                run_local(record, options, settings)
            except Exception as e:
                record["errors"].append(f"{type(e).__name__}: {e}")
                self._log(point, e)
            finish_record(record, options, [])
            return record
        net = self.network(point, record)
        if net is None:
            return record
        reasons: list[str] = []
        try:
            self.train(net, point, options, settings, record, out_dir, reasons)
        except Exception as e:
            record["errors"].append(str(e) if isinstance(e, RunError)
                                    else f"{type(e).__name__}: {e}")
            self._log(point, e)
        finally:  # the workers' logs stay; parameters and the check's arrays go
            for path in (out_dir / "checkpoints", out_dir / "check"):
                shutil.rmtree(path, ignore_errors=True)
            for npy in out_dir.glob("*.npy"):
                npy.unlink()
        finish_record(record, options, reasons)
        if record["errors"]:
            record["ok"] = False
        return record

    def train(self, net: Any, point: Point, options: TrainOptions, settings: TrainSettings,
              record: dict[str, Any], out_dir: Path, reasons: list[str]) -> None:
        if settings.workers != len(net.hosts):
            raise RunError(f"{options.topo} has {len(net.hosts)} hosts, the settings "
                           f"{settings.workers} workers")
        algorithm = ALGORITHMS.get(options.algo) or HostBased(options.algo)  # gloo
        job = options.job(self.next_job_id(), net.hosts, record["parameters"])
        record["job"] = job.to_json()
        checkpoints = out_dir / "checkpoints"
        checkpoints.mkdir(exist_ok=True)
        check_dir = out_dir / "check" if options.check else None
        if check_dir is not None:
            check_dir.mkdir(exist_ok=True)
        self.impair(net, options.as_run_options())
        monitor = self.monitor(net)
        prepared = False
        try:
            algorithm.prepare(net, job)
            prepared = True
            spec = worker_spec(net, options, settings, job, checkpoints, check_dir)
            spec_path = out_dir / "spec.json"
            spec.write(spec_path)
            agents = [AgentSpec(host, [str(spec_path), "--rank", str(rank)],
                                out_dir / f"{host}.npy", out_dir / f"{host}.json",
                                command=TRAIN_COMMAND)
                      for rank, host in enumerate(job.workers)]
            from experiments.train_results import allreduce_model

            timeout = run_timeout(options, settings, allreduce_model(record, options.algo,
                                                                     options))
            finished = net.run_agents(agents, timeout=timeout)
        finally:
            net.agent_watch = None
            report = monitor.stop()
            if prepared:
                algorithm.finish(net, job)
        record["monitor"] = report.to_json()
        reasons += report.verdict()
        failed = [f"{r.host}: exit status {r.returncode}: {r.stderr.strip()}"
                  for r in finished if r.returncode != 0]
        if failed:
            record["errors"] += failed
            return
        docs = [json.loads(a.stats.read_text()) for a in agents]
        logs = [d["log"] for d in docs]
        record["workers"] = [{"host": a.host, "rank": d["rank"], "counters": d["counters"]}
                             for a, d in zip(agents, docs, strict=True)]
        record["steps"] = combine_steps(logs)
        record["compute_overruns"] = overruns(logs, settings)
        finals = [np.load(a.output, allow_pickle=False) for a in agents]
        diff, first, error = divergence([log["digests"] for log in logs], finals,
                                        list(job.workers))
        record["max_param_diff"], record["diverged_at"] = diff, first
        if error:
            record["errors"].append(error)
        evaluator = Evaluator(settings)
        for u in settings.eval_steps():
            path = checkpoint_path(checkpoints, u)
            evaluator.add(u, np.load(path, allow_pickle=False),
                          eval_time(u, record["steps"]["time_s"]))
        record["evals"] = evaluator.evals
        if check_dir is not None:
            record["check"] = check_steps(algorithm, job, check_dir, settings)
            if not record["check"]["ok"]:
                record["errors"].append(f"check failed: {record['check']['message']}")


def worker_spec(net: Any, options: TrainOptions, settings: TrainSettings, job: Any,
                checkpoints: Path, check_dir: Path | None) -> WorkerSpec:
    """What every training worker of the run is told."""
    from hosts.baselines.tcp import DEFAULT_PORT

    common: dict[str, Any] = {"algo": options.algo, "settings": settings,
                              "checkpoints": str(checkpoints),
                              "check_dir": str(check_dir) if check_dir else None}
    if options.algo == "ina":
        plan = net.ctl.jobs.get(job.job_id)
        return WorkerSpec(**common, job_id=job.job_id,
                          aggregators=tuple(plan.aggregator[h] for h in job.workers),
                          k=job.k, window=job.window, scaling=job.scaling,
                          timeout_ms=job.timeout_ms)
    topology = net.ctl.topology
    if options.algo == "gloo":
        from training.comm import GLOO_PORT

        return WorkerSpec(**common, peers=tuple(f"{topology.host(h).ip}:{GLOO_PORT}"
                                                for h in job.workers),
                          interfaces=tuple(net.net.get(h).defaultIntf().name
                                           for h in job.workers))
    ps_host = job.workers.index(job.ps_host) if job.ps_host is not None else 0
    return WorkerSpec(**common, peers=tuple(f"{topology.host(h).ip}:{DEFAULT_PORT}"
                                            for h in job.workers),
                      segment=job.segment, ps_host=ps_host)


def check_steps(algorithm: Any, job: Any, check_dir: Path, settings: TrainSettings
                ) -> dict[str, Any]:
    """Every step's all-reduce against the exact sum of the workers' gradients, with
    the algorithm's bound; the files are removed as they are checked."""
    worst = 0.0
    message = ""
    ok = True
    for step in range(settings.steps):
        paths = [check_paths(check_dir, step, r) for r in range(settings.workers)]
        inputs = [np.load(sent, allow_pickle=False) for sent, _ in paths]
        outputs = [np.load(got, allow_pickle=False) for _, got in paths]
        result = algorithm.check(job, inputs, outputs)
        worst = max(worst, result.max_error_over_bound)
        for sent, got in paths:
            sent.unlink()
            got.unlink()
        if not result.ok:
            ok, message = False, f"step {step}: {result.message}"
            break
    if ok:
        bound = ("the quantization bound" if algorithm.name == "ina"
                 else "the float32 summation bound")
        message = f"every step's sum bit-identical on every worker and within {bound}"
    shutil.rmtree(check_dir, ignore_errors=True)
    return {"ok": ok, "steps": settings.steps, "max_error_over_bound": worst,
            "message": message}


def run_local(record: dict[str, Any], options: TrainOptions, settings: TrainSettings) -> None:
    """The ``local`` reference, in this process."""
    evaluator = Evaluator(settings)
    evals = set(settings.eval_steps())
    snapshots: list[tuple[int, np.ndarray]] = []

    def keep(updates: int, params: np.ndarray) -> None:
        if updates in evals:
            snapshots.append((updates, params.copy()))

    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # one core per worker, as the hosts' workers have
        _, log = train_local(settings, keep)
    columns = log.to_json()
    record["steps"] = {c: columns[c] for c in ("loss", "compute_s", "allreduce_s",
                                               "bytes_sent", "time_s")}
    record["compute_overruns"] = log.overruns
    record["max_param_diff"] = 0.0
    for u, params in snapshots:
        evaluator.add(u, params, eval_time(u, record["steps"]["time_s"]))
    record["evals"] = evaluator.evals


def estimate_train_seconds(point: Point) -> float:
    """What a run should take (for the progress bar's ETA): its steps at the model's
    all-reduce time."""
    from experiments.model import ModelInput
    from experiments.model import predict as predict_allreduce

    o: TrainOptions = point.options  # type: ignore[assignment]
    try:
        settings = o.resolve()
        size = build(settings)[0].size
    except Exception:
        return 0.0
    if o.algo == "local":
        return 0.01 * settings.steps
    m = ModelInput(settings.workers, size, o.bw, k=o.k, window=o.window_for(size))
    p = predict_allreduce("ring" if o.algo == "gloo" else o.algo, m)
    return settings.steps * ((p.seconds if p and p.seconds else 0.05) + 0.02)
