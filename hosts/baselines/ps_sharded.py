"""Sharded parameter server (BytePS, and ATP's fallback): every rank serves 1/N of the
tensor.

The tensor is cut into N blocks and rank b is the server of block b: every rank sends
block b to rank b, which adds the N parts in rank order and sends the sum of block b
back to every rank. Each rank sends and receives 2(N-1)/N of the tensor, like the
ring, but in two all-to-all rounds instead of 2(N-1) neighbour steps; a server sends a
segment of its block's sum as soon as it has every rank's part of it.
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
from hosts.baselines.mesh import PeerTransport, Request


def run(t: PeerTransport, values: Floats, settings: Settings) -> Reduced:
    acc = prepared(values)
    n, r = t.size, t.rank
    if n == 1 or acc.size == 0:
        return Reduced(acc, {"steps": 0})
    bounds = block_bounds(acc.size, n)
    others = [p for p in range(n) if p != r]

    def block(b: int) -> list[slice]:
        return segments(bounds[b], bounds[b + 1], settings.segment)

    # Per peer stream, the order is: my part of its block, then its block's sum.
    sends: list[Request] = [t.isend(b, acc[seg]) for b in others for seg in block(b)]
    mine = block(r)
    lo, hi = bounds[r], bounds[r + 1]
    inbox = {w: np.empty(hi - lo, dtype=acc.dtype) for w in others}
    parts = {w: [t.irecv(w, inbox[w][seg.start - lo:seg.stop - lo]) for seg in mine]
             for w in others}
    sums = [t.irecv(b, acc[seg]) for b in others for seg in block(b)]
    own = acc[lo:hi].copy()
    ordered = [own if w == r else inbox[w] for w in range(n)]
    for i, seg in enumerate(mine):
        t.wait([parts[w][i] for w in others])
        local = slice(seg.start - lo, seg.stop - lo)
        np.add(ordered[0][local], ordered[1][local], out=acc[seg])
        for x in ordered[2:]:
            np.add(acc[seg], x[local], out=acc[seg])
        sends += [t.isend(w, acc[seg]) for w in others]
    t.wait([*sums, *sends])
    return Reduced(acc, {"steps": 2})


def volume(workers: int, size: int, rank: int, settings: Settings) -> Volume:
    """Rank r sends its part of every other block and its own block's sum N-1 times;
    it receives N-1 parts of its block and the sum of every other block."""
    if workers == 1:
        return Volume(0, 0)
    bounds = block_bounds(size, workers)
    own = bounds[rank + 1] - bounds[rank]
    moved = size - own + (workers - 1) * own
    return Volume(moved, moved)


COLLECTIVE = Collective("ps-sharded", "sharded parameter server: rank b sums block b "
                        "of N and sends it to every rank", run, volume)
