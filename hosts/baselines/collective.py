"""What every host-based all-reduce algorithm shares: its settings, its result, how a
tensor is cut into blocks and segments, and the ``Collective`` record the registry
holds.

An algorithm is a ``run(transport, values, settings)`` that returns the float32 sum
over all ranks of ``values`` (1-D), and a ``volume(workers, size, rank, settings)``
model: the float32 values the rank sends and receives, exactly, which the tests hold
the measured byte counts to.

Every element of the sum is reduced on one rank, in an order fixed by the schedule,
and copied from there to the others: every rank ends with the same bits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from hosts.baselines.mesh import PeerTransport

Floats = npt.NDArray[np.float32]
DEFAULT_SEGMENT = 16384
"""Values per message (64 KiB): a block is sent as segments, and a rank reduces and
forwards each segment as it arrives rather than waiting for the whole block."""


@dataclass(frozen=True)
class Settings:
    segment: int = DEFAULT_SEGMENT  # float32 values per message
    ps_host: int = 0  # the parameter server's rank (``ps``)

    def check(self, workers: int) -> None:
        """Raise ``ValueError`` naming the first bad setting."""
        if not isinstance(self.segment, int) or self.segment < 1:
            raise ValueError(f"segment={self.segment!r} must be a positive number of values")
        if not isinstance(self.ps_host, int) or not 0 <= self.ps_host < workers:
            raise ValueError(f"ps_host={self.ps_host!r} is not a rank in [0, {workers})")


@dataclass
class Reduced:
    """The sum, and the algorithm's own counters: ``steps``, the rounds of
    messages on the critical path, and what else the schedule did."""

    values: Floats
    counters: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Volume:
    """float32 values one rank sends and receives in one all-reduce."""

    sent: int
    received: int


Run = Callable[[PeerTransport, Floats, Settings], Reduced]
Model = Callable[[int, int, int, Settings], Volume]


@dataclass(frozen=True)
class Collective:
    name: str
    summary: str  # one line for --help and the README
    run: Run
    volume: Model


def block_bounds(size: int, parts: int) -> list[int]:
    """``parts + 1`` offsets that cut ``size`` values into ``parts`` blocks whose
    sizes differ by at most one (the first ``size % parts`` are the longer ones)."""
    base, extra = divmod(size, parts)
    bounds = [0]
    for b in range(parts):
        bounds.append(bounds[-1] + base + (1 if b < extra else 0))
    return bounds


def segments(lo: int, hi: int, segment: int) -> list[slice]:
    """``[lo, hi)`` in slices of at most ``segment`` values (none if empty)."""
    return [slice(s, min(s + segment, hi)) for s in range(lo, hi, segment)]


def prepared(values: Floats) -> Floats:
    """A private contiguous 1-D copy of ``values`` to reduce into: float32, or int32,
    whose sums wrap around as a switch's registers do (``hosts.fallback`` sums the
    quantized integers of an in-network job that way)."""
    if not isinstance(values, np.ndarray) or values.dtype not in (np.float32, np.int32):
        raise TypeError("all-reduce: expected a float32 (or int32) numpy array")
    return np.array(values.reshape(-1), dtype=values.dtype, copy=True, order="C")
