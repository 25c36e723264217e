"""The datasets ``ina train`` trains on, and how a step's mini-batch is dealt out.

* ``digits``: scikit-learn's bundled handwritten digits (1,797 images of 8x8 pixels,
  10 classes; it ships inside the package, nothing is downloaded). A fixed 80/20
  split (the same for every seed, so accuracies compare): 1,437 training and 360
  test images, features standardized with the training set's mean and spread.
* ``synthetic``: a seeded task of 10 Gaussian clusters in 32 dimensions (4,000
  training and 1,000 test points), made on the spot: no scikit-learn needed.

Batches. Every step draws one global mini-batch of ``workers * batch`` training
examples, without replacement within an epoch (the epoch's order is a permutation
seeded by the run's seed and the epoch), and worker ``rank`` takes its ``batch``
consecutive examples of it: the shards of one step never overlap, and the data a
worker sees is a pure function of (seed, step, workers, batch, rank). An epoch is
``train_size // (workers * batch)`` steps; the remainder of the permutation is left
out of that epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]
Labels = npt.NDArray[np.int64]

SPLIT_SEED = 20240601  # the digits split: fixed, whatever the run's seed
DIGITS_TEST = 360
SHUFFLE_STREAM = 1  # rng streams under the run's seed: 0 initializes, 1 shuffles


@dataclass(frozen=True)
class Dataset:
    name: str
    x_train: Floats
    y_train: Labels
    x_test: Floats
    y_test: Labels
    classes: int
    default_target: float  # the test accuracy a good model reaches (--target-accuracy)

    @property
    def features(self) -> int:
        return int(self.x_train.shape[1])

    @property
    def train_size(self) -> int:
        return int(self.x_train.shape[0])


def _standardize(train: npt.NDArray[np.float64], test: npt.NDArray[np.float64]
                 ) -> tuple[Floats, Floats]:
    mean = train.mean(axis=0)
    spread = train.std(axis=0)
    spread[spread == 0] = 1.0
    return (((train - mean) / spread).astype(np.float32),
            ((test - mean) / spread).astype(np.float32))


def _digits() -> Dataset:
    from sklearn.datasets import load_digits

    bunch = load_digits()
    x = np.asarray(bunch.data, dtype=np.float64)
    y = np.asarray(bunch.target, dtype=np.int64)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(y))
    test, train = order[:DIGITS_TEST], order[DIGITS_TEST:]
    x_train, x_test = _standardize(x[train], x[test])
    return Dataset("digits", x_train, y[train], x_test, y[test], 10, 0.95)


def _synthetic() -> Dataset:
    rng = np.random.default_rng(SPLIT_SEED)
    classes, dims = 10, 32
    centers = rng.normal(0.0, 1.0, (classes, dims))

    def draw(n: int) -> tuple[npt.NDArray[np.float64], Labels]:
        y = rng.integers(0, classes, n)
        return centers[y] + rng.normal(0.0, 1.6, (n, dims)), y.astype(np.int64)

    x_train, y_train = draw(4000)
    x_test, y_test = draw(1000)
    xs_train, xs_test = _standardize(x_train, x_test)
    return Dataset("synthetic", xs_train, y_train, xs_test, y_test, classes, 0.9)


DATASETS: dict[str, Callable[[], Dataset]] = {"digits": _digits, "synthetic": _synthetic}


@cache
def load_dataset(name: str) -> Dataset:
    """The dataset ``name`` (``ValueError`` naming the known ones otherwise)."""
    make = DATASETS.get(name)
    if make is None:
        raise ValueError(f"unknown dataset {name!r} (datasets: {', '.join(DATASETS)})")
    return make()


def steps_per_epoch(train_size: int, workers: int, batch: int) -> int:
    """Whole global batches in one pass over the training set (at least 1)."""
    return max(train_size // (workers * batch), 1)


def batch_indices(train_size: int, seed: int, step: int, workers: int, batch: int,
                  rank: int) -> npt.NDArray[np.int64]:
    """The training examples worker ``rank`` computes its gradient on at ``step``."""
    per_epoch = steps_per_epoch(train_size, workers, batch)
    epoch, within = divmod(step, per_epoch)
    order = np.random.default_rng([seed, SHUFFLE_STREAM, epoch]).permutation(train_size)
    start = within * workers * batch + rank * batch
    picked = order[start:start + batch]
    if len(picked) < batch:  # a global batch larger than the training set
        picked = np.resize(order, start + batch)[start:]
    return picked.astype(np.int64)
