"""Float32 blocks <-> int32 blocks with a shared, switch-negotiated exponent.

Every worker cuts its tensor into blocks of K elements (one block per chunk). For a
block it *proposes* an exponent, the switch max-combines the proposals of all workers,
and every worker then scales its block by the same factor ``f`` derived from the agreed
exponent, rounds to int32, and the switch adds the N int32 blocks.

The bound exponent ``b`` of a block is the smallest integer with ``max |x| <= 2**b``
(clamped to [-126, 128]: float32 needs no more). On the wire the exponent field is the
int8 ``b - 2`` (so [-128, 126]); the field value 127, the largest, means "a worker
has a NaN or an infinity in this block", and max-combining spreads it to every worker.

Scaling modes (every worker of a job must use the same):

* ``tight`` (default): ``f = Q / 2**b`` with ``Q = floor((2**31 - 1) / N)``. This is
  SwitchML's ``f = (2**31 - 1) / (N * 2**e)`` with the numerator rounded down to an
  integer, which is what makes overflow impossible: every ``|x * f| <= Q``, rounding
  to nearest cannot go past the integer Q, and ``N * Q <= 2**31 - 1``. (With the exact
  SwitchML factor and this inclusive bound, six workers whose max |x| is exactly 2**b
  would each send round(357913941.83) = 357913942, and overflow.) The bound is
  inclusive so that powers of two, common in integer data, get the finer scale. The
  rounding is computed exactly in integers, so the error per
  element and worker is at most 0.5 / f and the error of the sum at most
  ``N * 0.5 / f = N * 2**(b-1) / Q``: the design's bound ``N**2 * 2**(e-1) / (2**31-1)``
  (``2**e`` the power of two bounding max |x|, so ``b <= e``) times ``(2**31-1)/(N*Q)``,
  at most 1 + 2**-26 -- plus the rounding of the result to float32.
* ``pow2``: ``f = 2**(L - b)`` with ``L = floor(log2 Q)``. Up to twice the error of
  ``tight``, but the scaling is exact, so **integer-valued inputs are summed exactly**
  whenever every ``|x| <= 2**L`` (L = 30 - ceil(log2 N) for N a power of two; 29 for
  N = 3) and the sum is representable in float32 (e.g. ``|sum| <= 2**24``): every
  ``x * f`` is then an integer, the int32 sum is exact, and dividing by a power of two
  is exact. ``tight`` returns integer sums exactly only when its error bound is below
  half a float32 ulp of the sum, which fails for sums near 0 (cancellation).

Special values: zeros quantize to 0 in any block; subnormal inputs are handled by the
clamp ``b >= -126`` (the resolution, 2**-126 / Q, is finer than float32's); a result
whose magnitude exceeds float32's range becomes +-inf, as a float32 sum would. NaN and
+-inf inputs make the block's agreed exponent ``NONFINITE``: every worker sends zeros
for that block (keeping the switch state consistent), the block's result is NaN and
the all-reduce reports the failure (``hosts.worker.NonFiniteInputError``).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

INT32_MAX = 2**31 - 1
FIELD_OFFSET = 2
"""Exponent field = bound exponent b - FIELD_OFFSET."""
BOUND_EXP_MIN = -126
BOUND_EXP_MAX = 128
EXP_EMPTY = BOUND_EXP_MIN - FIELD_OFFSET  # -128: an all-zero (or absent) block
EXP_NONFINITE = 127
MAX_WORKERS = 32

Floats = npt.NDArray[np.float32]
Ints = npt.NDArray[np.int32]
Fields = npt.NDArray[np.int8]


@dataclass(frozen=True)
class Prepared:
    """Blocks split for quantization, 10 bytes per value (18 with pow2): the finite
    values (float64, pow2 scaling only), and for tight scaling, with each value written
    x = m * 2**(e - 24) (m a 24-bit integer), ``scaled`` = m * Q (less 1 if negative)
    and ``shift`` = FIELD_OFFSET + 23 - e (huge for zeros). The value quantized for
    the exponent field f is then ``((scaled >> (f + shift)) + 1) >> 1``: x * Q / 2**b
    rounded half away from zero (``quantize_rows``)."""

    x: npt.NDArray[np.float64]
    scaled: npt.NDArray[np.int64]
    shift: npt.NDArray[np.int16]


class Scaling(enum.Enum):
    TIGHT = "tight"
    POW2 = "pow2"


def share(n: int) -> int:
    """Q: the largest |int32| one of ``n`` workers may contribute."""
    return INT32_MAX // n


@dataclass(frozen=True)
class Quantizer:
    """The block quantizer of one job: ``n`` workers, one scaling mode."""

    n: int
    scaling: Scaling = Scaling.TIGHT

    def __post_init__(self) -> None:
        if not isinstance(self.n, int) or not 1 <= self.n <= MAX_WORKERS:
            raise ValueError(f"quantizer: number of workers {self.n!r} is not in "
                             f"[1, {MAX_WORKERS}]")
        if not isinstance(self.scaling, Scaling):
            raise ValueError(f"quantizer: scaling {self.scaling!r} is not one of "
                             f"{[s.value for s in Scaling]}")

    @property
    def q(self) -> int:
        return share(self.n)

    @property
    def log2_q(self) -> int:
        return self.q.bit_length() - 1

    # -------------------------------------------------------------- exponents

    @staticmethod
    def propose(blocks: Floats) -> Fields:
        """Exponent field proposals, one per row of ``blocks`` (shape (C, K))."""
        blocks = np.asarray(blocks)
        if blocks.ndim != 2:
            raise ValueError(f"quantizer: blocks must be 2-D (chunks, K), got {blocks.shape}")
        if blocks.shape[0] == 0:
            return np.zeros(0, dtype=np.int8)
        if blocks.shape[1] == 0:
            return np.full(blocks.shape[0], EXP_EMPTY, dtype=np.int8)
        peak = np.abs(blocks).max(axis=1).astype(np.float64)
        finite = np.isfinite(peak)
        frac, ex = np.frexp(np.where(finite, peak, 0.0))
        b = np.where(frac == 0.5, ex - 1, ex)  # max |x| <= 2**b, the least such b
        b = np.where(peak == 0, BOUND_EXP_MIN, b)
        b = np.clip(b, BOUND_EXP_MIN, BOUND_EXP_MAX)
        fields = np.where(finite, b - FIELD_OFFSET, EXP_NONFINITE)
        return fields.astype(np.int8)

    @staticmethod
    def bound_exponent(fields: npt.ArrayLike) -> npt.NDArray[np.int64]:
        return np.asarray(fields, dtype=np.int64) + FIELD_OFFSET

    def scale(self, fields: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The factor f of each block (NaN for a NONFINITE field)."""
        f = np.asarray(fields, dtype=np.int64)
        b = f + FIELD_OFFSET
        if self.scaling is Scaling.TIGHT:
            out = self.q / np.ldexp(1.0, b)
        else:
            out = np.ldexp(1.0, self.log2_q - b)
        return np.where(f == EXP_NONFINITE, np.nan, out)

    def error_bound(self, fields: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Largest |error| of an N-way sum per element, before rounding to float32."""
        return self.n * 0.5 / self.scale(fields)

    # ---------------------------------------------------------- quantization

    def prepare(self, blocks: Floats) -> Prepared:
        """Split every value into mantissa and exponent once, so that quantizing a row
        for its agreed exponent later costs a few integer operations. The split reads
        the float32 bits: x = m * 2**(max(E, 1) - 150) for the biased exponent E and
        the 23 stored bits with the implicit one of a normal number (subnormals too);
        NaN and infinities count as zeros."""
        x = np.ascontiguousarray(blocks, dtype=np.float32)
        if x.ndim != 2:
            raise ValueError(f"quantizer: blocks must be 2-D (chunks, K), got {x.shape}")
        if self.scaling is Scaling.POW2:
            x64 = np.where(np.isfinite(x), x, np.float32(0)).astype(np.float64)
            return Prepared(x64, np.zeros((0, 0), np.int64), np.zeros((0, 0), np.int16))
        bits = x.view(np.int32)
        biased = bits >> 23
        biased &= 0xFF
        mant = bits & 0x7FFFFF
        mant |= np.left_shift(biased != 0, 23, dtype=np.int32)
        special = biased == 0xFF
        if special.any():
            mant[special] = 0
        negative = bits < 0
        scaled = mant.astype(np.int64)
        scaled *= self.q
        np.negative(scaled, out=scaled, where=negative)
        scaled -= negative
        # x = mant * 2**(e - 24) with e = max(E, 1) - 126: shift = FIELD_OFFSET + 23 - e
        shift = np.maximum(biased, 1).astype(np.int16)
        np.subtract(FIELD_OFFSET + 149, shift, out=shift)
        return Prepared(np.zeros((0, 0)), scaled, shift)

    def quantize(self, blocks: Floats, fields: npt.ArrayLike) -> Ints:
        """int32 blocks for the agreed ``fields`` (one per row); NONFINITE rows -> 0.

        Every ``|x|`` must be ``<= 2**b`` for its row's bound exponent b (true for the
        agreed exponent, a maximum over all proposals); a value beyond raises."""
        x = np.asarray(blocks, dtype=np.float32)
        prep = self.prepare(x)
        f = np.asarray(fields, dtype=np.int64).reshape(-1)
        if f.shape[0] != x.shape[0]:
            raise ValueError(f"quantizer: {f.shape[0]} exponents for {x.shape[0]} blocks")
        b = np.where(f == EXP_NONFINITE, BOUND_EXP_MAX, f + FIELD_OFFSET).reshape(-1, 1)
        with np.errstate(invalid="ignore"):
            beyond = np.abs(x.astype(np.float64)) > np.ldexp(1.0, b)
        if np.any(beyond & np.isfinite(x)):
            raise ValueError("quantizer: a value exceeds the agreed exponent's bound")
        return self.quantize_rows(prep, slice(0, f.shape[0]), f).astype(np.int32)

    def quantize_rows(self, prep: Prepared, rows: slice | npt.NDArray[np.intp],
                      fields: Sequence[int] | npt.NDArray[np.integer]
                      ) -> npt.NDArray[np.int64]:
        """The prepared blocks ``rows`` (a slice or an index array), one agreed field
        per row, as int64 that fit int32 (the hot path: no checks). A worker quantizes
        what a batch of RESULTs allows at once, in a handful of numpy calls: with eight
        agents and a switch on two cores, each call costs microseconds, the values
        little."""
        f = np.array(fields, dtype=np.int64)[:, None]
        if self.scaling is Scaling.POW2:
            out = np.rint(np.ldexp(prep.x[rows], self.log2_q - FIELD_OFFSET - f))  # exact
            q = out.astype(np.int64)
        else:
            q = np.right_shift(prep.scaled[rows], prep.shift[rows] + f)
            q += 1
            q >>= 1
        if EXP_NONFINITE in fields:
            q[np.flatnonzero(f == EXP_NONFINITE)] = 0
        return q

    def dequantize(self, sums: npt.NDArray[np.integer], fields: npt.ArrayLike) -> Floats:
        """float32 blocks from the switch's int32 sums; NONFINITE rows -> NaN. The
        sum times 2**b is exact in float64, so one division rounds (tight)."""
        f = np.asarray(fields, dtype=np.int64).reshape(-1, 1)
        out = np.asarray(sums).astype(np.float64)
        if self.scaling is Scaling.TIGHT:
            out *= np.ldexp(1.0, f + FIELD_OFFSET)
            out /= self.q
        else:
            out *= np.ldexp(1.0, f + FIELD_OFFSET - self.log2_q)
        bad = f.reshape(-1) == EXP_NONFINITE
        if bad.any():
            out[bad] = np.nan
        with np.errstate(over="ignore"):
            return out.astype(np.float32)
