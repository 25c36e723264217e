"""In-network all-reduce from a worker's side: ``Worker.allreduce`` and ``allreduce``.

``Worker`` drives ``hosts.protocol.AllReduceRun`` over a transport and keeps what must
survive between the all-reduces of a job: where the wire chunk sequence continues
(so each slot keeps alternating versions), the retransmission timeout estimate, and
the lifetime counters. It hands the state machine every datagram the transport has
queued as one batch (after letting more gather for a moment while the window is busy:
``AllReduceRun.gather_time``), and sends what comes back in one batch
(``hosts.batch``).
``stats.cpu_seconds`` is the process's CPU time from the start of the all-reduce to its
end (so it includes what other threads of the process spend meanwhile).

With a ``control`` channel (``hosts.control``) the worker also obeys the controller
when the job's tree changes: it looks at the channel between batches, and after its
run waits for every worker to be done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from hosts.batch import NO_DATAGRAMS, join
from hosts.protocol import (
    AllReduceError,
    AllReduceRun,
    NonFiniteInputError,
    WorkerSettings,
    WorkerStats,
    check_job,
    check_tensor,
)
from hosts.transport import Transport

if TYPE_CHECKING:
    from hosts.control import JobControl


CONTROL_POLL = 0.05
"""With a control channel, the longest the worker waits for datagrams before it looks
at the channel."""


@dataclass
class AllReduceResult:
    values: npt.NDArray[np.float32]
    stats: WorkerStats
    seconds: float


@dataclass
class Worker:
    """One worker of job ``job_id`` (``num_workers`` workers in all)."""

    transport: Transport
    job_id: int
    num_workers: int
    settings: WorkerSettings = field(default_factory=WorkerSettings)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    control: JobControl | None = None

    def __post_init__(self) -> None:
        check_job(self.job_id, self.num_workers)
        self.settings.check()
        self.next_base = 0
        self.rto = self.settings.estimator()
        self.stats = WorkerStats()
        self.broken: str | None = None

    def allreduce(self, array: npt.NDArray[np.float32]) -> AllReduceResult:
        """The element-wise sum over all workers of ``array`` (float32, same shape)."""
        if self.broken is not None:
            raise AllReduceError(f"job {self.job_id}: an earlier all-reduce failed "
                                 f"({self.broken}); the job's switch state must be reset")
        check_tensor(array)
        run = AllReduceRun(array, self.job_id, self.num_workers, self.settings,
                           base=self.next_base, rto=self.rto)
        t0 = self.clock()
        cpu0 = time.process_time()
        try:
            done_at = self._drive(run)
        except AllReduceError as e:
            self.broken = str(e)
            raise
        finally:
            run.stats.cpu_seconds = time.process_time() - cpu0
            self.stats.add(run.stats)
        self.next_base = run.end
        return AllReduceResult(run.result(), run.stats, done_at - t0)

    def _drive(self, run: AllReduceRun) -> float:
        """Drive ``run`` to its end; when it ended (the last time, if the controller
        rewound it after that)."""
        clock, transport, control = self.clock, self.transport, self.control
        transport.send(run.start_batch(clock()))
        if control is not None:
            control.begin(run, clock())
        while True:
            self._drive_once(run)
            done_at = clock()
            if control is None or not control.linger(run, transport):
                return done_at

    def _drive_once(self, run: AllReduceRun) -> None:
        clock, transport, control = self.clock, self.transport, self.control
        while not run.done:
            deadline = run.next_deadline()
            wait = 0.0 if deadline is None else max(deadline - clock(), 0.0)
            if control is not None:
                wait = min(wait, CONTROL_POLL)
            batch = NO_DATAGRAMS
            if transport.wait(wait):
                gather = run.gather_time()
                if gather > 0:
                    self.sleep(gather)
                batch = transport.recv()
            now = clock()
            out = run.on_batch(batch, now) if batch.lengths else run.no_packets
            out = join(out, run.on_timer_batch(now))
            if len(out):
                transport.send(out)
            if control is not None:
                control.tick(run, transport, clock())


def allreduce(array: npt.NDArray[np.float32], *, job_id: int, num_workers: int,
              transport: Transport, settings: WorkerSettings | None = None
              ) -> npt.NDArray[np.float32]:
    """One all-reduce on a job whose switch slots are fresh. For several all-reduces
    on the same job, keep one ``Worker`` (it continues the slot versions)."""
    worker = Worker(transport, job_id, num_workers, settings or WorkerSettings())
    return worker.allreduce(array).values


__all__ = ["AllReduceError", "AllReduceResult", "NonFiniteInputError", "Worker", "allreduce"]
