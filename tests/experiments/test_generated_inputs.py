"""Generated inputs: deterministic per (dist, size, seed, rank), with the promised shapes."""

from __future__ import annotations

import numpy as np
import pytest

from hosts.inputs import DISTRIBUTIONS, InputError, exact_sum, generate


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_same_parameters_same_tensor_other_rank_other_tensor(dist: str) -> None:
    a = generate(dist, 1000, 7, 0)
    assert a.dtype == np.float32 and a.shape == (1000,)
    assert np.array_equal(a.view(np.uint32), generate(dist, 1000, 7, 0).view(np.uint32))
    assert not np.array_equal(a, generate(dist, 1000, 7, 1))
    assert not np.array_equal(a, generate(dist, 1000, 8, 0))
    assert np.all(np.isfinite(a))


def test_ints_are_small_integers() -> None:
    x = generate("ints", 10_000, 1)
    assert np.array_equal(x, np.round(x)) and np.abs(x).max() <= 1000


def test_zeros_have_exact_zeros_and_a_zero_block() -> None:
    x = generate("zeros", 10_000, 1, 3)
    assert np.all(x[:128] == 0)
    assert 0.4 < np.mean(x == 0) < 0.6


def test_wide_blocks_share_their_scale_across_workers() -> None:
    xs = [generate("wide", 4096, 2, r) for r in range(4)]
    peaks = np.abs(exact_sum(xs)).reshape(-1, 256).max(axis=1)
    assert peaks.max() / peaks.min() > 2.0**60
    for x in xs:
        run = np.abs(x[:256]).astype(np.float64)
        assert run.max() / run.min() > 2.0**10  # values within a run differ widely too


def test_exact_sum_is_the_float64_sum() -> None:
    xs = [np.array([1.0, 2.0**-30], np.float32), np.array([2.0**30, 1.0], np.float32)]
    assert exact_sum(xs).tolist() == [1.0 + 2.0**30, 1.0 + 2.0**-30]


@pytest.mark.parametrize(("args", "message"), [
    (("gauss", 10, 0), "unknown distribution 'gauss' (known: normal, uniform, wide"),
    (("normal", 0, 0), "size 0 is not in [1, "),
    (("normal", 10, -1), "seed -1 must be a non-negative integer"),
])
def test_bad_parameters_say_which(args: tuple[str, int, int], message: str) -> None:
    with pytest.raises(InputError) as e:
        generate(*args)
    assert message in str(e.value)
