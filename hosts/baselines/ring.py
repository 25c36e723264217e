"""Ring all-reduce (as in Gloo, NCCL and Horovod): reduce-scatter, then all-gather.

The tensor is cut into N blocks. Rank r talks only to its neighbours: it sends to
r + 1 and receives from r - 1.

- Reduce-scatter, steps s = 0 .. N-2: rank r sends block r - s and receives block
  r - s - 1, which it adds to its own copy of that block. Block b starts as rank b's
  values and picks up one rank's values per hop, so after N - 1 hops rank b - 1 holds
  its complete sum (rank r ends with block r + 1).
- All-gather, steps s = 0 .. N-2: rank r sends the complete block it holds and
  receives block r - s, which it keeps and passes on.

2(N-1) steps of S/N values each: every rank sends and receives 2(N-1)/N of the tensor.
The steps are pipelined in segments: a segment that arrives is reduced (or kept) and
forwarded at once, so the next rank works on it while the rest of the block is still
on the way, and one block is in the sockets at a time rather than one step.
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
    right, left = (r + 1) % n, (r - 1) % n
    bounds = block_bounds(acc.size, n)

    def block(b: int) -> list[slice]:
        b %= n
        return segments(bounds[b], bounds[b + 1], settings.segment)

    scratch = np.empty(bounds[1] - bounds[0], dtype=acc.dtype)  # the longest block
    sends: list[Request] = [t.isend(right, acc[seg]) for seg in block(r)]
    # Reduce-scatter: add each arriving segment of block r - s - 1 and pass it on; at
    # the last step the block is complete and passing it on starts the all-gather.
    for s in range(n - 1):
        segs = block(r - s - 1)
        lo = segs[0].start if segs else 0
        recvs = [t.irecv(left, scratch[seg.start - lo:seg.stop - lo]) for seg in segs]
        for seg, req in zip(segs, recvs, strict=True):
            t.wait([req])
            np.add(acc[seg], scratch[seg.start - lo:seg.stop - lo], out=acc[seg])
            sends.append(t.isend(right, acc[seg]))
    # All-gather: keep each arriving segment of the complete block r - s in place, and
    # pass it on unless the next rank is the one that completed it.
    for s in range(n - 1):
        segs = block(r - s)
        recvs = [t.irecv(left, acc[seg]) for seg in segs]
        for seg, req in zip(segs, recvs, strict=True):
            t.wait([req])
            if s < n - 2:
                sends.append(t.isend(right, acc[seg]))
    t.wait(sends)
    return Reduced(acc, {"steps": 2 * (n - 1)})


def volume(workers: int, size: int, rank: int, settings: Settings) -> Volume:
    """Rank r sends every block but r + 1 (reduce-scatter) and every block but r + 2
    (all-gather); it receives every block but r, then every block but r + 1."""
    if workers == 1:
        return Volume(0, 0)
    bounds = block_bounds(size, workers)

    def length(b: int) -> int:
        b %= workers
        return bounds[b + 1] - bounds[b]

    return Volume(2 * size - length(rank + 1) - length(rank + 2),
                  2 * size - length(rank) - length(rank + 1))


COLLECTIVE = Collective("ring", "ring all-reduce: reduce-scatter then all-gather over "
                        "the neighbours, 2(N-1) steps of S/N", run, volume)
