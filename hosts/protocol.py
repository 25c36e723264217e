"""The worker side of the slot protocol, without I/O (a state machine).

One ``AllReduceRun`` all-reduces one float32 tensor. It is driven by three calls,
each returning the UDP payloads to send, in order, as the rows of one array
(``hosts.batch.Packets``): ``start_batch(now)``, ``on_batch(datagrams, now)`` with
every datagram that has arrived (``hosts.batch.Datagrams``), and
``on_timer_batch(now)``; ``next_deadline()`` says when ``on_timer_batch`` is due.
``start``, ``on_packets`` (``on_packet`` for one) and ``on_timer`` are the same
with ``bytes`` in and out. ``hosts.worker`` drives it over a transport; tests drive
many of them in one event loop.

A batch is handled in one pass: its headers are walked in arrival order in Python
(the state per slot is a few integers), and what is per value -- copying the sums
out, quantizing the next chunks, writing the answers -- is a few numpy calls for the
whole batch. With eight workers and a switch on two cores, each numpy call costs a
few microseconds whatever its size, so the batch, not the chunk, pays for them.

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

Loss. A lost packet stalls its slot for every worker (a cell completes only with every
contribution), so what matters is how soon the one worker that must resend learns it,
and that the others do not resend in vain: a resent contribution to a cell that waits
for someone else is dropped by the switch, and a timer that fires on every worker of
the job costs N packets for one loss. Three mechanisms, fastest first:

* *Up-loss*: every transmission names the cell of the worker's previous transmission
  (``hosts.wire``: flags NAMED). The switch checks the sender's bit there; when it is
  missing, it answers the packet with a NACK naming that cell (instead of dropping
  it, or on the sender's copy of the RESULT), and the worker resends that chunk at
  once. A NACK is taken only when nothing was sent for the named chunk since.
* *Down-loss*: every multicast RESULT names the cell the switch completed before it. A
  worker still waiting for that cell's chunk has lost its RESULT and resends the chunk
  (a quarter of an SRTT later, in case the RESULT was only overtaken on a link that
  reorders); the switch answers a contribution to a complete cell with its stored
  RESULT (*fetch*).
* *Timers*, for what the names miss (a NACK or a resend lost too, two losses in a
  row): each slot has a timer, armed for the current retransmission timeout (RTO, from
  the measured round-trip times: ``hosts.rto``) after a resend, and for the RTO plus
  ``PATIENCE`` smoothed RTTs when a chunk is first sent while at least half the slots
  are busy. The patience keeps a worker from resending while another worker recovers
  through the names: a NACK'd or fetched chunk needs about two round trips more (the
  resend, then that worker's next contribution), and meanwhile the others' chunks of
  that slot wait.

What an expiry means depends on what came back since. A chunk that another chunk *sent
after it* has overtaken (its RESULT came first), or one of the few left in the run's
tail, waits for a loss to be repaired: it is resent every RTO, and the run fails when
it has waited ``max_retries`` times ``max_timeout`` in all. A chunk that nothing
overtook while later ones are outstanding says the RTO is too short for everything in
flight (a slow link, a long queue, a switch that stalled): it alone is resent, its
wait grows by ``backoff`` up to ``max_timeout``, the worker's RTO is backed off
(``RtoEstimator.back_off``) and the other chunks that nothing overtook wait for its
answer instead of expiring in a burst; after ``max_retries`` such expiries the run
fails (``AllReduceTimeout``). RTT samples come from chunks sent once; of those that
were overtaken only the ones faster than the RTO count, for the others measured
another worker's recovery, not the network, and would inflate the RTO.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from hosts.batch import Datagrams, Packets, packet_list
from hosts.quantize import EXP_EMPTY, EXP_NONFINITE, MAX_WORKERS, Quantizer, Scaling
from hosts.rto import RtoEstimator
from hosts.wire import (
    ALLOWED_K,
    DEFAULT_K,
    FLAG_NACK,
    FLAG_NAMED,
    FLAG_NAMED_VERSION,
    FLAG_RESULT,
    HEADER,
    HEADER_SIZE,
    MAX_NAMED_SLOT,
    VALUE_DTYPE,
)

_U32 = 1 << 32
_M32 = _U32 - 1
PATIENCE = 2.0
"""Smoothed RTTs added to the RTO for a chunk's first transmission (see above)."""


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
    every packet is first given ``timeout``. A timeout that says the RTO is too short
    multiplies the slot's wait by ``backoff``, up to ``max_timeout`` (see "Loss" above).

    ``min_timeout`` (10 ms) is well above what an idle emulated LAN adds to a chunk's
    round trip (tens of microseconds per packet in the Python switch and agents) but
    keeps a few milliseconds of margin for what the samples may not have
    seen yet: a garbage collection or a descheduled process while five Python
    processes share two cores. Too low a floor costs spurious retransmissions (more
    load on a switch that is already the bottleneck); too high a floor only slows the
    recovery of the losses that the NACKs and names miss.

    ``max_gather`` (20 ms) bounds how long RESULTs may gather before a worker handles
    them (``AllReduceRun.gather_time``: also at most a quarter of the smoothed RTT).
    Where packets are few and round trips long (K = 256 at 10 Mbit/s: a packet every
    0.9 ms, a window of 56 ms) a 6 ms bound left a wake-up every 7 packets, and the
    wake-ups, not the packets, made most of an agent's CPU."""

    k: int = DEFAULT_K
    window: int = 64
    scaling: Scaling = Scaling.TIGHT
    timeout: float = 0.1
    max_timeout: float = 1.0
    backoff: float = 2.0
    max_retries: int = 30
    adaptive: bool = True
    min_timeout: float = 0.01
    max_gather: float = 0.02

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
        if (isinstance(self.max_gather, bool) or not isinstance(self.max_gather, (int, float))
                or not 0 <= self.max_gather <= 1):
            raise ValueError(f"worker settings: max_gather={self.max_gather!r} is not in "
                             f"[0, 1] s")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"worker settings: max_retries={self.max_retries!r} must be "
                             f"a non-negative integer")

    def estimator(self) -> RtoEstimator:
        """A fresh RTO estimator with these timeouts."""
        return RtoEstimator(self.timeout, self.min_timeout, self.max_timeout, self.adaptive)


_LATEST = ("srtt", "rto")


@dataclass
class WorkerStats:
    """Packet counters of one run (or, summed, of a worker's lifetime).

    ``retransmitted`` counts every packet sent again: after a timeout (``timeouts``),
    on a NACK (``nacks``) or on a RESULT that named a cell whose RESULT was lost
    (``fetches``). ``rtt_samples`` counts the round-trip samples taken; ``srtt`` and
    ``rto`` are the smoothed RTT (None before any sample) and the retransmission
    timeout at the end, in seconds: ``add`` keeps the later run's values.
    ``cpu_seconds`` is the worker process's CPU time during the run (``hosts.worker``
    measures it)."""

    sent: int = 0
    retransmitted: int = 0
    results: int = 0
    duplicate_results: int = 0
    ignored: int = 0
    timeouts: int = 0
    nacks: int = 0
    fetches: int = 0
    chunks: int = 0
    wire_chunks: int = 0
    rtt_samples: int = 0
    srtt: float | None = None
    rto: float | None = None
    cpu_seconds: float = 0.0

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
        if flat.size == self.chunks * k:
            blocks = flat.reshape(self.chunks, k)
        else:  # the last chunk padded with zeros
            blocks = np.zeros((self.chunks, k), dtype=np.float32)
            blocks.reshape(-1)[:flat.size] = flat
        self.quantizer = Quantizer(self.num_workers, self.settings.scaling)
        self.proposals = self.quantizer.propose(blocks).tolist()
        self.prepared = self.quantizer.prepare(blocks)
        self.exponents = [EXP_EMPTY] * self.chunks  # agreed, per data chunk
        self.sums = np.zeros((self.chunks, k), dtype=VALUE_DTYPE)  # as they came
        self.end = self.base + (self.chunks + s if self.chunks else 0)
        self.stats = WorkerStats(chunks=self.chunks, wire_chunks=self.end - self.base)
        self.estimator = self.rto if self.rto is not None else self.settings.estimator()
        self._note_rto()
        self.remaining = 0
        self._payload_size = HEADER_SIZE + 4 * k
        self.no_packets: Packets = np.zeros((0, self._payload_size), dtype=np.uint8)
        # Per slot: the wire chunk it waits for (-1: idle), and its timer.
        self.awaited = [-1] * s
        self.active = 0  # slots awaiting a chunk
        self.deadlines = [math.inf] * s
        self.waits = [0.0] * s  # what the timer was last armed for
        self.retries = [0] * s  # timer expiries of the awaited chunk
        self.sent_at = [0.0] * s  # when the awaited chunk was first sent
        self.fetched = [False] * s  # named by a RESULT already
        self.fetch_at = [math.inf] * s  # when to fetch it
        # Transmission order: every packet sent gets the next sequence number. Per slot:
        # the awaited chunk's first and latest transmissions and the transmission the
        # latest one named; the worker's previous transmission; the largest first
        # transmission of a chunk whose RESULT came (what overtakes older chunks).
        self.seq = 0
        self.first_seq = [0] * s
        self.last_seq = [0] * s
        self.named_seq = [-1] * s
        self.transmissions = [0] * s
        self.prev: tuple[int, int, int] | None = None  # slot, version, seq
        self.answered_seq = 0

    # ------------------------------------------------------------------ state

    @property
    def agreed(self) -> npt.NDArray[np.int8]:
        """The agreed exponent field of every data chunk (``EXP_EMPTY`` until known)."""
        return np.array(self.exponents, dtype=np.int8)

    @property
    def done(self) -> bool:
        return self.remaining == 0

    def next_deadline(self) -> float | None:
        if self.remaining == 0:
            return None
        return min(self.deadlines)

    def gather_time(self) -> float:
        """How long to let datagrams gather after one arrived, before handling them.

        Each wake-up of a worker costs a context switch, a poll and a pass of the state
        machine, and with eight workers and a switch on two cores those costs, paid per
        RESULT, decide the rate more than the links do. Letting RESULTs gather for a
        moment handles several per wake-up. The moment is at most ``max_gather`` and a
        quarter of the smoothed RTT (so the window, busy meanwhile, hides it), and none
        while fewer than half the slots are busy (the run's start and tail, where a
        RESULT's delay is the run's)."""
        srtt = self.estimator.srtt
        if srtt is None or 2 * self.active < self.settings.window:
            return 0.0
        return min(self.settings.max_gather, srtt / 4)

    # --------------------------------------------------------------- sending

    def _emit(self, slots: list[int]) -> Packets:
        """The awaited chunks of ``slots``, in this order, as packets; each names the
        transmission before it (the worker's previous one for the first). The values
        are quantized here, all in one call: a resend quantizes its chunk again, to
        the same integers."""
        if not slots:
            return self.no_packets
        size, s, base, chunks = self._payload_size, self.settings.window, self.base, \
            self.chunks
        job_id, proposals, awaited = self.job_id, self.proposals, self.awaited
        named_seq, last_seq, first_seq = self.named_seq, self.last_seq, self.first_seq
        transmissions = self.transmissions
        out = np.empty((len(slots), size), dtype=np.uint8)
        buffer = out.data
        pack = HEADER.pack_into
        prev, seq = self.prev, self.seq
        data: list[int] = []  # the data chunk of each packet (negative: zeros)
        offset = 0
        for slot in slots:
            seq += 1
            w = awaited[slot]
            version = (w // s) & 1
            j = w - base
            data.append(j - s)
            if prev is not None and prev[0] <= MAX_NAMED_SLOT:
                named = prev[0]
                flags = FLAG_NAMED | FLAG_NAMED_VERSION if prev[1] else FLAG_NAMED
                named_seq[slot] = prev[2]
            else:
                named = flags = 0
                named_seq[slot] = -1
            prev = (slot, version, seq)
            last_seq[slot] = seq
            if not transmissions[slot]:
                first_seq[slot] = seq
            transmissions[slot] += 1
            pack(buffer, offset, job_id, slot, version, flags,
                 proposals[j] if j < chunks else EXP_EMPTY, named, w & _M32)
            offset += size
        self.prev, self.seq = prev, seq
        self.stats.sent += len(slots)
        values = np.ndarray((len(slots), self.settings.k), dtype=VALUE_DTYPE, buffer=out,
                            offset=HEADER_SIZE, strides=(size, 4))
        if min(data) >= 0:
            values[...] = self._quantized(data)
        else:  # the exponent round: zeros
            values[...] = 0
            rows = [i for i, d in enumerate(data) if d >= 0]
            if rows:
                values[rows] = self._quantized([data[i] for i in rows])
        return out

    def _quantized(self, data: list[int]) -> npt.NDArray[np.int64]:
        """Data chunks ``data`` quantized with their agreed exponents, in one call (on
        a slice of the prepared tensor when they are consecutive, as usual)."""
        exponents = self.exponents
        rows: slice | npt.NDArray[np.intp]
        if data == list(range(data[0], data[0] + len(data))):
            rows = slice(data[0], data[0] + len(data))
        else:
            rows = np.array(data, dtype=np.intp)
        return self.quantizer.quantize_rows(self.prepared, rows,
                                            [exponents[d] for d in data])

    def _load(self, w: int, now: float) -> int:
        """Make wire chunk ``w`` its slot's awaited chunk."""
        slot = w % self.settings.window
        if self.awaited[slot] < 0:
            self.active += 1
        self.awaited[slot] = w
        self.retries[slot] = 0
        self.transmissions[slot] = 0
        self.fetched[slot] = False
        self.fetch_at[slot] = math.inf
        self.sent_at[slot] = now
        wait = self._first_wait()
        self.waits[slot] = wait
        self.deadlines[slot] = now + wait
        return slot

    def _first_wait(self) -> float:
        est = self.estimator
        if not est.adaptive or est.srtt is None or 2 * self.active < self.settings.window:
            return est.rto
        return min(est.rto + PATIENCE * est.srtt, self.settings.max_timeout)

    def _resend(self, slot: int, now: float) -> None:
        """A resend on a NACK or a name: the answer is due within one RTO."""
        wait = self.estimator.rto
        self.waits[slot] = wait
        self.deadlines[slot] = now + wait
        self.stats.retransmitted += 1

    # RTT samples. Only a chunk sent once gives one (Karn's rule: the RESULT of a
    # resent chunk may answer either copy), and if a chunk sent after it was answered
    # first, only when it is faster than the RTO (else it waited for another worker's
    # recovery; a link that reorders overtakes chunks too, by less). And none of the
    # first S wire chunks do: ``start`` sends them in one burst, so their RTTs ramp
    # from one packet's transmission time to a whole window's, while every later chunk
    # goes out when its slot's RESULT arrives and so finds about a window of packets
    # ahead of it. Taken, the ramp would set the RTO far below the steady state's RTT on
    # a slow link, and the second window would be resent.

    def _rearm_unsampled(self) -> None:
        """After the first RTT sample: the timers armed before it had only the
        configured timeout."""
        wait = self._first_wait()
        for slot, w in enumerate(self.awaited):
            if w >= 0 and self.transmissions[slot] == 1 and self.retries[slot] == 0:
                self.waits[slot] = wait
                self.deadlines[slot] = min(self.deadlines[slot], self.sent_at[slot] + wait)

    def _note_rto(self) -> None:
        self.stats.srtt = self.estimator.srtt
        self.stats.rto = self.estimator.rto

    def start(self, now: float) -> list[bytes]:
        """The first window: one packet per slot (``start_batch`` as ``bytes``)."""
        return packet_list(self.start_batch(now))

    def start_batch(self, now: float) -> Packets:
        """The first window: one packet per slot."""
        self.remaining = self.end - self.base  # every wire chunk needs its RESULT
        slots = [self._load(w, now)
                 for w in range(self.base, min(self.end, self.base + self.settings.window))]
        return self._emit(slots)

    # ------------------------------------------------------------- receiving

    def on_packet(self, payload: bytes, now: float) -> list[bytes]:
        """Handle one datagram from the switch; returns what to send next."""
        return self.on_packets([payload], now)

    def on_packets(self, payloads: Sequence[bytes], now: float) -> list[bytes]:
        """``on_batch`` for payloads as ``bytes``, and its answers as ``bytes``."""
        return packet_list(self.on_batch(Datagrams.of(payloads), now))

    def on_batch(self, batch: Datagrams, now: float) -> Packets:
        """Handle a batch of datagrams from the switch; returns what to send next:
        the resends the batch asks for, then the next chunk of every slot it
        completed (quantized together).

        The headers are read with one ``struct`` call and walked in arrival order
        (each RESULT moves its slot on, so a duplicate later in the batch is one); the
        sums and exponents are copied out, the next chunks quantized and the answers
        written with a few numpy calls for the whole batch. The timers of the chunks
        a batch sends are armed when they are sent, after the batch's RTT samples."""
        s, base, end, chunks = self.settings.window, self.base, self.end, self.chunks
        job_id, size = self.job_id, self._payload_size
        awaited, transmissions = self.awaited, self.transmissions
        first_seq, sent_at, named_seq = self.first_seq, self.sent_at, self.named_seq
        retries, fetched, fetch_at = self.retries, self.fetched, self.fetch_at
        est = self.estimator
        unsampled = est.srtt is None
        answered = self.answered_seq
        lengths = batch.lengths
        recover: list[tuple[int, int, int]] = []  # slot, version, lost seq (-1: fetch)
        rtts: list[float] = []  # RTT samples not yet taken, oldest first
        loaded: list[int] = []
        finished: list[int] = []
        rows: list[int] = []  # the batch rows of the sums taken, and their data chunks
        data: list[int] = []
        exponents = self.exponents
        ignored = sampled = results = 0
        for i, (job, slot, version, flags, exponent, named, chunk) in enumerate(
                batch.headers()):
            n = lengths[i]
            if n != size and n != HEADER_SIZE:
                ignored += 1
                continue
            kind = flags & (FLAG_RESULT | FLAG_NACK)  # a NACK alone is a header alone
            if job != job_id or slot >= s or not kind or (
                    (n == HEADER_SIZE) != (kind == FLAG_NACK)):
                ignored += 1
                continue
            w = awaited[slot]
            if w < 0 or chunk != w & _M32 or version != (w // s) & 1:
                if flags & FLAG_RESULT:  # else a stale NACK or a duplicate
                    self._count_stray(slot, version, chunk)
                continue
            if flags & FLAG_NAMED and named < s:
                # only a cell awaited now can be awaited (and sent) after the batch
                named_version = 1 if flags & FLAG_NAMED_VERSION else 0
                wn = awaited[named]
                if wn >= 0 and (wn // s) & 1 == named_version:
                    recover.append((named, named_version,
                                    named_seq[slot] if flags & FLAG_NACK else -1))
            if not flags & FLAG_RESULT:
                continue
            results += 1
            j = w - base
            first = first_seq[slot]
            if transmissions[slot] == 1 and j >= s:  # see "RTT samples"
                rtt = now - sent_at[slot]
                if first > answered:
                    rtts.append(rtt)
                else:  # overtaken: compared with the RTO of the samples before it
                    est.sample_many(rtts)
                    sampled += len(rtts)
                    rtts = [rtt] if rtt < est.rto else []
            if first > answered:
                answered = first
            if j < chunks:
                exponents[j] = exponent
            if j >= s:
                rows.append(i)
                data.append(j - s)
            if w + s < end:  # the slot's next chunk (its timer: below)
                awaited[slot] = w + s
                retries[slot] = transmissions[slot] = 0
                fetched[slot] = False
                fetch_at[slot] = math.inf
                sent_at[slot] = now
                loaded.append(slot)
            else:
                awaited[slot] = -1
                finished.append(slot)
        self.answered_seq = answered
        self.stats.ignored += ignored
        self.remaining -= results
        self.stats.results += results
        if rows:
            self._take(batch, rows, data)
        est.sample_many(rtts)
        self.stats.rtt_samples += sampled + len(rtts)
        if unsampled and est.srtt is not None:
            self._rearm_unsampled()
        self._note_rto()
        deadlines = self.deadlines
        if finished:
            self.active -= len(finished)
            for slot in finished:
                deadlines[slot] = math.inf
        if loaded:
            wait = self._first_wait()
            waits = self.waits
            for slot in loaded:
                waits[slot] = wait
                deadlines[slot] = now + wait
        resends = self._to_recover(recover, now)
        for slot in resends:
            self._resend(slot, now)
        return self._emit(resends + loaded)

    def _take(self, batch: Datagrams, rows: list[int], data: list[int]) -> None:
        """The sums in ``rows`` of ``batch``, of data chunks ``data``: one copy (of
        consecutive rows to consecutive chunks, as usual, or gathered)."""
        n = len(rows)
        if rows[-1] - rows[0] == n - 1 and data == list(range(data[0], data[0] + n)):
            self.sums[data[0]:data[0] + n] = batch.values(self.settings.k,
                                                          slice(rows[0], rows[0] + n))
        else:
            self.sums[data] = batch.values(self.settings.k, rows)

    def _to_recover(self, recover: list[tuple[int, int, int]], now: float) -> list[int]:
        """The slots to resend now, from the names in a batch: a NACK'd chunk if nothing
        was sent for it since the lost transmission. A chunk whose cell was completed
        before a RESULT is fetched once, a quarter of an SRTT later (its RESULT may
        only be overtaken, on a link that reorders), unless it comes meanwhile; this
        is checked after the whole batch, so a RESULT in the same batch is enough."""
        s = self.settings.window
        srtt = self.estimator.srtt
        reorder = 0.0 if srtt is None else srtt / 4
        out: list[int] = []
        awaited, transmissions = self.awaited, self.transmissions
        for slot, version, lost in recover:
            w = awaited[slot]
            if (w < 0 or (w // s) & 1 != version or not transmissions[slot]
                    or slot in out):
                continue  # answered meanwhile, or a chunk loaded by this very batch
            if lost >= 0:
                if self.last_seq[slot] != lost:
                    continue
                self.stats.nacks += 1
            else:
                if self.fetched[slot]:
                    continue
                self.fetched[slot] = True
                if reorder:
                    self.fetch_at[slot] = now + reorder
                    self.deadlines[slot] = min(self.deadlines[slot], now + reorder)
                    continue
                self.stats.fetches += 1
            out.append(slot)
        return out

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
        """``on_timer_batch`` as ``bytes``."""
        return packet_list(self.on_timer_batch(now))

    def on_timer_batch(self, now: float) -> Packets:
        """Resend every packet whose timer expired (see "Loss" above)."""
        deadlines = self.deadlines
        if not self.remaining or min(deadlines) > now:
            return self.no_packets
        due = [slot for slot, t in enumerate(deadlines) if t <= now]
        out: list[int] = []
        settings = self.settings
        backed_off = False
        for slot in sorted(due, key=self.first_seq.__getitem__):
            if self.fetch_at[slot] <= now:  # not a timeout: a fetch put off (see above)
                self.fetch_at[slot] = math.inf
                self.stats.fetches += 1
                self._resend(slot, now)
                out.append(slot)
                continue
            too_short = self._rto_too_short(slot)
            if too_short and backed_off:
                continue  # re-armed below: the oldest one's resend probes for them all
            self.stats.timeouts += 1
            if too_short:
                self.retries[slot] += 1
                wait = min(self.waits[slot] * settings.backoff, settings.max_timeout)
                self.estimator.back_off(wait)
                self._note_rto()
                if self.estimator.adaptive:  # a fixed timeout is every packet's own
                    self._hold_back(slot, now + wait)
                    backed_off = True
            else:  # a loss: resend as often as the RTO allows
                wait = self.estimator.rto
            waited = now - self.sent_at[slot]
            if (self.retries[slot] > settings.max_retries
                    or waited > settings.max_retries * settings.max_timeout):
                w = self.awaited[slot]
                raise AllReduceTimeout(
                    f"job {self.job_id}: no RESULT for chunk {w % _U32} (slot {slot}, "
                    f"version {(w // settings.window) & 1}) after "
                    f"{self.transmissions[slot] - 1} retransmissions in {waited:.3g} s")
            self.waits[slot] = wait
            self.deadlines[slot] = now + wait
            self.stats.retransmitted += 1
            out.append(slot)
        return self._emit(out)

    def _hold_back(self, slot: int, until: float) -> None:
        """After a timeout that says the RTO is too short, the other chunks that
        nothing overtook wait for the answer to ``slot``'s resend instead of expiring in
        a burst (as TCP's one timer restarts): a switch that stalls for a moment costs
        one resend, not a window's."""
        answered = self.answered_seq
        for other, w in enumerate(self.awaited):
            if (w >= 0 and other != slot and self.first_seq[other] > answered
                    and self.fetch_at[other] == np.inf):
                self.deadlines[other] = max(self.deadlines[other], until)

    def _rto_too_short(self, slot: int) -> bool:
        """Whether the expiry of ``slot`` says the RTO is too short for everything in
        flight: no chunk sent after it has been answered, though some are outstanding.
        In the run's tail (fewer than half the slots still busy) the chunks left wait
        for losses to be repaired, and an expiry says nothing about the RTO."""
        first = self.first_seq[slot]
        if first <= self.answered_seq:
            return False  # overtaken: a loss on this slot alone
        if self.estimator.srtt is None:
            return True  # the configured first timeout may be anything
        if 2 * self.active < self.settings.window:
            return False
        return any(w >= 0 and self.first_seq[other] > first
                   for other, w in enumerate(self.awaited))

    # -------------------------------------------------------------- recovery
    # When the controller rebuilds the job's tree (a link or switch failed), every
    # worker stops, reports ``progress`` and goes back to the first wire chunk that
    # some worker lacks (``rewind``): the new tree's cells are empty (a new epoch), and
    # every chunk from there is sent and summed again. The sums come out the same bits
    # (each worker sends the same integers, the exponents are the same maximum), so a
    # RESULT a worker had already is only replaced by itself.

    def progress(self) -> tuple[int, int]:
        """(the first wire chunk whose RESULT this worker lacks, the end of the wire
        chunks it has sent): every chunk before the first has its RESULT here, none
        from the second on was sent. ``(end, end)`` when the run is done."""
        active = [w for w in self.awaited if w >= 0]
        if not active:
            return self.end, self.end
        return min(active), max(active) + 1

    def pause(self) -> None:
        """Stop every timer: nothing is due until ``rewind``."""
        self.deadlines = [math.inf] * self.settings.window

    def rewind(self, start: int, now: float) -> Packets:
        """Continue from wire chunk ``start`` (at most this worker's first missing one):
        the packets of the new window. No transmission names one before the rewind."""
        first, _ = self.progress()
        if not self.base <= start <= first:
            raise AllReduceError(f"job {self.job_id}: cannot continue from wire chunk "
                                 f"{start}: this worker's chunks before {first} are done "
                                 f"and its run starts at {self.base}")
        s = self.settings.window
        self.awaited = [-1] * s
        self.active = 0
        self.deadlines = [math.inf] * s
        self.fetch_at = [math.inf] * s
        self.prev = None
        self.remaining = self.end - start
        return self._emit([self._load(w, now) for w in range(start, min(self.end, start + s))])

    def complete(self) -> None:
        """Mark the run done: its sums and exponents were filled in some other way
        (``hosts.fallback``)."""
        self.awaited = [-1] * self.settings.window
        self.active = 0
        self.deadlines = [math.inf] * self.settings.window
        self.remaining = 0

    # ---------------------------------------------------------------- result

    def result(self) -> npt.NDArray[np.float32]:
        """The all-reduced tensor (same shape); raises if the run failed."""
        if not self.done:
            raise AllReduceError(f"job {self.job_id}: the all-reduce has not finished")
        flat = self.quantizer.dequantize(self.sums, self.exponents).reshape(-1)
        out: npt.NDArray[np.float32] = flat[:self.array.size].reshape(self.array.shape)
        bad = np.flatnonzero(np.array(self.exponents) == EXP_NONFINITE)
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
