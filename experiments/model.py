"""The alpha-beta model of every all-reduce algorithm: completion time and bytes per host.

Each algorithm's time is ``steps * alpha + bits on its busiest link direction / B``:
``alpha`` is the cost of one message step (latency plus per-message processing), ``B``
the link rate, and the bits are whole frames as the links' ``htb`` shaper charges them:
the Ethernet header through the end of the payload (14 + IP length), no preamble, FCS
or inter-frame gap. On a star every host has its own link to the switch, full duplex,
so the busiest direction of the busiest host link sets the bandwidth term.

Any other topology (``ModelInput.shape``, ``experiments.model_topology``) changes two
things. Latency: ``alpha`` is a step through one switch, and every further switch on a
step's path adds ``hop`` (its processing and the link's propagation). Bandwidth: where
a link between switches carries more of an algorithm's traffic than the busiest host
link (``TopoShape.load``, with ECMP spreading traffic evenly over equal-cost paths),
the bandwidth term grows by that factor.

- ``ina`` (in-network): every worker sends ``C + W`` packets of K int32 values (C data
  chunks; the first W, the window, are the round that agrees the scaling exponents, see
  ``hosts.protocol``) and receives as many results; uplinks and downlinks stream in
  parallel, so T = (C + W) * frame / B + 2 alpha, the "S / B plus the window's first
  round trip". A frame is 4K values + 12 header + 42 Ethernet/IPv4/UDP bytes.
  In a tree of depth d (links from a worker to the root), a chunk's round trip
  crosses 2d links: RTT = 2 alpha + 2d F/B + 2(d-1) hop, and a worker can send no faster
  than its window allows, W chunks per RTT: T = (C + W) * max(F/B, RTT/W) + 2 alpha
  + 2(d-1)(hop + F/B) (on a star, d = 1 and the window rarely binds).
- ``ring``: reduce-scatter then all-gather, 2(N-1) steps of S/N each:
  T = 2(N-1) alpha + 2(N-1)/N * S / B.
- ``ps``: one server (rank 0) receives N-1 tensors and returns N-1 sums, streamed:
  its link carries (N-1) S in each direction, T = 2 alpha + (N-1) S / B.
- ``ps-sharded``: every host serves 1/N of the tensor: it pushes (N-1)/N S and answers
  with as much, T = 2 alpha + 2(N-1)/N * S / B (the ring's bandwidth, two steps).
- ``hd``: recursive halving then doubling (Rabenseifner) among the largest power of two
  N' <= N hosts, 2 log2 N' steps moving 2(N'-1)/N' S; the N - N' other hosts first hand
  their tensor to a partner and get the result back (two more steps of S each).

TCP (the host algorithms) gets ``tcp_efficiency`` (e, 0.88) of a link's rate here
(``TCP_EFFICIENCY``), and carries MSS = 1448 payload bytes per segment (MTU 1500 with
the timestamp option): 66 bytes of Ethernet/IPv4/TCP per segment, and an ACK frame of
66 bytes every second segment in the reverse direction, which shares a host's uplink
with that host's own data when data flows both ways (ring, ps-sharded, hd).

``bytes_sent`` per rank counts application payload bytes (what the agents report:
for ``ina`` the UDP payloads with their 12-byte header), ``wire_bytes_sent`` the frames
on the host's uplink as the shaper and the switch's port counters see them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from experiments.model_topology import TopoShape
from hosts.frame import FRAME_OVERHEAD
from hosts.wire import HEADER_SIZE

VALUE_BYTES = 4  # float32 on the hosts, int32 on the wire
DEFAULT_ALPHA = 100e-6
"""Seconds per message step: a few tens of microseconds of Python per packet in the
switch and the agents, on top of the link's own serialization."""
TCP_EFFICIENCY = 0.88
"""The share of a link's rate the host algorithms' TCP gets here: on the emulator's
htb-shaped links (10 Mbit/s, 4 MB per worker, a star of 4) ring, ps, ps-sharded and
halving-doubling all took 7 to 21% longer than their frames need, without a single
retransmission: the Python agents' turns between segments and TCP's pacing leave the
link idle a moment now and then (see the README's validation)."""
DEFAULT_HOP = 50e-6
"""Seconds each switch past the first adds to a step's path: the built-in switch's
processing of a packet (about 20 us of CPU) and the time it waits for it."""

MSS = 1448
TCP_FRAME = 14 + 20 + 32  # Ethernet, IPv4, TCP with timestamps
ACK_EVERY = 2  # delayed ACKs: one per second full segment
INA_FRAME = HEADER_SIZE + FRAME_OVERHEAD  # 54 bytes around 4K bytes of values


@dataclass(frozen=True)
class ModelInput:
    """What the model needs: N workers, S float32 values each, link rate (None: the
    links are not shaped, so only the byte counts are predicted)."""

    workers: int
    size: int
    bw_mbps: float | None
    k: int = 64
    window: int = 64
    alpha: float = DEFAULT_ALPHA
    mss: int = MSS
    hop: float = DEFAULT_HOP
    shape: TopoShape | None = None  # None: a star of ``workers`` hosts
    tcp_efficiency: float = TCP_EFFICIENCY

    def hops(self, algo: str) -> int:
        return self.shape.hops(algo) if self.shape else 1

    def load(self, algo: str) -> float:
        return self.shape.load(algo) if self.shape else 1.0

    def step(self, algo: str) -> float:
        """The latency of one of the algorithm's message steps."""
        return self.alpha + (self.hops(algo) - 1) * self.hop

    @property
    def tensor_bytes(self) -> int:
        return VALUE_BYTES * self.size


@dataclass(frozen=True)
class Prediction:
    algo: str
    steps: int  # alpha terms
    link_bytes: float  # frame bytes on the busiest link direction, all phases
    bytes_sent: list[float]  # per rank: application payload bytes
    wire_bytes_sent: list[float]  # per rank: frame bytes on the host's uplink
    seconds: float | None  # None without a link rate
    formula: str

    @property
    def bytes_sent_per_host(self) -> float:
        return sum(self.bytes_sent) / len(self.bytes_sent) if self.bytes_sent else 0.0

    @property
    def wire_bytes_sent_per_host(self) -> float:
        return (sum(self.wire_bytes_sent) / len(self.wire_bytes_sent)
                if self.wire_bytes_sent else 0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "algo": self.algo,
            "seconds": self.seconds,
            "steps": self.steps,
            "link_bytes": self.link_bytes,
            "bytes_sent_per_host": self.bytes_sent_per_host,
            "bytes_sent_max": max(self.bytes_sent, default=0.0),
            "wire_bytes_sent_per_host": self.wire_bytes_sent_per_host,
            "wire_bytes_sent_max": max(self.wire_bytes_sent, default=0.0),
            "formula": self.formula,
        }


# ----------------------------------------------------------------- framing


def tcp_segments(payload: float, mss: int = MSS) -> int:
    return math.ceil(payload / mss) if payload > 0 else 0


def tcp_frames(payload: float, mss: int = MSS) -> float:
    """Frame bytes that carry ``payload`` bytes of one TCP stream."""
    return payload + tcp_segments(payload, mss) * TCP_FRAME


def tcp_acks(payload: float, mss: int = MSS) -> float:
    """Frame bytes of the ACKs for ``payload`` bytes, in the reverse direction."""
    return math.ceil(tcp_segments(payload, mss) / ACK_EVERY) * TCP_FRAME


def tcp_exchange(payload: float, mss: int = MSS) -> float:
    """One direction of a link that sends ``payload`` bytes while it receives as many
    (data frames plus the ACKs of what comes in)."""
    return tcp_frames(payload, mss) + tcp_acks(payload, mss)


def ina_wire_chunks(size: int, k: int, window: int) -> int:
    """Packets every worker sends (and receives): the data chunks and the exponent
    round, as ``hosts.protocol.AllReduceRun`` schedules them."""
    chunks = -(-size // k)
    return chunks + window if chunks else 0


def ina_frame_bytes(k: int) -> int:
    return VALUE_BYTES * k + INA_FRAME


def bus_factor(workers: int) -> float:
    """nccl-tests' all-reduce bus bandwidth factor, 2(N-1)/N: busbw = algbw * this."""
    return 2 * (workers - 1) / workers if workers else 0.0


def _finish(m: ModelInput, algo: str, steps: int, link_bytes: float,
            sent: list[float], wire: list[float], formula: str, tcp: bool = True
            ) -> Prediction:
    """``link_bytes`` are the busiest host link's; the busiest link carries
    ``m.load(algo)`` times as much; TCP (``tcp``) gets ``m.tcp_efficiency`` of its
    rate."""
    seconds = None
    link_bytes *= m.load(algo)
    if m.bw_mbps:
        rate = m.bw_mbps * 1e6 * (m.tcp_efficiency if tcp else 1.0)
        seconds = steps * m.step(algo) + link_bytes * 8 / rate
    return Prediction(algo, steps, link_bytes, sent, wire, seconds, formula)


# -------------------------------------------------------------- algorithms


def model_ina(m: ModelInput) -> Prediction:
    n = m.workers
    packets = ina_wire_chunks(m.size, m.k, m.window)
    frame = ina_frame_bytes(m.k)
    link = packets * frame
    sent = [float(packets * (frame - FRAME_OVERHEAD))] * n
    p = _finish(m, "ina", 2 if packets else 0, link, sent, [float(link)] * n,
                "(C+W)*max(F/B, RTT/W) + 2a + 2(d-1)(hop+F/B)", tcp=False)
    if p.seconds is None or not packets:
        return p
    depth = m.shape.tree_depth if m.shape else 1
    serial = frame * 8 / (m.bw_mbps * 1e6) if m.bw_mbps else 0.0
    rtt = 2 * m.alpha + 2 * depth * serial + 2 * (depth - 1) * m.hop
    seconds = (packets * max(serial, rtt / m.window) + 2 * m.alpha
               + 2 * (depth - 1) * (m.hop + serial))
    return replace(p, seconds=seconds)


def model_ring(m: ModelInput) -> Prediction:
    n, d = m.workers, m.tensor_bytes
    if n < 2:
        return _finish(m, "ring", 0, 0.0, [0.0] * n, [0.0] * n, "0 (one worker)")
    p = 2 * (n - 1) / n * d
    link = tcp_exchange(p, m.mss)
    return _finish(m, "ring", 2 * (n - 1), link, [p] * n, [link] * n,
                   "2(N-1)a + 2(N-1)/N*S*8/eB")


def model_ps(m: ModelInput) -> Prediction:
    n, d = m.workers, m.tensor_bytes
    if n < 2:
        return _finish(m, "ps", 0, 0.0, [0.0] * n, [0.0] * n, "0 (one worker)")
    served = (n - 1) * d
    link = tcp_exchange(served, m.mss)  # the server's uplink: sums out, ACKs for tensors
    worker_wire = tcp_exchange(d, m.mss)
    sent = [served] + [float(d)] * (n - 1)
    wire = [link] + [worker_wire] * (n - 1)
    return _finish(m, "ps", 2, link, sent, wire, "2a + (N-1)*S*8/eB")


def model_ps_sharded(m: ModelInput) -> Prediction:
    n, d = m.workers, m.tensor_bytes
    if n < 2:
        return _finish(m, "ps-sharded", 0, 0.0, [0.0] * n, [0.0] * n, "0 (one worker)")
    p = 2 * (n - 1) / n * d
    link = tcp_exchange(p, m.mss)
    return _finish(m, "ps-sharded", 2, link, [p] * n, [link] * n,
                   "2a + 2(N-1)/N*S*8/eB")


def model_hd(m: ModelInput) -> Prediction:
    n, d = m.workers, m.tensor_bytes
    if n < 2:
        return _finish(m, "hd", 0, 0.0, [0.0] * n, [0.0] * n, "0 (one worker)")
    core = 1 << (n.bit_length() - 1)
    extra = n - core
    rounds = core.bit_length() - 1
    p = 2 * (core - 1) / core * d
    steps = 2 * rounds + (2 if extra else 0)
    link = tcp_exchange(p, m.mss) + (2 * tcp_frames(d, m.mss) if extra else 0.0)
    # ranks 0..extra-1 are partners of the extra ranks core..n-1
    sent = [p + (d if r < extra else 0.0) if r < core else float(d) for r in range(n)]
    wire = [tcp_exchange(p, m.mss) + (tcp_frames(d, m.mss) if r < extra else 0.0)
            if r < core else tcp_exchange(d, m.mss) for r in range(n)]
    return _finish(m, "hd", steps, link, sent, wire,
                   "2log2(N')a + 2(N'-1)/N'*S*8/eB (+2a + 2S*8/eB if N > N')")


MODELS: dict[str, Callable[[ModelInput], Prediction]] = {
    "ina": model_ina,
    "ring": model_ring,
    "ps": model_ps,
    "ps-sharded": model_ps_sharded,
    "hd": model_hd,
}


def predict(algo: str, m: ModelInput) -> Prediction | None:
    """The model of ``algo`` (None for an algorithm the model does not know)."""
    model = MODELS.get(algo)
    return model(m) if model else None


def ideal_speedup(workers: int) -> float:
    """In-network over ring without framing or latency: 2(N-1)/N."""
    return bus_factor(workers)
