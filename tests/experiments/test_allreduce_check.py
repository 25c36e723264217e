"""The all-reduce check against results computed the way the switch computes them."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.check import check_allreduce
from hosts.inputs import generate
from hosts.quantize import Quantizer, Scaling

K = 64


def switch_sum(inputs: list[np.ndarray], scaling: Scaling) -> np.ndarray:
    """What every worker gets: agreed exponents, quantize, int32 sum, dequantize."""
    n, size = len(inputs), inputs[0].size
    qz = Quantizer(n, scaling)
    chunks = -(-size // K)
    blocks = []
    for x in inputs:
        b = np.zeros((chunks, K), np.float32)
        b.reshape(-1)[:size] = x
        blocks.append(b)
    fields = np.max([qz.propose(b) for b in blocks], axis=0)
    total = np.sum([qz.quantize(b, fields).astype(np.int64) for b in blocks], axis=0)
    return qz.dequantize(total.astype(np.int32), fields).reshape(-1)[:size]


@pytest.mark.parametrize("dist", ["normal", "wide", "zeros"])
@pytest.mark.parametrize("n", [2, 3, 8])
def test_switch_results_pass(dist: str, n: int) -> None:
    inputs = [generate(dist, 1000, 5, r) for r in range(n)]
    out = switch_sum(inputs, Scaling.TIGHT)
    result = check_allreduce(inputs, [out.copy() for _ in range(n)], K, Scaling.TIGHT)
    assert result.ok and result.bit_identical and result.within_bound, result
    assert result.max_error_over_bound <= 1.0


def test_integers_with_pow2_are_exact() -> None:
    inputs = [generate("ints", 5000, 1, r) for r in range(3)]
    result = check_allreduce(inputs, [switch_sum(inputs, Scaling.POW2)] * 3, K, Scaling.POW2)
    assert result.ok and result.exact


def test_one_worker_one_bit_off_is_not_identical() -> None:
    inputs = [generate("normal", 500, 2, r) for r in range(4)]
    out = switch_sum(inputs, Scaling.TIGHT)
    odd = out.copy()
    odd.view(np.uint32)[17] ^= 1
    result = check_allreduce(inputs, [out, out, odd, out], K, Scaling.TIGHT)
    assert not result.ok and not result.bit_identical
    assert "workers [2] differ from worker 0" in result.message


def test_an_error_beyond_the_bound_fails_and_names_the_element() -> None:
    inputs = [generate("normal", 500, 2, r) for r in range(4)]
    out = switch_sum(inputs, Scaling.TIGHT)
    out[321] += 1e-3
    result = check_allreduce(inputs, [out] * 4, K, Scaling.TIGHT)
    assert not result.ok and result.bit_identical and not result.within_bound
    assert result.worst_index == 321 and "element 321" in result.message


def test_nan_result_fails() -> None:
    inputs = [generate("normal", 100, 2, r) for r in range(2)]
    out = switch_sum(inputs, Scaling.TIGHT)
    out[3] = np.nan
    assert not check_allreduce(inputs, [out, out], K, Scaling.TIGHT).ok


def test_wrong_shape_is_reported() -> None:
    inputs = [generate("normal", 100, 2, r) for r in range(2)]
    result = check_allreduce(inputs, [np.zeros(99, np.float32)] * 2, K, Scaling.TIGHT)
    assert not result.ok and "worker 0: result has shape (99,)" in result.message
