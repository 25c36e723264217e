"""A training worker as a process: one per Mininet host, started by ``ina train``.

    python -m training.worker SPEC.json --rank R --output PARAMS.npy --stats LOG.json \\
        [--start-on-stdin]

``SPEC.json`` (``WorkerSpec``, written by the runner) says what every worker of the run
shares: the training settings (``training.sgd.TrainSettings``) and how to reach the
others (the in-network job and each rank's aggregator address, or every rank's
address for a host-based algorithm). The worker sets its communicator up (the UDP
socket, or the TCP mesh), prints ``ready`` and, with ``--start-on-stdin``, waits for a
line on stdin; then it trains (``training.sgd.train_worker``), writes its final
parameters (``--output``) and its log (``--stats``, JSON: the per-step columns, the
parameters' digests, the communicator's counters). Rank 0 also saves the parameters
at every evaluation step into ``checkpoints`` (the runner evaluates them on the test
set), and with ``check_dir`` every rank saves each step's gradient and all-reduced sum
there (the runner checks them against the exact sum).

Exit status: 0 when it trained, 1 when an all-reduce failed, 2 for a bad spec.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core per worker, as a host has
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from dataclasses import asdict, dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from training.sgd import TrainSettings, train_worker  # noqa: E402

PROG = "training worker"


@dataclass(frozen=True)
class WorkerSpec:
    algo: str  # ina, ring, ps, ps-sharded, hd or gloo (PyTorch's)
    settings: TrainSettings
    job_id: int = 1  # ina: the job, its aggregator address per rank and its settings
    aggregators: tuple[str, ...] = ()
    k: int = 64
    window: int = 64
    scaling: str = "tight"
    timeout_ms: float = 100.0
    peers: tuple[str, ...] = ()  # host-based and gloo: every rank's IP:PORT
    interfaces: tuple[str, ...] = ()  # gloo: every rank's network interface
    segment: int = 16384
    ps_host: int = 0
    checkpoints: str | None = None  # rank 0 saves the evaluated parameters here
    check_dir: str | None = None  # every rank saves each step's gradient and sum here

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["settings"] = self.settings.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WorkerSpec:
        d = dict(d)
        d["settings"] = TrainSettings.from_json(d["settings"])
        d["aggregators"] = tuple(d.get("aggregators", ()))
        d["peers"] = tuple(d.get("peers", ()))
        d["interfaces"] = tuple(d.get("interfaces", ()))
        return cls(**d)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")


def checkpoint_path(directory: str | Path, updates: int) -> Path:
    return Path(directory) / f"u{updates:06d}.npy"


def check_paths(directory: str | Path, step: int, rank: int) -> tuple[Path, Path]:
    """Where rank ``rank`` saves the gradient it sent at ``step`` and the sum it got."""
    stem = Path(directory) / f"s{step:06d}-r{rank:02d}"
    return stem.with_name(stem.name + "-in.npy"), stem.with_name(stem.name + "-out.npy")


def make_communicator(spec: WorkerSpec, rank: int) -> Any:
    from training.comm import GlooComm, HostComm, InNetworkComm

    n = spec.settings.workers
    if spec.algo == "ina":
        from hosts.protocol import WorkerSettings
        from hosts.quantize import Scaling

        settings = WorkerSettings(k=spec.k, window=spec.window, scaling=Scaling(spec.scaling),
                                  timeout=spec.timeout_ms / 1000.0,
                                  min_timeout=min(0.01, spec.timeout_ms / 1000.0),
                                  max_timeout=max(1.0, spec.timeout_ms / 1000.0))
        return InNetworkComm(spec.aggregators[rank], spec.job_id, n, settings)
    if spec.algo == "gloo":
        return GlooComm(rank, list(spec.peers), spec.interfaces[rank])
    comm = HostComm(spec.algo, rank, list(spec.peers), spec.segment, spec.ps_host)
    comm.connect()
    return comm


def run(spec: WorkerSpec, rank: int, output: str | None, stats: str | None,
        wait: bool) -> dict[str, Any]:
    """Train as rank ``rank``; the stats document."""
    settings = spec.settings
    comm = make_communicator(spec, rank)
    evals = set(settings.eval_steps())
    try:
        if wait:
            print("ready", flush=True)
            sys.stdin.readline()

        def after_update(updates: int, params: np.ndarray) -> None:
            if rank == 0 and spec.checkpoints and updates in evals:
                np.save(checkpoint_path(spec.checkpoints, updates), params)

        def after_allreduce(step: int, grad: np.ndarray, total: np.ndarray) -> None:
            if spec.check_dir:
                sent, got = check_paths(spec.check_dir, step, rank)
                np.save(sent, grad)
                np.save(got, total)

        sgd, log = train_worker(settings, rank, comm, comm.bytes_sent, after_update,
                                after_allreduce)
        counters = comm.counters()
    finally:
        comm.close()
    doc = {"algo": spec.algo, "rank": rank, "workers": settings.workers,
           "parameters": int(sgd.params.size), "log": log.to_json(), "counters": counters}
    if output:
        np.save(output, sgd.params)
    if stats:
        Path(stats).write_text(json.dumps(doc) + "\n")
    return doc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("spec", metavar="SPEC.json")
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--output", metavar="PARAMS.npy")
    p.add_argument("--stats", metavar="LOG.json")
    p.add_argument("--start-on-stdin", action="store_true")
    args = p.parse_args(argv)
    try:
        spec = WorkerSpec.from_json(json.loads(Path(args.spec).read_text()))
        if not 0 <= args.rank < spec.settings.workers:
            raise ValueError(f"--rank {args.rank}: not in [0, {spec.settings.workers})")
    except (OSError, ValueError, TypeError, KeyError) as e:
        print(f"{PROG}: error: {args.spec}: {e}", file=sys.stderr)
        return 2
    from hosts.baselines.mesh import MeshError
    from hosts.baselines.tcp import ConnectError
    from hosts.protocol import AllReduceError, NonFiniteInputError

    try:
        run(spec, args.rank, args.output, args.stats, args.start_on_stdin)
    except NonFiniteInputError as e:
        print(f"{PROG}: rank {args.rank}: a gradient has NaN or infinite values (the "
              f"training diverged; a lower --lr may help): {e}", file=sys.stderr)
        return 1
    except (AllReduceError, ConnectError, MeshError) as e:
        print(f"{PROG}: rank {args.rank}: all-reduce failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
