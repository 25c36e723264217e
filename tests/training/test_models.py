"""The numpy models: gradients against finite differences, the flat layout, seeded
initialization and evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from training.data import load_dataset
from training.models import MLP, MODELS, get_model


def finite_difference(model: MLP, flat: np.ndarray, x: np.ndarray, y: np.ndarray,
                      index: int, h: float = 1e-6) -> float:
    up, down = flat.copy(), flat.copy()
    up[index] += h
    down[index] -= h
    return (model.loss_and_grad(up, x, y)[0] - model.loss_and_grad(down, x, y)[0]) / (2 * h)


@pytest.mark.parametrize("sizes", [(5, 3), (6, 7, 4), (5, 8, 6, 3)])
def test_gradient_matches_finite_differences(sizes: tuple[int, ...]) -> None:
    rng = np.random.default_rng(7)
    model = MLP(sizes)
    flat = model.init(3).astype(np.float64) + rng.normal(0, 0.05, model.size)
    x = rng.normal(size=(9, sizes[0]))
    y = rng.integers(0, sizes[-1], 9)
    _, grad = model.loss_and_grad(flat, x, y)
    assert grad.dtype == np.float64 and grad.shape == flat.shape
    numeric = np.array([finite_difference(model, flat, x, y, i) for i in range(model.size)])
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_loss_is_the_mean_cross_entropy() -> None:
    model = MLP((2, 3))
    flat = np.zeros(model.size)
    views = model.views(flat)
    views[0][1][...] = [0.0, np.log(2.0), 0.0]  # the bias alone: p = (1/4, 1/2, 1/4)
    loss, _ = model.loss_and_grad(flat, np.zeros((2, 2)), np.array([1, 0]))
    assert loss == pytest.approx((np.log(2) + np.log(4)) / 2)


def test_the_layers_are_views_of_one_flat_vector() -> None:
    model = MLP((64, 1024, 1024, 10))
    assert model.size == 64 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 10 + 10
    flat = np.arange(model.size, dtype=np.float32)
    views = model.views(flat)
    assert [w.shape for w, _ in views] == [(64, 1024), (1024, 1024), (1024, 10)]
    assert [b.shape for _, b in views] == [(1024,), (1024,), (10,)]
    assert all(np.shares_memory(w, flat) and np.shares_memory(b, flat) for w, b in views)
    covered = np.concatenate([np.concatenate([w.ravel(), b]) for w, b in views])
    np.testing.assert_array_equal(covered, flat)


def test_initialization_is_seeded() -> None:
    model = MLP((64, 64, 10))
    a, b, c = model.init(0), model.init(0), model.init(1)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    w, bias = model.views(a)[0]
    assert np.all(bias == 0)
    assert w.std() == pytest.approx(np.sqrt(2 / 64), rel=0.1)


def test_model_sizes_on_digits() -> None:
    digits = load_dataset("digits")
    sizes = {name: MLP.build(info, digits.features, digits.classes).size
             for name, info in MODELS.items()}
    assert sizes == {"mlp": 4810, "wide-mlp": 1_126_410}
    with pytest.raises(ValueError, match="unknown model 'cnn' .models: mlp, wide-mlp"):
        get_model("cnn")


def test_evaluate_counts_the_right_answers() -> None:
    model = MLP((2, 2))
    flat = np.zeros(model.size)
    w, _ = model.views(flat)[0]
    w[...] = np.eye(2)  # predicts the larger coordinate
    x = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    accuracy, loss = model.evaluate(flat, x, np.array([0, 1, 1, 1]))
    assert accuracy == 0.75
    assert loss > 0
