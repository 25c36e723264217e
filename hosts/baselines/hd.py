"""Recursive halving and doubling (Rabenseifner's all-reduce, as in MPICH and Gloo).

With P = N a power of two, the tensor is cut into P blocks and rank v owns block v:

- Reduce-scatter by recursive halving, distances d = P/2, P/4, ..., 1: rank v and its
  partner v XOR d split the blocks they are responsible for in two halves; each sends
  the half the partner keeps and adds the partner's values to the half it keeps (v
  keeps the lower half when its bit d is 0). After log2(P) steps rank v holds the
  complete sum of block v.
- All-gather by recursive doubling, d = 1, 2, ..., P/2: partners swap the blocks they
  hold, doubling them, until every rank has all.

Each rank sends and receives 2(P-1)/P of the tensor in 2·log2(P) steps.

N not a power of two: the standard extra step. Let P be the largest power of two at most
N and R = N - P. Of the first 2R ranks, each even rank sends its whole tensor to the
odd rank above it, which adds it and takes part in the halving and doubling for both
(as virtual rank r // 2; ranks from 2R on are virtual rank r - R). At the end each such
odd rank sends the complete sum back to its even partner.
"""

from __future__ import annotations

import numpy as np

from hosts.baselines.collective import (
    Collective,
    Floats,
    Reduced,
    Settings,
    Volume,
    block_bounds,
    prepared,
    segments,
)
from hosts.baselines.mesh import PeerTransport


def _shape(n: int) -> tuple[int, int]:
    """(P, R): the largest power of two at most n, and n - P."""
    p = 1 << (n.bit_length() - 1)
    return p, n - p


def _virtual(rank: int, rem: int) -> int | None:
    """The rank in the halving and doubling, or None for an even rank of the first
    2R (which hands its tensor to rank + 1)."""
    if rank < 2 * rem:
        return None if rank % 2 == 0 else rank // 2
    return rank - rem


def _real(v: int, rem: int) -> int:
    return 2 * v + 1 if v < rem else v + rem


def run(t: PeerTransport, values: Floats, settings: Settings) -> Reduced:
    acc = prepared(values)
    n, r = t.size, t.rank
    if n == 1 or acc.size == 0:
        return Reduced(acc, {"steps": 0, "extra_steps": 0})
    p, rem = _shape(n)
    seg = settings.segment
    whole = segments(0, acc.size, seg)
    v = _virtual(r, rem)
    if v is None:  # hand the tensor to r + 1, get the sum back at the end
        t.wait([t.isend(r + 1, acc[s]) for s in whole])
        t.wait([t.irecv(r + 1, acc[s]) for s in whole])
        return Reduced(acc, {"steps": 0, "extra_steps": 2})
    scratch = np.empty(acc.size, dtype=acc.dtype)
    extra = 0
    if r < 2 * rem:  # add the even neighbour's tensor
        _reduce_from(t, r - 1, acc, scratch, whole)
        extra = 1
    bounds = block_bounds(acc.size, p)
    lo, hi = 0, p  # the blocks this rank is responsible for
    steps = 0
    d = p // 2
    while d >= 1:  # recursive halving
        partner = _real(v ^ d, rem)
        mid = (lo + hi) // 2
        keep, give = ((lo, mid), (mid, hi)) if v & d == 0 else ((mid, hi), (lo, mid))
        sends = [t.isend(partner, acc[s])
                 for s in segments(bounds[give[0]], bounds[give[1]], seg)]
        _reduce_from(t, partner, acc, scratch,
                     segments(bounds[keep[0]], bounds[keep[1]], seg))
        t.wait(sends)
        lo, hi = keep
        steps += 1
        d //= 2
    d = 1
    while d < p:  # recursive doubling: [lo, hi) is d blocks, the partner's the next d
        partner = _real(v ^ d, rem)
        olo = lo ^ d
        reqs = [t.isend(partner, acc[s]) for s in segments(bounds[lo], bounds[hi], seg)]
        reqs += [t.irecv(partner, acc[s])
                 for s in segments(bounds[olo], bounds[olo + d], seg)]
        t.wait(reqs)
        lo, hi = min(lo, olo), min(lo, olo) + 2 * d
        steps += 1
        d *= 2
    if r < 2 * rem:  # the complete sum back to the even neighbour
        t.wait([t.isend(r - 1, acc[s]) for s in whole])
        extra += 1
    return Reduced(acc, {"steps": steps, "extra_steps": extra})


def _reduce_from(t: PeerTransport, peer: int, acc: Floats, scratch: Floats,
                 segs: list[slice]) -> None:
    """Receive ``peer``'s values of ``segs`` and add them to ``acc``, segment by
    segment as they arrive."""
    recvs = [t.irecv(peer, scratch[s]) for s in segs]
    for s, req in zip(segs, recvs, strict=True):
        t.wait([req])
        np.add(acc[s], scratch[s], out=acc[s])


def volume(workers: int, size: int, rank: int, settings: Settings) -> Volume:
    """The halving gives away everything but block v and receives the kept halves; the
    doubling sends the held ranges (the kept halves again) and receives what was
    given away. The extra step moves the whole tensor once each way."""
    if workers == 1:
        return Volume(0, 0)
    p, rem = _shape(workers)
    v = _virtual(rank, rem)
    if v is None:
        return Volume(size, size)
    bounds = block_bounds(size, p)
    kept = 0
    lo, hi = 0, p
    d = p // 2
    while d >= 1:
        lo, hi = (lo, lo + d) if v & d == 0 else (lo + d, hi)
        kept += bounds[hi] - bounds[lo]
        d //= 2
    moved = (size - (bounds[v + 1] - bounds[v])) + kept
    moved += size if rank < 2 * rem else 0
    return Volume(moved, moved)


COLLECTIVE = Collective("hd", "recursive halving and doubling (Rabenseifner), with "
                        "the extra step for N not a power of two", run, volume)
