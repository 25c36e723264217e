"""The options of one training run of ``ina train`` (``TrainOptions``) and their
registry, ``TRAIN_FIELDS``.

The options ``ina train`` shares with ``ina run`` (the topology, the links, the switch,
K, the in-network and host-based settings, ``--check``, ``--runs-dir``) are the same
``Field``s as in ``experiments.options``; the rest say what is trained. A setting left
at None takes the model's default (``training.models.MODELS``); ``resolve`` turns the
options into the ``TrainSettings`` every worker shares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from experiments.jobspec import JobSpec
from experiments.options import (
    FIELDS,
    Field,
    RunOptions,
    read_count,
    read_number,
    read_text,
)
from hosts.baselines.collective import DEFAULT_SEGMENT
from training.models import MODELS

if TYPE_CHECKING:
    from training.sgd import TrainSettings

TRAIN_ALGOS = ("ina", "ring", "ps", "ps-sharded", "hd", "gloo", "local")
"""``local`` is the accuracy reference: the exact average, no network, no quantization;
``gloo`` is PyTorch's own all-reduce (``torch.distributed``, Gloo), where PyTorch is
installed."""
MAX_STEPS = 100_000
MAX_WINDOW = 64  # the default window of ina run; a run with fewer chunks uses fewer


@dataclass(frozen=True)
class TrainOptions:
    """One training run: everything ``experiments.run_train`` needs."""

    topo: str = "star,4"
    algo: str = "ina"
    bw: float | None = None
    loss: float = 0.0
    seed: int = 0
    model: str = "mlp"
    dataset: str = "digits"
    epochs: int | None = None
    steps: int | None = None
    batch: int | None = None
    lr: float | None = None
    momentum: float | None = None
    target_accuracy: float | None = None
    compute_time: float | None = None
    eval_every: int | None = None
    check: bool = False
    target: str = "builtin"
    k: int = 64
    window: int | None = None
    scaling: str = "tight"
    timeout_ms: float = 100.0
    root: str | None = None
    ps_host: str | None = None
    segment: int = DEFAULT_SEGMENT
    routing: str = "ecmp"
    runs_dir: str = "runs"

    def as_run_options(self) -> RunOptions:
        """The network side of this run, as ``ina run`` would take it."""
        algo = {"local": "ina", "gloo": "ring"}.get(self.algo, self.algo)
        return RunOptions(topo=self.topo, algo=algo,
                          bw=self.bw, loss=self.loss, target=self.target, k=self.k,
                          scaling=self.scaling, timeout_ms=self.timeout_ms, root=self.root,
                          ps_host=self.ps_host, segment=self.segment, routing=self.routing,
                          runs_dir=self.runs_dir)

    def cross_check(self) -> str | None:
        """What is wrong with the combination of options (None when nothing is): the
        network's checks of ``ina run``, then the training's."""
        problem = self.as_run_options().cross_check()
        if problem:
            return problem
        if self.algo == "gloo":
            from training.comm import torch_missing

            why = torch_missing()
            if why:
                return f"--algo gloo {why}"
        if self.epochs is not None and self.steps is not None:
            return "--epochs and --steps: give one of them"
        from training.data import load_dataset

        n = self.workers
        batch = self.batch or MODELS[self.model].batch
        size = load_dataset(self.dataset).train_size
        if n * batch > size:
            return (f"--batch {batch}: {n} workers x {batch} is more than the "
                    f"{size} training examples of {self.dataset}")
        return None

    @property
    def workers(self) -> int:
        return self.as_run_options().workers

    def resolve(self, workers: int | None = None) -> TrainSettings:
        """The settings every worker shares, model defaults filled in."""
        from training.data import load_dataset, steps_per_epoch
        from training.sgd import TrainSettings

        info = MODELS[self.model]
        n = workers or self.workers
        batch = self.batch or info.batch
        per_epoch = steps_per_epoch(load_dataset(self.dataset).train_size, n, batch)
        steps = self.steps or (self.epochs or info.epochs) * per_epoch
        every = self.eval_every or info.eval_every or per_epoch
        return TrainSettings(
            model=self.model, dataset=self.dataset, seed=self.seed, workers=n, batch=batch,
            lr=self.lr if self.lr is not None else info.lr,
            momentum=self.momentum if self.momentum is not None else info.momentum,
            steps=steps, eval_every=min(every, steps), compute_time=self.compute_time)

    @property
    def accuracy_target(self) -> float:
        if self.target_accuracy is not None:
            return self.target_accuracy
        return MODELS[self.model].target(self.dataset)

    def window_for(self, parameters: int) -> int:
        """The in-network window: --window, or the chunks of the gradient up to 64 (a
        window beyond them only lengthens the exponent round)."""
        if self.window is not None:
            return self.window
        return max(1, min(MAX_WINDOW, -(-parameters // self.k)))

    def job(self, job_id: int, workers: list[str], parameters: int) -> JobSpec:
        return JobSpec(job_id, tuple(workers), parameters, seed=self.seed,
                       window=self.window_for(parameters), k=self.k, scaling=self.scaling,
                       timeout_ms=self.timeout_ms, root=self.root, ps_host=self.ps_host,
                       segment=self.segment)

    def label(self) -> str:
        bw = "unshaped" if self.bw is None else f"bw={self.bw:g}"
        return f"{self.algo} {self.topo} {self.model} seed={self.seed} {bw} loss={self.loss:g}"


# ------------------------------------------------------------------- checks


def _one_of(choices: Any, what: str) -> Any:
    def check(value: Any) -> str | None:
        return None if value in choices else f"unknown {what} ({what}s: {', '.join(choices)})"
    return check


def _positive_count(value: int) -> str | None:
    return None if 1 <= value <= MAX_STEPS else f"must be in [1, {MAX_STEPS}]"


def _positive(value: float) -> str | None:
    return None if value > 0 and math.isfinite(value) else "must be positive"


def _fraction(value: float) -> str | None:
    if 0 < value <= 1:
        return None
    hint = f" (a fraction: {value / 100:g} for {value:g}%)" if 1 < value <= 100 else ""
    return "must be in (0, 1]" + hint


def _momentum(value: float) -> str | None:
    return None if 0 <= value < 1 else "must be in [0, 1)"


def _compute_time(value: float) -> str | None:
    return None if 0 <= value <= 3600 and math.isfinite(value) else "must be in [0, 3600] s"


def _datasets() -> list[str]:
    from training.data import DATASETS

    return list(DATASETS)


def _defaults() -> str:
    return "; ".join(f"{m.name}: {', '.join(f'{t:g} on {d}' for d, t in m.targets.items())}"
                     for m in MODELS.values())


SHARED = ("topo", "bw", "loss", "check", "target", "k", "scaling", "timeout_ms", "root",
          "ps_host", "segment", "routing", "runs_dir")

TRAIN_FIELDS: dict[str, Field] = {f.attr: f for f in (
    *(FIELDS[name] for name in SHARED[:3]),
    Field("algo", "--algo", read_text, _one_of(TRAIN_ALGOS, "algorithm"), axis=True,
          metavar="NAME[,NAME...]",
          help=f"all-reduce algorithms: {', '.join(TRAIN_ALGOS)} (default ina); local is "
               "the exact float64 average, no network; gloo is PyTorch's all-reduce "
               "(needs PyTorch)"),
    Field("seed", "--seeds", read_count, lambda v: None if v >= 0 else "must be "
          "non-negative", axis=True, metavar="S[,S...]",
          help="training seeds (initial parameters, data order), also --seed (default 0)"),
    Field("model", "--model", read_text, _one_of(list(MODELS), "model"), axis=True,
          metavar="NAME[,NAME...]",
          help="; ".join(f"{m.name}: {m.summary}" for m in MODELS.values())
               + " (default mlp)"),
    Field("dataset", "--dataset", read_text, lambda v: _one_of(_datasets(), "dataset")(v),
          metavar="NAME", help="digits (scikit-learn's, bundled) or synthetic (default "
                               "digits)"),
    Field("epochs", "--epochs", read_count, _positive_count, metavar="E",
          help="passes over the training set (default per model: "
               + ", ".join(f"{m.name} {m.epochs}" for m in MODELS.values()) + ")"),
    Field("steps", "--steps", read_count, _positive_count, metavar="S",
          help="steps to train instead of --epochs"),
    Field("batch", "--batch", read_count, _positive_count, metavar="B",
          help="examples per worker and step (default 32)"),
    Field("lr", "--lr", read_number, _positive, metavar="LR",
          help="learning rate (default per model: "
               + ", ".join(f"{m.name} {m.lr:g}" for m in MODELS.values()) + ")"),
    Field("momentum", "--momentum", read_number, _momentum, metavar="MU",
          help="SGD momentum (default 0.9)"),
    Field("target_accuracy", "--target-accuracy", read_number, _fraction, metavar="ACC",
          help=f"test accuracy that counts as trained, a fraction (default: {_defaults()})"),
    Field("compute_time", "--compute-time", read_number, _compute_time, metavar="SECONDS",
          help="pad every step's compute to this emulated time (default: the measured "
               "compute)"),
    Field("eval_every", "--eval-every", read_count, _positive_count, metavar="STEPS",
          help="steps between test evaluations (default: one epoch; wide-mlp 2)"),
    *(FIELDS[name] for name in SHARED[3:]),
    Field("window", "--window", read_count, FIELDS["window"].check, metavar="S",
          help="in-network: chunks in flight (default: the gradient's chunks, at most 64)"),
)}
assert set(TRAIN_FIELDS) == {f.name for f in fields(TrainOptions)}, "every option has a Field"

TRAIN_AXES = tuple(name for name, f in TRAIN_FIELDS.items() if f.axis)
