"""Generated all-reduce inputs, shared by ``ina agent`` and ``ina run``.

A worker's input is a pure function of (distribution, size, seed, rank), so the parent
of a run can recompute every worker's tensor and the exact float64 sum without moving
tensors between Mininet hosts. Distributions:

* ``normal``: standard normal;
* ``uniform``: uniform in [-1, 1);
* ``wide``: random signs and magnitudes ``2**(s + u)``: s uniform in [-60, 60], one per
  run of 256 values and the same on every worker (so blocks differ in scale by up to
  2**120), u uniform in [-12, 12]
  per value (so values within a block differ by up to 2**24);
* ``zeros``: normal values with about half of them exactly 0.0 (and whole zero blocks);
* ``ints``: integers in [-1000, 1000], which ``pow2`` scaling sums exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]
MAX_SIZE = 1 << 28  # a quarter of a gibi-value: more is surely a typo
WIDE_RUN = 256


def _normal(rng: np.random.Generator, shared: np.random.Generator, n: int
            ) -> Floats:
    return rng.standard_normal(n, dtype=np.float32)


def _uniform(rng: np.random.Generator, shared: np.random.Generator, n: int
             ) -> Floats:
    return rng.uniform(-1.0, 1.0, n).astype(np.float32)


def _wide(rng: np.random.Generator, shared: np.random.Generator, n: int) -> Floats:
    runs = -(-n // WIDE_RUN)
    scale = np.repeat(shared.uniform(-60.0, 60.0, runs), WIDE_RUN)[:n]
    mags = np.exp2(scale + rng.uniform(-12.0, 12.0, n))
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return (mags * signs).astype(np.float32)


def _zeros(rng: np.random.Generator, shared: np.random.Generator, n: int
           ) -> Floats:
    x = rng.standard_normal(n, dtype=np.float32)
    x[rng.random(n) < 0.5] = 0.0
    x[: min(n, 128)] = 0.0  # at least one whole zero block for every K
    return x


def _ints(rng: np.random.Generator, shared: np.random.Generator, n: int
          ) -> Floats:
    return rng.integers(-1000, 1001, n).astype(np.float32)


Make = Callable[[np.random.Generator, np.random.Generator, int], Floats]
DISTRIBUTIONS: dict[str, Make] = {
    "normal": _normal,
    "uniform": _uniform,
    "wide": _wide,
    "zeros": _zeros,
    "ints": _ints,
}


class InputError(ValueError):
    """A bad generator parameter; the message names it."""


def generate(dist: str, size: int, seed: int, rank: int = 0) -> Floats:
    """Worker ``rank``'s float32 input of ``size`` values."""
    make = DISTRIBUTIONS.get(dist)
    if make is None:
        raise InputError(f"unknown distribution {dist!r} (known: {', '.join(DISTRIBUTIONS)})")
    if not isinstance(size, int) or not 1 <= size <= MAX_SIZE:
        raise InputError(f"size {size!r} is not in [1, {MAX_SIZE}]")
    if not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed {seed!r} must be a non-negative integer")
    if not isinstance(rank, int) or rank < 0:
        raise InputError(f"rank {rank!r} must be a non-negative integer")
    return make(np.random.default_rng([seed, rank]), np.random.default_rng([seed]), size)


def exact_sum(inputs: list[Floats]) -> npt.NDArray[np.float64]:
    """The element-wise float64 sum: the reference the quantization error bound is
    stated against (see ``hosts.quantize``)."""
    total = np.zeros(inputs[0].shape, dtype=np.float64)
    for x in inputs:
        total += x.astype(np.float64)
    return total
