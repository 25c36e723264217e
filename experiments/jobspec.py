"""What one all-reduce job is (its workers, its input, its algorithm and the workers'
settings), a job as an experiment's options describe it (``JobEntry``), and the agent
processes that run it. Light on imports: ``ina``'s argument parser uses it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hosts.baselines.collective import DEFAULT_SEGMENT
from hosts.inputs import generate

TARGETS = ("builtin", "bmv2")
"""The switches a network can run: ``ina switch`` or BMv2's ``simple_switch_grpc``."""


@dataclass(frozen=True)
class JobSpec:
    job_id: int
    workers: tuple[str, ...]
    size: int
    dist: str = "normal"
    seed: int = 0
    window: int = 64
    k: int = 64
    scaling: str = "tight"
    timeout_ms: float = 100.0
    root: str | None = None  # the root switch of an in-network job's tree
    ps_host: str | None = None  # --algo ps: the worker that sums (None: the first)
    segment: int = DEFAULT_SEGMENT  # host-based: float32 values per TCP message
    algo: str = "ina"  # experiments.algorithms.ALGORITHMS
    start: float = 0.0  # seconds after the first job of its experiment starts

    def inputs(self) -> list[npt.NDArray[np.float32]]:
        """Every worker's input, as its agent generates it (rank = position)."""
        return [generate(self.dist, self.size, self.seed, rank)
                for rank in range(len(self.workers))]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["workers"] = list(self.workers)
        return d


@dataclass(frozen=True)
class JobEntry:
    """One of several jobs of a measurement (``ina run --jobs N``, an experiment file's
    ``[[job]]`` tables): its hosts, None for an equal share of the hosts no entry names
    (in order), and where it differs from the measurement's options."""

    hosts: tuple[str, ...] | None = None
    algo: str | None = None
    size: int | None = None
    start: float = 0.0  # seconds after the first job starts
    window: int | None = None
    where: str = ""  # where it was given, for errors: ``exp.toml:12: job 2``


@dataclass(frozen=True)
class AgentSpec:
    """One ``ina agent`` (or another program that takes ``--output``, ``--stats`` and
    ``--start-on-stdin``, such as a training worker) to run in host ``host``."""

    host: str
    args: list[str]  # the agent's options (without --output/--stats)
    output: Path
    stats: Path
    command: tuple[str, ...] = ()  # the program to run (default: ina agent)
