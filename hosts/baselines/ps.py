"""Parameter server: one rank (``Settings.ps_host``) sums everyone's tensor and sends
the sum back.

Every other rank sends its whole tensor to the server and receives the whole sum:
S values each way. The server receives and sends (N-1)·S, so its link is the
bottleneck. The server adds the tensors in rank order, segment by segment, and sends
each segment of the sum back as soon as it has every rank's part of it.
"""

from __future__ import annotations

import numpy as np

from hosts.baselines.collective import (
    Collective,
    Floats,
    Reduced,
    Settings,
    Volume,
    prepared,
    segments,
)
from hosts.baselines.mesh import PeerTransport, Request


def run(t: PeerTransport, values: Floats, settings: Settings) -> Reduced:
    acc = prepared(values)
    n, r, server = t.size, t.rank, settings.ps_host
    segs = segments(0, acc.size, settings.segment)
    if n == 1 or not segs:
        return Reduced(acc, {"steps": 0})
    if r != server:
        reqs = [t.isend(server, acc[seg]) for seg in segs]
        reqs += [t.irecv(server, acc[seg]) for seg in segs]
        t.wait(reqs)
        return Reduced(acc, {"steps": 2})
    inbox = {w: np.empty_like(acc) for w in range(n) if w != server}
    recvs = {w: [t.irecv(w, x[seg]) for seg in segs] for w, x in inbox.items()}
    own = acc.copy()
    parts = [own if w == server else inbox[w] for w in range(n)]
    sends: list[Request] = []
    for i, seg in enumerate(segs):
        t.wait([recvs[w][i] for w in inbox])
        np.add(parts[0][seg], parts[1][seg], out=acc[seg])
        for x in parts[2:]:
            np.add(acc[seg], x[seg], out=acc[seg])
        sends += [t.isend(w, acc[seg]) for w in inbox]
    t.wait(sends)
    return Reduced(acc, {"steps": 2})


def volume(workers: int, size: int, rank: int, settings: Settings) -> Volume:
    if workers == 1:
        return Volume(0, 0)
    if rank == settings.ps_host:
        return Volume((workers - 1) * size, (workers - 1) * size)
    return Volume(size, size)


COLLECTIVE = Collective("ps", "parameter server: every rank sends its tensor to one "
                        "rank (--ps-host), which sends the sum back", run, volume)
