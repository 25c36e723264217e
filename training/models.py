"""The models ``ina train`` trains: multilayer perceptrons in numpy, with hand-written
backpropagation over one flat parameter vector.

All parameters of a model live in one contiguous float32 vector (each layer's weight
matrix and bias are views of it), and the gradient comes out in the same layout: the
vector a worker all-reduces every step, with no packing. The arithmetic is numpy's
on one thread, deterministic for given inputs, so workers that start from the same
parameters and apply the same all-reduced gradient hold the same bits.

* ``mlp``: one hidden layer of 64 ReLU units (4,810 parameters on digits): cheap to
  compute and to all-reduce; the accuracy reference.
* ``wide-mlp``: two hidden layers of 1,024 ReLU units (1,126,410 parameters on
  digits, 4.5 MB of float32 gradient): a step's all-reduce takes seconds on 10 Mbit/s
  links while its compute takes milliseconds, so the all-reduce sets the pace.

Both end in a softmax with the mean cross-entropy over the mini-batch as the loss.
Weights start as He-normal draws (seeded), biases at 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from training.data import Labels

Array = npt.NDArray[np.floating]
INIT_STREAM = 0  # the rng stream of the run's seed that initializes the parameters


@dataclass(frozen=True)
class ModelInfo:
    """A model family and the training settings that suit it (the defaults of
    ``ina train``'s options)."""

    name: str
    hidden: tuple[int, ...]
    lr: float
    momentum: float
    batch: int  # per worker
    epochs: int
    eval_every: int | None  # steps between evaluations (None: one epoch)
    targets: dict[str, float]  # dataset -> the default --target-accuracy
    summary: str

    def target(self, dataset: str) -> float:
        return self.targets.get(dataset, 0.9)


MODELS: dict[str, ModelInfo] = {m.name: m for m in (
    ModelInfo("mlp", (64,), lr=0.05, momentum=0.9, batch=32, epochs=15, eval_every=None,
              targets={"digits": 0.95, "synthetic": 0.9},
              summary="one hidden layer of 64 ReLU units"),
    ModelInfo("wide-mlp", (1024, 1024), lr=0.02, momentum=0.9, batch=32, epochs=1,
              eval_every=2, targets={"digits": 0.9, "synthetic": 0.9},
              summary="two hidden layers of 1024 ReLU units (about a million "
                      "parameters: communication-heavy)"),
)}


def get_model(name: str) -> ModelInfo:
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r} (models: {', '.join(MODELS)})") from None


@dataclass(frozen=True)
class Layer:
    inputs: int
    outputs: int
    offset: int  # where the weights start in the flat vector; the bias follows them

    @property
    def size(self) -> int:
        return self.inputs * self.outputs + self.outputs


@dataclass(frozen=True)
class MLP:
    """A perceptron of ``sizes`` = (inputs, hidden..., classes)."""

    sizes: tuple[int, ...]

    @classmethod
    def build(cls, info: ModelInfo, features: int, classes: int) -> MLP:
        return cls((features, *info.hidden, classes))

    @property
    def layers(self) -> list[Layer]:
        out, offset = [], 0
        for a, b in zip(self.sizes, self.sizes[1:], strict=False):
            layer = Layer(a, b, offset)
            out.append(layer)
            offset += layer.size
        return out

    @property
    def size(self) -> int:
        """Parameters in all."""
        return sum(layer.size for layer in self.layers)

    def views(self, flat: Array) -> list[tuple[Array, Array]]:
        """(weights, bias) of every layer as views of ``flat``."""
        out = []
        for layer in self.layers:
            w_end = layer.offset + layer.inputs * layer.outputs
            out.append((flat[layer.offset:w_end].reshape(layer.inputs, layer.outputs),
                        flat[w_end:layer.offset + layer.size]))
        return out

    def init(self, seed: int) -> npt.NDArray[np.float32]:
        """Seeded initial parameters: He-normal weights, zero biases."""
        rng = np.random.default_rng([seed, INIT_STREAM])
        flat = np.zeros(self.size, dtype=np.float32)
        for (w, _), layer in zip(self.views(flat), self.layers, strict=True):
            w[...] = rng.standard_normal(w.shape) * np.sqrt(2.0 / layer.inputs)
        return flat

    def logits(self, flat: Array, x: Array) -> Array:
        h = x
        views = self.views(flat)
        for i, (w, b) in enumerate(views):
            h = h @ w + b
            if i < len(views) - 1:
                h = np.maximum(h, 0)
        return h

    def loss_and_grad(self, flat: Array, x: Array, y: Labels) -> tuple[float, Array]:
        """The mean cross-entropy over (x, y) and its gradient (the dtype of ``flat``)."""
        views = self.views(flat)
        acts = [x.astype(flat.dtype, copy=False)]
        for i, (w, b) in enumerate(views):
            z = acts[-1] @ w + b
            acts.append(np.maximum(z, 0) if i < len(views) - 1 else z)
        logits = acts[-1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        loss = float(np.mean(np.log(total[:, 0]) - shifted[rows, y]))
        delta = exp / total
        delta[rows, y] -= 1
        delta /= len(y)
        grad = np.empty_like(flat)
        for i in range(len(views) - 1, -1, -1):
            gw, gb = self.views(grad)[i]
            w, _ = views[i]
            np.matmul(acts[i].T, delta, out=gw)
            gb[...] = delta.sum(axis=0)
            if i:
                delta = (delta @ w.T) * (acts[i] > 0)
        return loss, grad

    def evaluate(self, flat: Array, x: Array, y: Labels) -> tuple[float, float]:
        """(accuracy, mean cross-entropy) on (x, y)."""
        logits = self.logits(flat, x.astype(flat.dtype, copy=False)).astype(np.float64)
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_total = np.log(np.exp(shifted).sum(axis=1))
        loss = float(np.mean(log_total - shifted[np.arange(len(y)), y]))
        accuracy = float(np.mean(np.argmax(logits, axis=1) == y))
        return accuracy, loss
