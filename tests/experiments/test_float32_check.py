"""The check of the host-based algorithms: a float32 sum in any order is within
(gamma(N-1) + gamma64(N-1)) * sum|x| of the float64 sum. The bound holds for sums in
every order, and it is tight: an input exists whose float32 sum reaches it, and one
more unit in the last place is refused."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from experiments.algorithms import ALGORITHMS
from experiments.check import F32_UNIT_ROUNDOFF, check_float32_sum, float32_sum_allowance
from experiments.jobspec import JobSpec
from hosts.inputs import generate


def in_order(xs: list[np.ndarray], order: tuple[int, ...]) -> np.ndarray:
    acc = xs[order[0]].copy()
    for r in order[1:]:
        acc += xs[r]
    return acc


@pytest.mark.parametrize("dist", ["normal", "uniform", "wide", "zeros", "ints"])
def test_every_summation_order_is_within_the_bound(dist: str) -> None:
    xs = [generate(dist, 2000, 3, r) for r in range(5)]
    for order in itertools.permutations(range(5)):
        out = in_order(xs, order)
        result = check_float32_sum(xs, [out] * 5)
        assert result.ok, (order, result.message)
    pairwise = np.sum(np.array(xs), axis=0, dtype=np.float32)  # numpy's own order
    assert check_float32_sum(xs, [pairwise] * 5).ok


@pytest.mark.parametrize("n", [2, 3, 8, 32])
def test_the_bound_is_reached_and_one_ulp_more_fails(n: int) -> None:
    """1 + u + u + ... in float32: every addition ties and rounds back to 1, so the
    error is (N-1)u of a magnitude sum of 1 + (N-1)u: the bound, up to O(u)."""
    xs = [np.array([1.0], np.float32)] + [np.array([F32_UNIT_ROUNDOFF], np.float32)] * (n - 1)
    out = in_order(xs, tuple(range(n)))
    assert out[0] == 1.0
    result = check_float32_sum(xs, [out] * n)
    assert result.ok and not result.exact
    assert result.max_error_over_bound > 0.999
    below = np.nextafter(out, np.float32(0))  # one ulp further from the exact sum
    result = check_float32_sum(xs, [below] * n)
    assert not result.ok and not result.within_bound and result.bit_identical
    assert "element 0: result" in result.message


def test_one_worker_must_return_its_input_exactly() -> None:
    x = generate("normal", 100, 1, 0)
    assert float32_sum_allowance([x]).max() == 0.0
    assert check_float32_sum([x], [x.copy()]).ok
    off = x.copy()
    off.view(np.uint32)[5] += 1
    assert not check_float32_sum([x], [off]).ok


def test_zero_magnitude_allows_no_error_and_empty_tensors_pass() -> None:
    xs = [np.zeros(4, np.float32)] * 3
    assert check_float32_sum(xs, [np.zeros(4, np.float32)] * 3).ok
    assert not check_float32_sum(xs, [np.array([0, 0, 1e-45, 0], np.float32)] * 3).ok
    empty = [np.zeros(0, np.float32)] * 2
    assert check_float32_sum(empty, empty).ok


def test_workers_that_differ_fail_even_within_the_bound() -> None:
    """1 + u + u is 1 from the left and 1 + 2u from the right: both are within the
    bound, but workers that summed in different orders disagree."""
    u = F32_UNIT_ROUNDOFF
    xs = [np.array([1.0], np.float32), np.array([u], np.float32), np.array([u], np.float32)]
    left, right = in_order(xs, (0, 1, 2)), in_order(xs, (1, 2, 0))
    assert left[0] == 1.0 and right[0] == 1.0 + 2 * u
    result = check_float32_sum(xs, [left, right, left])
    assert not result.ok and result.within_bound and not result.bit_identical
    assert "workers [1] differ from worker 0" in result.message


def test_each_algorithm_names_its_check() -> None:
    job = JobSpec(1, ("h1", "h2"), 64, dist="ints")
    xs = job.inputs()
    exact = (xs[0] + xs[1]).astype(np.float32)
    for name, algorithm in ALGORITHMS.items():
        result = algorithm.check(job, xs, [exact, exact])
        assert result.ok, name
        bound = "quantization" if name == "ina" else "float32 summation"
        assert result.message.endswith(f"within the {bound} bound"), result.message
