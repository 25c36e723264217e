"""A stand-in for the Mininet network of a sweep: ``FakeRunner`` answers every point
with figures made up from the model (``seconds = model * SLOWDOWN[algo]``) through
the runner's real ``fill_record``, so sweeps, results files, ``ina show`` and
``ina plot`` can be tested without root. Points listed in ``FakeRunner.fail`` fail
with an agent error; those in ``FakeRunner.cpu_bound`` have a saturated switch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from experiments.jobs import JobOutcome
from experiments.jobspec import JobSpec
from experiments.monitor import LinkUse, MonitorReport, ProcessUse
from experiments.run_allreduce import base_record, fill_record, model_for
from experiments.rundir import RunDir
from experiments.sweep import Point

SLOWDOWN = {"ina": 1.05, "ring": 1.10, "ps": 1.2, "ps-sharded": 1.1, "hd": 1.15}
UNSHAPED_SECONDS = 0.5


class FakeRunner:
    needs_root = False
    fail: ClassVar[set[tuple[str, int]]] = set()  # (algo, size)
    cpu_bound: ClassVar[set[tuple[str, int]]] = set()
    started: ClassVar[list[tuple[Any, ...]]] = []

    def __init__(self, key: tuple[Any, ...], work_dir: Path, run_dir: RunDir) -> None:
        self.key = key
        FakeRunner.started.append(key)

    def stop(self) -> None:
        pass

    def run(self, point: Point) -> dict[str, Any]:
        o = point.options
        n = o.workers
        hosts = tuple(f"h{i}" for i in range(1, n + 1))
        record = base_record(point)
        record["workers_count"] = n
        record["model"] = model_for(o, n)
        job = JobSpec(point.index + 1, hosts, o.size, k=o.k, window=o.window)
        record["job"] = job.to_json()
        model = record["model"]
        seconds = (model["seconds"] * SLOWDOWN[o.algo] * (1 + o.loss)
                   if model["seconds"] else UNSHAPED_SECONDS)
        busy = (o.algo, o.size) in self.cpu_bound
        report = MonitorReport(
            seconds, 0.05, 2, 0.5, 0.0, 20,
            [ProcessUse("s1", "switch", 100, 0.95 if busy else 0.4, 1.0,
                        0.95 if busy else 0.4, 0.01, 0.9 if busy else 0.0,
                        0.9 if busy else 0.0, 20)],
            [LinkUse(f"s1-eth{i}", int(model["wire_bytes_sent_per_host"] * 1.01), 0, o.bw)
             for i in range(1, n + 1)])
        if (o.algo, o.size) in self.fail:
            outcome = JobOutcome(job, False, ["h2: exit status 1: connection refused"], [],
                                 [], None)
        else:
            stats = [{"algo": o.algo, "seconds": seconds * (0.99 if r else 1.0),
                      "bytes_sent": model["bytes_sent_per_host"] * 1.02,
                      "bytes_received": model["bytes_sent_per_host"] * 1.02,
                      "counters": {}} for r in range(n)]
            outcome = JobOutcome(job, True, [], stats, [], None)
        fill_record(record, o, outcome, report, {}, {h: f"s1-eth{i}" for i, h in
                                                     enumerate(hosts, 1)})
        return record
