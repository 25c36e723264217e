"""The worker side of the slot protocol, without I/O (a state machine).

One ``AllReduceRun`` all-reduces one float32 tensor. It is driven by three calls,
each returning the UDP payloads to send: ``start()``, ``on_packet(payload, now)`` and
``on_timer(now)``; ``next_deadline()`` says when ``on_timer`` is due. ``hosts.worker``
drives it over a transport; tests drive many of them in one event loop.

Schedule. The tensor is cut into C data chunks of K values. The run sends the *wire
chunks* ``w`` in [base, base + C + S), S the window: wire chunk w uses slot ``w mod S``
and version ``(w div S) mod 2`` and carries ``w mod 2**32`` in the chunk field. With
``j = w - base``:

* its exponent field proposes the exponent of data chunk j (``EXP_EMPTY`` if j >= C);
* its values are data chunk ``j - S``, quantized with that chunk's agreed exponent
  (zeros for ``j < S``: the first S wire chunks are the exponent round).

The switch max-combines the exponent fields, so the RESULT of wire chunk w carries
the agreed exponent of data chunk j, and the sum of data chunk j - S. Wire chunk
w + S goes out when the RESULT of w arrives (same slot, other version), so data
chunk j is quantized with an exponent every worker already has. ``base`` continues
across the runs of a job (``Worker`` keeps it), so every slot alternates versions for
the job's lifetime and a stale RESULT of an earlier run never matches. All workers of
a job must run the same sequence of all-reduces with the same lengths and settings.

Loss: each slot has a timer, armed when a packet is sent for the current
retransmission timeout (RTO); on expiry the awaited packet is resent unchanged, and
the slot's timeout grows by ``backoff`` up to ``max_timeout``. A packet still
unanswered when its timer expires after ``max_retries`` retransmissions fails the run
(``AllReduceTimeout``). The RTO adapts to the measured round-trip time of the chunks
(``hosts.rto``, RFC 6298), starting from ``timeout``; a ``Worker`` keeps its estimate
from one run to the next.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from hosts.quantize import EXP_EMPTY, EXP_NONFINITE, MAX_WORKERS, Quantizer, Scaling
from hosts.rto import RtoEstimator
from hosts.wire import ALLOWED_K, DEFAULT_K, FLAG_RESULT, HEADER, HEADER_SIZE, encode_fast

_U32 = 1 << 32


class AllReduceError(RuntimeError):
    """The all-reduce could not produce a result."""


class AllReduceTimeout(AllReduceError):
    """A chunk got no RESULT after the allowed retransmissions."""


class NonFiniteInputError(AllReduceError):
    """Some worker's input had NaN or +-inf; ``result`` has NaN in those chunks."""

    def __init__(self, message: str, result: npt.NDArray[np.float32],
                 chunks: list[int]) -> None:
        super().__init__(message)
        self.result = result
        self.chunks = chunks


@dataclass(frozen=True)
class WorkerSettings:
    """Settings every worker of a job must share (``timeout`` and after: per worker).

    ``window`` (S) must not exceed the slots the controller gave the job. Times are
    in seconds. ``timeout`` is the first retransmission timeout; with ``adaptive``
    the RTO then follows the measured round-trip times, at least ``min_timeout``
    above the smoothed RTT and at most ``max_timeout`` (``hosts.rto``); without it
    every packet is first given ``timeout``. A timeout multiplies the slot's wait by
    ``backoff``, up to ``max_timeout``.

    ``min_timeout`` (10 ms) is well above what an idle emulated LAN adds to a chunk's
    round trip (tens of microseconds per packet in the Python switch and agents) but
    keeps a few milliseconds of margin for what the samples may not have
    seen yet: a garbage collection or a descheduled process while five Python
    processes share two cores. Too low a floor costs spurious retransmissions (more
    load on a switch that is already the bottleneck); too high a floor only slows the
    recovery of real losses."""

    k: int = DEFAULT_K
    window: int = 64
    scaling: Scaling = Scaling.TIGHT
    timeout: float = 0.1
    max_timeout: float = 1.0
    backoff: float = 2.0
    max_retries: int = 30
    adaptive: bool = True
    min_timeout: float = 0.01

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad setting."""
        if self.k not in ALLOWED_K:
            raise ValueError(f"worker settings: k={self.k!r} is not one of {ALLOWED_K}")
        if not isinstance(self.window, int) or not 1 <= self.window <= 0xFFFF:
            raise ValueError(f"worker settings: window={self.window!r} is not in [1, 65535]")
        if not isinstance(self.scaling, Scaling):
            raise ValueError(f"worker settings: scaling={self.scaling!r} is not a Scaling")
        for name in ("timeout", "min_timeout", "max_timeout"):
            v = getattr(self, name)
            if (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0
                    or not math.isfinite(v)):
                raise ValueError(f"worker settings: {name}={v!r} must be a positive number")
        if self.max_timeout < self.timeout:
            raise ValueError(f"worker settings: max_timeout={self.max_timeout!r} is below "
                             f"timeout={self.timeout!r}")
        if self.min_timeout > self.timeout:
            raise ValueError(f"worker settings: min_timeout={self.min_timeout!r} is above "
                             f"timeout={self.timeout!r}")
        if not isinstance(self.adaptive, bool):
            raise ValueError(f"worker settings: adaptive={self.adaptive!r} is not a bool")
        if not isinstance(self.backoff, (int, float)) or not 1 <= self.backoff <= 16:
            raise ValueError(f"worker settings: backoff={self.backoff!r} is not in [1, 16]")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"worker settings: max_retries={self.max_retries!r} must be "
                             f"a non-negative integer")


_LATEST = ("srtt", "rto")


@dataclass
class WorkerStats:
    """Packet counters of one run (or, summed, of a worker's lifetime).

    ``rtt_samples`` counts the round-trip samples taken (chunks sent once); ``srtt``
    and ``rto`` are the smoothed RTT (None before any sample) and the retransmission
    timeout at the end, in seconds: ``add`` keeps the later run's values."""

    sent: int = 0
    retransmitted: int = 0
    results: int = 0
    duplicate_results: int = 0
    ignored: int = 0
    timeouts: int = 0
    chunks: int = 0
    wire_chunks: int = 0
    rtt_samples: int = 0
    srtt: float | None = None
    rto: float | None = None

    def add(self, other: WorkerStats) -> None:
        for name in self.__dataclass_fields__:
            if name in _LATEST:
                if getattr(other, name) is not None:
                    setattr(self, name, getattr(other, name))
            else:
                setattr(self, name, getattr(self, name) + getattr(other, name))


def check_job(job_id: int, num_workers: int) -> None:
    if not isinstance(job_id, int) or not 0 <= job_id <= 0xFFFF:
        raise ValueError(f"all-reduce: job_id={job_id!r} is not in [0, 65535]")
    if not isinstance(num_workers, int) or not 1 <= num_workers <= MAX_WORKERS:
        raise ValueError(f"all-reduce: num_workers={num_workers!r} is not in "
                         f"[1, {MAX_WORKERS}]")


def check_tensor(array: object) -> npt.NDArray[np.float32]:
    if not isinstance(array, np.ndarray):
        raise TypeError(f"all-reduce: expected a numpy array, got {type(array).__name__}")
    if array.dtype != np.float32:
        raise TypeError(f"all-reduce: expected a float32 array, got {array.dtype}")
    return array


@dataclass
class AllReduceRun:
    """One all-reduce of ``array`` (float32, any shape) as a state machine.

    ``rto``: the retransmission timeout estimate to use and update (a ``Worker``
    passes the one it keeps across runs); by default a fresh one."""

    array: npt.NDArray[np.float32]
    job_id: int
    num_workers: int
    settings: WorkerSettings = field(default_factory=WorkerSettings)
    base: int = 0
    rto: RtoEstimator | None = None

    def __post_init__(self) -> None:
        check_job(self.job_id, self.num_workers)
        self.settings.check()
        check_tensor(self.array)
        k, s = self.settings.k, self.settings.window
        flat = self.array.reshape(-1)
        self.chunks = -(-flat.size // k)
        if self.chunks + s > _U32:
            raise ValueError(f"all-reduce: {flat.size} values need {self.chunks} chunks, "
                             f"more than the 32-bit chunk index allows")
        blocks = np.zeros((self.chunks, k), dtype=np.float32)
        blocks.reshape(-1)[:flat.size] = flat
        self.blocks = blocks
        self.quantizer = Quantizer(self.num_workers, self.settings.scaling)
        self.proposals = self.quantizer.propose(blocks)
        self.prepared = self.quantizer.prepare(blocks)
        self.agreed = np.full(self.chunks, EXP_EMPTY, dtype=np.int8)
        self.sums = np.zeros((self.chunks, k), dtype=np.int32)
        self.end = self.base + (self.chunks + s if self.chunks else 0)
        self.stats = WorkerStats(chunks=self.chunks, wire_chunks=self.end - self.base)
        self.awaited = [-1] * s  # per slot: the wire chunk it waits for, -1 = idle
        self.packets: list[bytes] = [b""] * s
        self.retries = [0] * s
        self.timeouts = np.full(s, self.settings.timeout)
        self.deadlines = np.full(s, np.inf)
        self.sent_at = [0.0] * s  # per slot: when the awaited packet was first sent
        self.estimator = self.rto if self.rto is not None else RtoEstimator(self.settings)
        self._note_rto()
        self.remaining = 0
        self._zeros = np.zeros(k, dtype=np.int32)
        self._payload_size = HEADER_SIZE + 4 * k

    # ------------------------------------------------------------------ state

    @property
    def done(self) -> bool:
        return self.remaining == 0

    def next_deadline(self) -> float | None:
        if self.remaining == 0:
            return None
        return float(self.deadlines.min())

    # --------------------------------------------------------------- sending

    def _packet(self, w: int) -> bytes:
        s = self.settings.window
        j = w - self.base
        exponent = int(self.proposals[j]) if j < self.chunks else EXP_EMPTY
        if j >= s:
            d = j - s
            values = self.quantizer.quantize_rows(self.prepared, d, self.agreed[d:d + 1])[0]
        else:
            values = self._zeros
        return encode_fast(self.job_id, w % s, (w // s) & 1, exponent, w, values)

    def _send(self, w: int, now: float) -> bytes:
        slot = w % self.settings.window
        pkt = self._packet(w)
        rto = self.estimator.rto
        self.awaited[slot] = w
        self.packets[slot] = pkt
        self.retries[slot] = 0
        self.sent_at[slot] = now
        self.timeouts[slot] = rto
        self.deadlines[slot] = now + rto
        self.stats.sent += 1
        return pkt

    # RTT samples. Only a chunk sent once gives one (Karn's rule: the RESULT of a
    # resent chunk may answer either copy). And none of the first S wire chunks do:
    # ``start`` sends them in one burst, so their RTTs ramp from one packet's
    # transmission time to a whole window's, while every later chunk goes out when its
    # slot's RESULT arrives and so finds about a window of packets ahead of it. Taken,
    # the ramp would set the RTO far below the steady state's RTT on a slow link, and
    # the second window would be resent.

    def _note_rto(self) -> None:
        self.stats.srtt = self.estimator.srtt
        self.stats.rto = self.estimator.rto

    def start(self, now: float) -> list[bytes]:
        """The first window: one packet per slot."""
        self.remaining = self.end - self.base  # every wire chunk needs its RESULT
        return [self._send(w, now)
                for w in range(self.base, min(self.end, self.base + self.settings.window))]

    # ------------------------------------------------------------- receiving

    def on_packet(self, payload: bytes, now: float) -> list[bytes]:
        """Handle a datagram from the switch; returns what to send next."""
        if len(payload) != self._payload_size:
            self.stats.ignored += 1
            return []
        job, slot, version, flags, exponent, _res, chunk = HEADER.unpack_from(payload)
        s = self.settings.window
        if job != self.job_id or not flags & FLAG_RESULT or slot >= s:
            self.stats.ignored += 1
            return []
        w = self.awaited[slot]
        if w < 0 or chunk != w % _U32 or version != (w // s) & 1:
            self._count_stray(slot, version, chunk)
            return []
        self.stats.results += 1
        j = w - self.base
        if self.retries[slot] == 0 and j >= s:  # see "RTT samples"
            self.estimator.sample(now - self.sent_at[slot])
            self.stats.rtt_samples += 1
            self._note_rto()
        if j < self.chunks:
            self.agreed[j] = exponent
        if j >= s:
            self.sums[j - s] = np.frombuffer(payload, dtype=">i4", offset=HEADER_SIZE)
        self.remaining -= 1
        if w + s < self.end:
            return [self._send(w + s, now)]
        self.awaited[slot] = -1
        self.deadlines[slot] = np.inf
        return []

    def _count_stray(self, slot: int, version: int, chunk: int) -> None:
        """A RESULT of this job that is not awaited: a duplicate or something stale."""
        s = self.settings.window
        w = self.base + (chunk - self.base) % _U32
        awaited = self.awaited[slot]
        if (self.base <= w < self.end and w % s == slot and (w // s) & 1 == version
                and (awaited < 0 or w < awaited)):
            self.stats.duplicate_results += 1
        else:
            self.stats.ignored += 1

    def on_timer(self, now: float) -> list[bytes]:
        """Resend every packet whose timer expired (with backoff)."""
        due = np.flatnonzero(self.deadlines <= now)
        out = []
        for slot in due.tolist():
            w = self.awaited[slot]
            self.stats.timeouts += 1
            if self.retries[slot] >= self.settings.max_retries:
                raise AllReduceTimeout(
                    f"job {self.job_id}: no RESULT for chunk {w % _U32} (slot {slot}, "
                    f"version {(w // self.settings.window) & 1}) after "
                    f"{self.retries[slot]} retransmissions")
            self.retries[slot] += 1
            t = min(float(self.timeouts[slot]) * self.settings.backoff,
                    self.settings.max_timeout)
            self.timeouts[slot] = t
            self.deadlines[slot] = now + t
            self.estimator.back_off(t)
            self._note_rto()
            self.stats.retransmitted += 1
            self.stats.sent += 1
            out.append(self.packets[slot])
        return out

    # ---------------------------------------------------------------- result

    def result(self) -> npt.NDArray[np.float32]:
        """The all-reduced tensor (same shape); raises if the run failed."""
        if not self.done:
            raise AllReduceError(f"job {self.job_id}: the all-reduce has not finished")
        flat = self.quantizer.dequantize(self.sums, self.agreed).reshape(-1)
        out: npt.NDArray[np.float32] = flat[:self.array.size].reshape(self.array.shape)
        bad = np.flatnonzero(self.agreed == EXP_NONFINITE)
        if bad.size:
            k = self.settings.k
            local = np.flatnonzero(~np.isfinite(self.array.reshape(-1)))
            mine = (f"this worker's first at flat index {int(local[0])}" if local.size
                    else "none on this worker")
            raise NonFiniteInputError(
                f"job {self.job_id}: a worker's input has NaN or infinity in chunks "
                f"{bad[:8].tolist()}{' ...' if bad.size > 8 else ''} of {k} values "
                f"({mine}); those chunks of the result are NaN", out, bad.tolist())
        return out
