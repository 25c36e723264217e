"""What ina train leaves behind and what ina show and ina plot make of it, on runs made
up by a fake runner (``FakeTrainRunner``: no network, the figures through the real
``finish_record``), and the per-step check of the all-reduces."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from experiments.algorithms import ALGORITHMS
from experiments.jobspec import JobSpec
from experiments.run_allreduce import SweepOutcome, run_sweep
from experiments.run_train import check_steps
from experiments.sweep import Point, Setting
from experiments.train_results import TRAIN_CSV_COLUMNS, finish_record, train_base_record
from experiments.train_show import format_train_run
from experiments.train_sweep import build_train_sweep
from ina.cli import main
from training.sgd import TrainSettings
from training.worker import check_paths

STEP_S = {"ina": 0.2, "ring": 0.3, "local": 0.05}
TO_TARGET = 10  # updates


class FakeTrainRunner:
    needs_root = False

    def __init__(self, key: tuple[Any, ...], work_dir: Path, run_dir: Any) -> None:
        pass

    def stop(self) -> None:
        pass

    @staticmethod
    def result_text(record: dict[str, Any]) -> str:
        return "fake"

    def run(self, point: Point) -> dict[str, Any]:
        o = point.options
        settings = o.resolve()
        record = train_base_record(point, settings)
        record["parameters"] = 4810
        record["job"] = {"window": 19}
        steps = settings.steps
        step_s = STEP_S[o.algo] * (1 + o.loss)
        compute = 0.05
        record["steps"] = {
            "loss": [2.0 / (1 + s) + 0.01 * o.seed for s in range(steps)],
            "compute_s": [compute] * steps,
            "allreduce_s": [step_s - compute] * steps,
            "bytes_sent": [20_000.0] * steps, "time_s": [step_s * (s + 1) for s in range(steps)]}
        evals = settings.eval_steps()
        acc = [min(0.5 + 0.05 * u, 0.96 + 0.002 * o.seed) for u in evals]
        record["evals"] = {"step": evals, "epoch": [u / 11 for u in evals],
                           "time_s": [0.0 if u == 0 else step_s * u for u in evals],
                           "test_accuracy": acc, "test_loss": [1 - a for a in acc]}
        record["max_param_diff"] = 0.0
        if o.algo == "ring" and o.seed == 2:
            record["errors"].append("h3: exit status 1: all-reduce failed")
        finish_record(record, o, ["s1 (switch) was starved"] if o.algo == "ina" and
                      o.loss else [])
        return record


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SweepOutcome]:
    tmp = tmp_path_factory.mktemp("train-runs")
    settings = {"algo": ["ina", "ring", "local"], "seed": [0, 1, 2], "bw": 10,
                "loss": [0, 0.01], "steps": 30, "eval_every": 5, "runs_dir": str(tmp),
                "k": 256}
    sweep = build_train_sweep([{k: Setting(v, k) for k, v in settings.items()}],
                              name="fake")
    yield run_sweep(sweep, command=["ina", "train"], runner=FakeTrainRunner)


def test_the_results_record_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    import experiments.run_train

    monkeypatch.setattr(experiments.run_train, "TrainRunner", FakeTrainRunner)
    argv = ["train", "--algo", "local", "--steps", "10", "--eval-every", "5",
            "--runs-dir", str(tmp_path)]
    assert main(argv) == 0
    [results] = tmp_path.glob("*/results.json")
    assert json.loads(results.read_text())["command"] == ["ina", *argv]


def test_results_json_and_csv(run: SweepOutcome) -> None:
    doc = json.loads((run.run_dir / "results.json").read_text())
    assert doc["kind"] == "train" and doc["ok"] is False
    ms = doc["measurements"]
    assert len(ms) == 3 * 3 * 2
    m = next(m for m in ms if m["point"]["algo"] == "ina" and m["point"]["loss"] == 0)
    assert m["point"] == {"topo": "star,4", "algo": "ina", "model": "mlp",
                          "dataset": "digits", "seed": 0, "bw": 10.0, "loss": 0.0}
    assert m["settings"]["steps"] == 30 and m["target_accuracy"] == 0.95
    assert m["steps_to_target"] == TO_TARGET
    assert m["time_to_target_s"] == pytest.approx(0.2 * TO_TARGET)
    assert m["final_accuracy"] == pytest.approx(0.96)
    assert m["allreduce_share"] == pytest.approx(0.15 / 0.2)
    assert m["model"]["time_to_target_s"] == pytest.approx(TO_TARGET * (0.05 + m["model"]
                                                                        ["allreduce_s"]))
    lossy = next(m for m in ms if m["point"]["algo"] == "ina" and m["point"]["loss"])
    assert lossy["cpu_bound"] and lossy["cpu_bound_reasons"] == ["s1 (switch) was starved"]
    rows = list(csv.DictReader(open(run.run_dir / "results.csv")))
    assert list(rows[0]) == list(TRAIN_CSV_COLUMNS) and len(rows) == len(ms)
    assert rows[0]["time_to_target_s"] == str(ms[0]["time_to_target_s"])


def test_show_has_accuracy_time_to_target_and_speedup(run: SweepOutcome) -> None:
    text = format_train_run(json.loads((run.run_dir / "results.json").read_text()))
    lines = {tuple(line.split()[:6]): line for line in text.splitlines()[3:] if line.strip()}
    ina = lines[("star,4", "4", "mlp", "10", "0", "ina")]
    ring = lines[("star,4", "4", "mlp", "10", "0", "ring")]
    assert " 3/3 " in ina and "96.2 ± 0.2" in ina and " 1.50 " in ina
    assert " 2/3 " in ring and "1 failed: h3: exit status 1: all-reduce failed" in ring
    assert "cpu_bound" in lines[("star,4", "4", "mlp", "10", "0.01", "ina")]
    markdown = format_train_run(json.loads((run.run_dir / "results.json").read_text()),
                                markdown=True)
    assert "| star,4 | 4 | mlp | 10 | 0 | ina | 3/3 | 96.2 ± 0.2 | +0.0 |" in markdown


def test_ina_show_and_plot_read_a_training_run(run: SweepOutcome, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(run.run_dir)]) == 0
    shown = capsys.readouterr().out
    assert "speedup over ring" in shown and "time to target (s)" in shown
    assert main(["plot", str(run.run_dir), "--out", str(tmp_path)]) == 0
    assert f"wrote {tmp_path}/loss_vs_step.svg" in capsys.readouterr().out
    for name in ("accuracy_vs_time", "accuracy_vs_step", "loss_vs_step"):
        for fmt in ("png", "svg"):
            path = tmp_path / f"{name}.{fmt}"
            assert path.stat().st_size > 1000, path
    svg = (tmp_path / "accuracy_vs_time.svg").read_text()
    assert "ina" in svg and "ring" in svg and "target 95%" in svg


def write_step(tmp: Path, step: int, inputs: list[np.ndarray], outputs: list[np.ndarray]
               ) -> None:
    tmp.mkdir(exist_ok=True)
    for rank, (x, y) in enumerate(zip(inputs, outputs, strict=True)):
        sent, got = check_paths(tmp, step, rank)
        np.save(sent, x)
        np.save(got, y)


def test_check_steps_holds_every_step_to_the_bound(tmp_path: Path) -> None:
    settings = TrainSettings(workers=3, steps=3)
    job = JobSpec(1, ("h1", "h2", "h3"), 100)
    rng = np.random.default_rng(0)
    for step in range(3):
        xs = [rng.standard_normal(100).astype(np.float32) for _ in range(3)]
        total = (xs[0] + xs[1]) + xs[2]
        outs = [total.copy() for _ in range(3)]
        if step == 2:
            outs[1][7] += np.float32(0.01)
        write_step(tmp_path / "ok", step, xs, [total] * 3)
        write_step(tmp_path / "bad", step, xs, outs)
    good = check_steps(ALGORITHMS["ring"], job, tmp_path / "ok", settings)
    assert good["ok"] and good["steps"] == 3 and good["max_error_over_bound"] <= 1
    assert not (tmp_path / "ok").exists()
    bad = check_steps(ALGORITHMS["ring"], job, tmp_path / "bad", settings)
    assert not bad["ok"]
    assert bad["message"] == "step 2: workers [1] differ from worker 0"


def test_publish_rewrites_the_readme_block(run: SweepOutcome, tmp_path: Path) -> None:
    from experiments.train_plot import plot_train_run
    from experiments.train_publish import BEGIN, END, publish_training

    doc = json.loads((run.run_dir / "results.json").read_text())
    plot_train_run(doc, run.run_dir / "plots")
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\nbefore\n\n{BEGIN}\nold\n{END}\n\nafter\n")
    publish_training(run.run_dir, tmp_path / "docs" / "train", readme)
    text = readme.read_text()
    assert text.startswith("# x\n\nbefore\n\n" + BEGIN) and text.endswith(END + "\n\nafter\n")
    assert "old" not in text
    assert "Measured by `ina train experiments/train-demo.toml` on" in text
    assert "| model | bw (Mbit/s) | loss | algo | seeds | accuracy (%) |" in text
    assert "(docs/train/accuracy_vs_time.png)" in text
    assert (tmp_path / "docs" / "train" / "results.json").read_text() == \
        (run.run_dir / "results.json").read_text()
