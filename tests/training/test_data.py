"""The datasets and how a step's global mini-batch is dealt to the workers."""

from __future__ import annotations

import numpy as np
import pytest

from training.data import batch_indices, load_dataset, steps_per_epoch


def test_digits_ships_with_scikit_learn_and_splits_the_same_way_every_time() -> None:
    d = load_dataset("digits")
    assert (d.x_train.shape, d.x_test.shape) == ((1437, 64), (360, 64))
    assert d.x_train.dtype == np.float32 and d.classes == 10
    assert set(np.unique(d.y_test)) == set(range(10))
    assert abs(float(d.x_train.mean())) < 1e-5  # standardized on the training set
    load_dataset.cache_clear()
    again = load_dataset("digits")
    np.testing.assert_array_equal(again.x_test, d.x_test)


def test_synthetic_is_seeded() -> None:
    d = load_dataset("synthetic")
    assert (d.x_train.shape, d.x_test.shape, d.classes) == ((4000, 32), (1000, 32), 10)
    load_dataset.cache_clear()
    np.testing.assert_array_equal(load_dataset("synthetic").y_train, d.y_train)


def test_unknown_dataset() -> None:
    with pytest.raises(ValueError, match="unknown dataset 'mnist' .datasets: digits, "
                                         "synthetic"):
        load_dataset("mnist")


@pytest.mark.parametrize("workers,batch", [(4, 32), (3, 10), (1, 64)])
def test_shards_of_a_step_are_disjoint_and_an_epoch_sees_every_example_once(
        workers: int, batch: int) -> None:
    size = 1437
    per_epoch = steps_per_epoch(size, workers, batch)
    assert per_epoch == size // (workers * batch)
    seen: list[int] = []
    for step in range(per_epoch):
        shards = [batch_indices(size, 5, step, workers, batch, r) for r in range(workers)]
        assert all(len(s) == batch for s in shards)
        step_rows = np.concatenate(shards)
        assert len(set(step_rows.tolist())) == workers * batch
        seen += step_rows.tolist()
    assert len(set(seen)) == len(seen) == per_epoch * workers * batch
    # the next epoch is another permutation
    nxt = batch_indices(size, 5, per_epoch, workers, batch, 0)
    assert not np.array_equal(nxt, batch_indices(size, 5, 0, workers, batch, 0))


def test_batches_are_a_function_of_seed_step_and_rank() -> None:
    a = batch_indices(1437, 1, 7, 4, 32, 2)
    np.testing.assert_array_equal(a, batch_indices(1437, 1, 7, 4, 32, 2))
    assert not np.array_equal(a, batch_indices(1437, 2, 7, 4, 32, 2))
    assert not np.array_equal(a, batch_indices(1437, 1, 7, 4, 32, 3))
