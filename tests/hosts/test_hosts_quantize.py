"""Quantizer properties against the exact sum: no overflow for any input, the error
bound, exact integer sums (pow2), and the special values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hosts.quantize import (
    EXP_EMPTY,
    EXP_NONFINITE,
    INT32_MAX,
    Quantizer,
    Scaling,
    share,
)

K = 8
WORKERS = st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 31, 32])
FLOATS = st.floats(width=32, allow_nan=False, allow_infinity=False)


def aggregate(qz: Quantizer, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What N workers and a switch compute: xs has shape (N, C, K)."""
    agreed = np.max([qz.propose(x) for x in xs], axis=0)
    qs = np.array([qz.quantize(x, agreed) for x in xs], dtype=np.int64)
    assert np.abs(qs).max(initial=0) <= qz.q
    total = qs.sum(axis=0)
    assert np.abs(total).max(initial=0) <= INT32_MAX, "the int32 sum overflowed"
    return qz.dequantize(total.astype(np.int32), agreed), agreed


def exact_sum(xs: np.ndarray) -> np.ndarray:
    flat = xs.reshape(xs.shape[0], -1).astype(np.float64)
    return np.array([math.fsum(col) for col in flat.T]).reshape(xs.shape[1:])


def assert_within_bound(qz: Quantizer, xs: np.ndarray) -> None:
    got, agreed = aggregate(qz, xs)
    exact = exact_sum(xs)
    bound = qz.error_bound(agreed)[:, None]
    err = np.abs(got.astype(np.float64) - exact)
    with np.errstate(over="ignore"):
        rounding = np.spacing(np.abs(exact + bound).astype(np.float32)).astype(np.float64)
    allowed = bound + rounding + np.spacing(np.abs(exact))
    finite = np.abs(exact) + bound < float(np.finfo(np.float32).max)
    assert np.all(err[finite] <= allowed[finite]), (err - allowed).max()


@settings(max_examples=300, deadline=None)
@given(st.data(), WORKERS, st.sampled_from(list(Scaling)))
def test_any_finite_input_never_overflows_and_stays_within_the_bound(
        data: st.DataObject, n: int, scaling: Scaling) -> None:
    xs = data.draw(arrays(np.float32, (n, 3, K), elements=FLOATS))
    assert_within_bound(Quantizer(n, scaling), xs)


@settings(max_examples=200, deadline=None)
@given(st.data(), WORKERS, st.integers(-149, 127))
def test_blocks_of_one_magnitude_stay_within_the_bound(
        data: st.DataObject, n: int, exp: int) -> None:
    """Values near 2**exp (random mantissas, signs, some exact powers of two)."""
    mant = data.draw(arrays(np.float64, (n, 2, K), elements=st.floats(-1.99, 1.99)))
    xs = np.ldexp(mant, exp).astype(np.float32)
    assert_within_bound(Quantizer(n), xs)


@pytest.mark.parametrize("n", range(1, 33))
def test_bound_is_the_designs_up_to_2_to_the_minus_26(n: int) -> None:
    """Design: N**2 * 2**(e-1) / (2**31-1), 2**e the power of two above max |x|
    (whether max |x| == 2**e counts as below it or not)."""
    qz = Quantizer(n)
    for b in (-126, -3, 0, 1, 30, 128):
        ours = float(qz.error_bound([b - 2])[0])
        design = n * n * 2.0 ** (b - 1) / INT32_MAX
        assert design <= ours <= design * (1 + 2**-26)


def test_the_largest_values_fill_the_share_without_overflow() -> None:
    # max |x| = 2**b exactly: with SwitchML's exact factor (2**31-1)/(6 * 2**b) six
    # workers would send round(357913941.83) = 357913942 each and overflow; every
    # worker here sends exactly -Q, and N * Q fits.
    for n in range(1, 33):
        qz = Quantizer(n)
        xs = np.full((n, 1, K), np.float32(1 - 2**-24))
        xs[:, 0, 1] = -1.0
        got, agreed = aggregate(qz, xs)
        assert agreed[0] == 0 - 2
        assert qz.quantize(xs[0], agreed)[0, 1] == -share(n)
        assert got[0, 1] == -n


@settings(max_examples=200, deadline=None)
@given(st.data(), WORKERS)
def test_pow2_sums_fitting_integers_exactly(data: st.DataObject, n: int) -> None:
    qz = Quantizer(n, Scaling.POW2)
    limit = min(2**qz.log2_q, 2**24 // n)  # every |x| <= 2**L and |sum| <= 2**24
    ints = data.draw(arrays(np.int64, (n, 2, K), elements=st.integers(-limit, limit)))
    got, _ = aggregate(qz, ints.astype(np.float32))
    assert np.array_equal(got.astype(np.int64), ints.sum(axis=0))


def test_pow2_exact_integers_up_to_the_limit() -> None:
    qz = Quantizer(4, Scaling.POW2)
    big = 2**qz.log2_q  # 2**28: four of them sum to 2**30, a float32
    xs = np.array([[[big, -big, 1, 0, 3, -7, big, 5]]] * 4, dtype=np.float32)
    got, _ = aggregate(qz, xs)
    assert got[0].tolist() == [4 * big, -4 * big, 4, 0, 12, -28, 4 * big, 20]


def test_tight_sums_small_integers_exactly_when_the_bound_allows() -> None:
    # max |x| = 5 -> b = 3, bound 2*0.5*8/Q ~ 7.5e-9, far below half an ulp of 2..20
    qz = Quantizer(2)
    xs = np.array([[[1, 2, 3, 4, 5, 1, 1, 1]], [[1, 2, 3, 4, 5, 2, 3, 4]]], dtype=np.float32)
    got, _ = aggregate(qz, xs)
    assert got[0].tolist() == [2, 4, 6, 8, 10, 3, 4, 5]


def test_nonfinite_values_mark_the_block() -> None:
    qz = Quantizer(3)
    x = np.zeros((4, K), dtype=np.float32)
    x[1, 2] = np.nan
    x[2, 0] = np.inf
    x[3, 7] = -np.inf
    x[0, 0] = 1.0
    fields = qz.propose(x)
    assert fields.tolist() == [-2, EXP_NONFINITE, EXP_NONFINITE, EXP_NONFINITE]
    q = qz.quantize(x, fields)
    assert q[1:].tolist() == [[0] * K] * 3  # sent as zeros: the switch state stays sane
    out = qz.dequantize(q, fields)
    assert np.isnan(out[1:]).all() and out[0, 0] == 1.0


def test_zero_blocks_propose_the_empty_exponent_and_come_back_zero() -> None:
    qz = Quantizer(4)
    x = np.zeros((2, K), dtype=np.float32)
    x[1, 3] = -0.0
    fields = qz.propose(x)
    assert fields.tolist() == [EXP_EMPTY, EXP_EMPTY]
    assert qz.dequantize(qz.quantize(x, fields), fields).tolist() == [[0.0] * K] * 2


@pytest.mark.parametrize("n", [2, 3, 8])
def test_subnormal_sums_are_exact(n: int) -> None:
    rng = np.random.default_rng(n)
    tiny = rng.integers(-(2**20), 2**20, size=(n, 4, K)) * np.float64(2.0**-149)
    xs = tiny.astype(np.float32)
    assert np.all(np.abs(xs) < np.finfo(np.float32).tiny)
    got, agreed = aggregate(Quantizer(n), xs)
    assert (agreed == -128).all()
    assert np.array_equal(got.astype(np.float64), xs.astype(np.float64).sum(axis=0))


def test_huge_dynamic_range_in_one_block() -> None:
    qz = Quantizer(2)
    xs = np.zeros((2, 1, K), dtype=np.float32)
    xs[0, 0, :4] = [3e38, 1e-30, -1.0, 65504.0]
    xs[1, 0, :4] = [-1e38, 1e-30, 1.0, 1.0]
    got, agreed = aggregate(qz, xs)
    assert agreed[0] == 128 - 2
    assert abs(float(got[0, 0]) - 2e38) <= 2e38 * 2**-23
    bound = float(qz.error_bound(agreed)[0])  # ~ 3e29: small values are lost in it
    assert abs(float(got[0, 3]) - 65505.0) <= bound


def test_a_sum_beyond_float32_becomes_infinite() -> None:
    xs = np.full((2, 1, K), np.float32(3e38))
    xs[1, 0, 1] = -3e38
    got, _ = aggregate(Quantizer(2), xs)
    assert got[0, 0] == np.inf and got[0, 1] == 0


def test_bad_quantizer_settings_are_named() -> None:
    with pytest.raises(ValueError, match="number of workers 33"):
        Quantizer(33)
    with pytest.raises(ValueError, match="scaling 'fast'"):
        Quantizer(2, "fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exceeds the agreed exponent"):
        Quantizer(2).quantize(np.full((1, K), 8.0, np.float32), [0])
    with pytest.raises(ValueError, match="2 exponents for 1 blocks"):
        Quantizer(2).quantize(np.zeros((1, K), np.float32), [0, 0])
