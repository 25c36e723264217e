"""Synchronous data-parallel SGD: the step loop every training worker runs, and the
``local`` reference that runs all workers' steps in one process.

A step of worker ``rank``: apply the previous step's averaged gradient (SGD with
momentum: v = mu v + g, p = p - lr v), compute the gradient of its shard of the step's
global mini-batch (``training.data.batch_indices``), all-reduce it with the other
workers, divide the sum by N. Applying the update at the start of the next step keeps
a step's time two clean parts: *compute* (the update and the gradient, padded to
``compute_time`` when that is set) and the *all-reduce*. The clock (``time_s``) is the
step time added up; what a worker does beside training (recording the parameters'
digest, saving a checkpoint or the check's arrays) is paused out of it.

Every worker records per step its loss, compute seconds (measured, before padding),
all-reduce seconds and payload bytes sent, and a CRC-32 of its parameters after every
update: the runner compares them across workers, and the first step where they differ
is where a worker diverged.

``local``: the same steps with the exact average (the N gradients summed in float64,
divided by N, rounded once to float32), no network and no quantization; a step's
compute is the slowest worker's, as if the N ran in parallel.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from training.data import Dataset, batch_indices, load_dataset
from training.models import MLP, get_model

Floats = npt.NDArray[np.float32]


@dataclass(frozen=True)
class TrainSettings:
    """What every worker of a run shares: the model, the data and the schedule."""

    model: str = "mlp"
    dataset: str = "digits"
    seed: int = 0
    workers: int = 4
    batch: int = 32  # per worker
    lr: float = 0.05
    momentum: float = 0.9
    steps: int = 100
    eval_every: int = 10  # steps between test evaluations (and at the start and the end)
    compute_time: float | None = None  # pad every step's compute to this many seconds

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TrainSettings:
        return cls(**d)

    def eval_steps(self) -> list[int]:
        """The updates after which the parameters are evaluated: 0, every
        ``eval_every``, and the last."""
        return sorted({*range(0, self.steps, self.eval_every), self.steps})


class AllReduce(Protocol):
    def __call__(self, values: Floats) -> Floats: ...


def build(settings: TrainSettings) -> tuple[MLP, Dataset]:
    data = load_dataset(settings.dataset)
    return MLP.build(get_model(settings.model), data.features, data.classes), data


def digest(params: Floats) -> int:
    return zlib.crc32(np.ascontiguousarray(params).data)


@dataclass
class StepLog:
    """One worker's record of its steps (columns, one value per step)."""

    loss: list[float] = field(default_factory=list)
    compute_s: list[float] = field(default_factory=list)
    allreduce_s: list[float] = field(default_factory=list)
    bytes_sent: list[int] = field(default_factory=list)
    time_s: list[float] = field(default_factory=list)  # the clock at the step's end
    digests: list[int] = field(default_factory=list)  # after 0, 1, ..., steps updates
    overruns: int = 0  # steps whose compute took longer than compute_time

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Sgd:
    """The parameters and the momentum of one worker."""

    def __init__(self, settings: TrainSettings) -> None:
        self.settings = settings
        self.model, self.data = build(settings)
        self.params = self.model.init(settings.seed)
        self.velocity = np.zeros_like(self.params)
        self.lr = np.float32(settings.lr)
        self.momentum = np.float32(settings.momentum)

    def gradient(self, step: int, rank: int) -> tuple[float, Floats]:
        s, d = self.settings, self.data
        rows = batch_indices(d.train_size, s.seed, step, s.workers, s.batch, rank)
        loss, grad = self.model.loss_and_grad(self.params, d.x_train[rows], d.y_train[rows])
        return loss, grad.astype(np.float32, copy=False)

    def apply(self, averaged: Floats) -> None:
        self.velocity *= self.momentum
        self.velocity += averaged
        self.params -= self.lr * self.velocity


class Clock:
    """Wall-clock time with pauses taken out."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self.now = now
        self.start = now()
        self.paused = 0.0

    def __call__(self) -> float:
        return self.now() - self.start - self.paused

    def pause(self) -> Callable[[], None]:
        t0 = self.now()

        def resume() -> None:
            self.paused += self.now() - t0
        return resume


Hook = Callable[[int, Floats], None]


def train_worker(settings: TrainSettings, rank: int, allreduce: AllReduce,
                 sent_bytes: Callable[[], int] = lambda: 0,
                 after_update: Hook | None = None,
                 after_allreduce: Callable[[int, Floats, Floats], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Clock | None = None) -> tuple[Sgd, StepLog]:
    """Run worker ``rank``'s steps. ``after_update(updates, params)`` sees the
    parameters after every update (0 to ``steps``), ``after_allreduce(step, gradient,
    sum)`` every all-reduce; both run with the clock paused."""
    sgd = Sgd(settings)
    log = StepLog()
    clock = clock or Clock()
    n = np.float32(settings.workers)

    def paused(work: Callable[[], None]) -> None:
        resume = clock.pause()
        try:
            work()
        finally:
            resume()

    def updated(count: int) -> None:
        log.digests.append(digest(sgd.params))
        if after_update is not None:
            after_update(count, sgd.params)

    paused(lambda: updated(0))
    averaged: Floats | None = None
    for step in range(settings.steps):
        t0 = clock()
        if averaged is not None:
            sgd.apply(averaged)
            paused(partial(updated, step))
        loss, grad = sgd.gradient(step, rank)
        compute = clock() - t0
        if settings.compute_time is not None:
            if compute > settings.compute_time:
                log.overruns += 1
            else:
                sleep(settings.compute_time - compute)
        sent0 = sent_bytes()
        t1 = clock()
        total = allreduce(grad)
        t2 = clock()
        if after_allreduce is not None:
            paused(partial(after_allreduce, step, grad, total))
        averaged = total / n
        log.loss.append(loss)
        log.compute_s.append(compute)
        log.allreduce_s.append(t2 - t1)
        log.bytes_sent.append(sent_bytes() - sent0)
        log.time_s.append(t2)
    if averaged is not None:
        sgd.apply(averaged)
        paused(lambda: updated(settings.steps))
    return sgd, log


def train_local(settings: TrainSettings, after_update: Hook | None = None,
                sleep: Callable[[float], None] = time.sleep) -> tuple[Sgd, StepLog]:
    """The ``local`` reference: every worker's gradient in this process, the exact
    average (see the module docstring)."""
    sgd = Sgd(settings)
    log = StepLog()
    elapsed = 0.0
    n = settings.workers

    def updated(count: int) -> None:
        log.digests.append(digest(sgd.params))
        if after_update is not None:
            after_update(count, sgd.params)

    updated(0)
    for step in range(settings.steps):
        total = np.zeros(sgd.params.size, dtype=np.float64)
        losses, times = [], []
        for rank in range(n):
            t0 = time.perf_counter()
            loss, grad = sgd.gradient(step, rank)
            times.append(time.perf_counter() - t0)
            total += grad
            losses.append(loss)
        t0 = time.perf_counter()
        sgd.apply((total / n).astype(np.float32))
        compute = max(times) + time.perf_counter() - t0
        updated(step + 1)
        if settings.compute_time is not None:
            if compute > settings.compute_time:
                log.overruns += 1
            step_time = max(compute, settings.compute_time)
        else:
            step_time = compute
        elapsed += step_time
        log.loss.append(float(np.mean(losses)))
        log.compute_s.append(compute)
        log.allreduce_s.append(0.0)
        log.bytes_sent.append(0)
        log.time_s.append(elapsed)
    return sgd, log

