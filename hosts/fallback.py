"""Finishing an in-network all-reduce on the hosts, when no switch tree can serve it.

The controller tells every worker to fall back from wire chunk ``start`` (the first
one some worker lacks): every worker has the RESULTs before it, so the agreed exponents
of the data chunks before ``start - base`` and the sums of those before ``start - base
- S``. The rest is done by a host-based algorithm (``hosts.baselines``: ring or a
parameter server) over TCP, on what the switch would have summed:

1. the exponents still missing: every worker's proposals for them, gathered by one
   all-reduce of int32 vectors that are zero outside the worker's own part, and their
   maximum taken, as the switch max-combines the exponent fields;
2. the sums still missing: every worker quantizes its chunks with those exponents and
   the int32 vectors are summed with wrap-around, as the switch's registers add.

So the result is the same bits the switch would have given: an all-reduce that falls
back is bit-identical to one that never left the switch, and within the same bound of
the exact sum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from hosts.baselines.collective import Floats, Settings
from hosts.baselines.mesh import PeerTransport
from hosts.baselines.registry import get_collective
from hosts.protocol import AllReduceRun


@dataclass
class FallbackStats:
    """What one fallback did: the data chunks summed on the hosts and the exponents
    agreed there."""

    algo: str
    start: int
    chunks: int = 0
    exponents: int = 0


def finish_on_hosts(run: AllReduceRun, start: int, mesh: PeerTransport, algo: str,
                    segment: int | None = None) -> FallbackStats:
    """Complete ``run`` from wire chunk ``start`` by ``algo`` over ``mesh`` (rank =
    the mesh's rank; every worker of the job calls it with the same ``start``)."""
    first, _ = run.progress()
    if not run.base <= start <= first:
        raise ValueError(f"fallback from wire chunk {start}: this worker's chunks before "
                         f"{first} are done and its run starts at {run.base}")
    collective = get_collective(algo)
    settings = Settings(segment=segment or Settings().segment)
    s, chunks, n = run.settings.window, run.chunks, run.num_workers
    e0 = min(chunks, max(0, start - run.base))  # first data chunk without its exponent
    d0 = min(chunks, max(0, start - run.base - s))  # first data chunk without its sum
    stats = FallbackStats(algo, start)
    if e0 < chunks:
        m = chunks - e0
        mine = np.zeros(n * m, dtype=np.int32)
        mine[mesh.rank * m:(mesh.rank + 1) * m] = np.asarray(run.proposals[e0:], np.int32)
        every = _summed(collective.run, mesh, mine, settings).reshape(n, m)
        run.exponents[e0:] = [int(x) for x in every.max(axis=0)]
        stats.exponents = m
    if d0 < chunks:
        quantized = run.quantizer.quantize_rows(run.prepared, slice(d0, chunks),
                                                run.exponents[d0:])
        values = np.ascontiguousarray(quantized, dtype=np.int32).reshape(-1)
        summed = _summed(collective.run, mesh, values, settings)
        run.sums[d0:] = summed.reshape(chunks - d0, -1)
        stats.chunks = chunks - d0
    run.complete()
    return stats


def _summed(run: Any, mesh: PeerTransport, values: np.ndarray, settings: Settings
            ) -> np.ndarray:
    """The collective's sum of int32 ``values``: the algorithms are written for float32
    and sum int32 as well, with wrap-around (``collective.prepared``)."""
    return np.asarray(run(mesh, cast(Floats, values), settings).values)
