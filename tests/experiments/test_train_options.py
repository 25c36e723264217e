"""ina train's options and experiment files: lists, sections, defaults and the errors,
each naming the option or the file and line."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from experiments.options import RunError
from experiments.sweep import read_experiment_file
from experiments.train_cli import add_train_parser, command_line_settings
from experiments.train_options import TrainOptions
from experiments.train_sweep import (
    TrainSweep,
    build_train_sweep,
    read_train_file,
    train_sections,
)

ROOT = Path(__file__).resolve().parents[2]


def parse(*argv: str, file: Path | None = None) -> TrainSweep:
    parser = argparse.ArgumentParser()
    add_train_parser(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(["train", *argv])
    tf = read_train_file(file) if file else None
    return build_train_sweep(train_sections(tf, command_line_settings(args)))


def test_lists_make_every_combination_grouped_by_network() -> None:
    sweep = parse("--algo", "ina,ring,local", "--seeds", "0,1", "--bw", "10,20",
                  "--model", "mlp")
    points = sweep.points()
    assert len(points) == 3 * 2 * 2
    assert [p.options.bw for p in points] == [10.0] * 6 + [20.0] * 6
    assert [p.label for p in points[:3]] == [
        "ina star,4 mlp seed=0 bw=10 loss=0", "ring star,4 mlp seed=0 bw=10 loss=0",
        "local star,4 mlp seed=0 bw=10 loss=0"]
    assert points[0].to_json() == {"topo": "star,4", "algo": "ina", "model": "mlp",
                                   "dataset": "digits", "seed": 0, "bw": 10.0, "loss": 0.0}
    assert [p.options.seed for p in parse("--seed", "4").points()] == [4]


def test_model_defaults_fill_the_settings() -> None:
    s = TrainOptions().resolve()
    assert (s.model, s.workers, s.batch, s.lr, s.steps, s.eval_every) == (
        "mlp", 4, 32, 0.05, 15 * 11, 11)
    wide = TrainOptions(model="wide-mlp", steps=12, topo="star,2").resolve()
    assert (wide.workers, wide.steps, wide.eval_every, wide.lr) == (2, 12, 2, 0.02)
    assert TrainOptions(model="wide-mlp").accuracy_target == 0.9
    assert TrainOptions().accuracy_target == 0.95
    assert TrainOptions(epochs=2, batch=64).resolve().steps == 2 * (1437 // 256)


def test_window_follows_the_gradient() -> None:
    assert TrainOptions(k=256).window_for(4810) == 19
    assert TrainOptions(k=64).window_for(4810) == 64
    assert TrainOptions(k=64, window=8).window_for(4810) == 8
    job = TrainOptions(k=256, seed=2).job(3, ["h1", "h2"], 4810)
    assert (job.job_id, job.size, job.window, job.k) == (3, 4810, 19, 256)


@pytest.mark.parametrize("argv,message", [
    (["--model", "cnn"], "--model cnn: unknown model (models: mlp, wide-mlp)"),
    (["--algo", "ina,nccl"], "--algo nccl: unknown algorithm (algorithms: ina, ring, ps, "
                             "ps-sharded, hd, gloo, local)"),
    (["--target-accuracy", "95"], "--target-accuracy 95: must be in (0, 1] (a fraction: "
                                  "0.95 for 95%)"),
    (["--epochs", "2", "--steps", "10"], "--epochs and --steps: give one of them"),
    (["--batch", "500"], "--batch 500: 4 workers x 500 is more than the 1437 training "
                         "examples of digits"),
    (["--lr", "-1"], "--lr -1: must be positive"),
    (["--momentum", "1"], "--momentum 1: must be in [0, 1)"),
    (["--compute-time", "x"], "--compute-time x: expected a number"),
    (["--seeds", "1,-2"], "--seeds -2: must be non-negative"),
    (["--dataset", "mnist"], "--dataset mnist: unknown dataset (datasets: digits, "
                             "synthetic)"),
    (["--root", "s9"], "--root s9: not a switch of star,4 (switches: s1)"),
    (["--steps", "0"], "--steps 0: must be in [1, 100000]"),
])
def test_bad_options_name_the_option(argv: list[str], message: str) -> None:
    with pytest.raises(RunError) as e:
        parse(*argv)
    assert str(e.value) == message


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


def test_sections_make_groups_over_the_top(tmp_path: Path) -> None:
    path = write(tmp_path, '''description = "two models"
topo = "star,4"
bw = 10
algo = ["ina", "ring"]

[[train]]
model = "mlp"
seeds = [0, 1, 2]

[[train]]
model = "wide-mlp"
steps = 12
loss = [0, 0.01]
algo = ["ina"]
''')
    tf = read_train_file(path)
    assert tf.description == "two models"
    sweep = parse(file=path)
    labels = [p.label for p in sweep.points()]
    assert len(labels) == 2 * 3 + 2
    assert labels[-1] == "ina star,4 wide-mlp seed=0 bw=10 loss=0.01"
    assert all(p.options.steps == 12 for p in sweep.points()
               if p.options.model == "wide-mlp")
    assert sweep.to_json()["groups"][1]["axes"]["loss"] == [0.0, 0.01]
    # the command line overrides every section
    assert {p.options.bw for p in parse("--bw", "20", file=path).points()} == {20.0}


def test_one_train_section_and_no_section(tmp_path: Path) -> None:
    path = write(tmp_path, 'topo = "star,2"\n[train]\nmodel = "wide-mlp"\nsteps = 4\n')
    [p] = parse(file=path).points()
    assert (p.options.topo, p.options.model, p.options.steps) == ("star,2", "wide-mlp", 4)
    path = write(tmp_path, 'topo = "star,2"\nseeds = [1, 2]\n')
    assert len(parse(file=path).points()) == 2


@pytest.mark.parametrize("text,message", [
    ('topo = "star,4"\n[train]\nmodel = "mlp"\nlrr = 0.1\n',
     "exp.toml:4: [train] lrr: unknown key (keys: "),
    ('[train]\nmodel = "mlp"\nsteps = 0\n', "exp.toml:3: [train] steps 0: must be in "
                                            "[1, 100000]"),
    ('bw = 10\n[[train]]\nmodel = "mlp"\n[[train]]\nmodel = "cnn"\n',
     "exp.toml:5: [train] model cnn: unknown model (models: mlp, wide-mlp)"),
    ('[train]\ndescription = "x"\n', "exp.toml:2: [train] description: belongs at the top"),
    ('[other]\nx = 1\n', "exp.toml:1: other: a table is not an option"),
    ('loss = "lots"\n', "exp.toml:1: loss lots: expected a number"),
    ('model = ["mlp"\n', "exp.toml: not valid TOML"),
])
def test_file_errors_say_where(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(RunError) as e:
        parse(file=write(tmp_path, text))
    assert str(e.value).startswith(f"{tmp_path}/{message}"), str(e.value)


def test_ina_run_refuses_a_training_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'topo = "star,4"\n\n[train]\nmodel = "mlp"\n')
    with pytest.raises(RunError, match=r"exp.toml:3: train: a \[train\] section makes this "
                                       "an experiment file of 'ina train'"):
        read_experiment_file(path)


def test_shipped_training_files_parse() -> None:
    for path in sorted((ROOT / "experiments").glob("train*.toml")):
        assert parse(file=path).points(), path


def test_gloo_needs_pytorch(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else find_spec(name, *a))
    with pytest.raises(RunError, match=r"^--algo gloo needs PyTorch \(.venv/bin/pip install "
                                       r"torch==2.13.0"):
        parse("--algo", "ring,gloo")
