"""What a sweep leaves behind, and what ``ina show`` and ``ina plot`` make of it, on a
synthetic run (``experiment_fakes.FakeRunner``: figures made up from the model)."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from experiment_fakes import SLOWDOWN, FakeRunner
from plotted import bars, lines, markers, panels

from experiments.model import ModelInput, Prediction, model_ina, model_ring, predict
from experiments.progress import Progress, format_duration
from experiments.results import CSV_COLUMNS, RESULTS_VERSION
from experiments.run_allreduce import SweepOutcome, run_sweep
from experiments.sweep import Setting, build_sweep

SIZES = (10_000, 1_000_000)


def sweep_settings(tmp: Path, **more: object) -> dict[str, Setting]:
    values = {"topo": ["star,4", "star,8"], "algo": ["ina", "ring", "ps"],
              "size": list(SIZES), "bw": [10], "loss": [0, 0.01], "repeat": 2,
              "k": 256, "runs_dir": str(tmp), **more}
    return {k: Setting(v, k) for k, v in values.items()}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SweepOutcome]:
    tmp = tmp_path_factory.mktemp("runs")
    FakeRunner.fail = {("ps", 10_000)}
    FakeRunner.cpu_bound = {("ina", 10_000)}
    try:
        yield run_sweep(build_sweep(sweep_settings(tmp), name="synthetic"),
                        command=["ina", "run", "synthetic"], runner=FakeRunner)
    finally:
        FakeRunner.fail, FakeRunner.cpu_bound = set(), set()


def ina(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ina", *args], capture_output=True,
                          text=True, timeout=120)


# ------------------------------------------------------------- results files


def test_results_json(run: SweepOutcome) -> None:
    doc = json.loads((run.run_dir / "results.json").read_text())
    assert doc["version"] == RESULTS_VERSION
    assert doc["command"] == ["ina", "run", "synthetic"]
    assert doc["ok"] is False  # the ps points at 1e4 failed
    assert doc["versions"]["python"] and doc["versions"]["numpy"]
    assert doc["machine"]["cpus"] >= 1 and doc["git_revision"]
    assert doc["sweep"]["axes"]["size"] == list(SIZES)
    ms = doc["measurements"]
    assert len(ms) == 2 * 2 * 2 * 2 * 3  # topo x loss x size x repeat x algo
    assert [m["index"] for m in ms] == list(range(len(ms)))
    first = ms[0]
    assert first["point"] == {"topo": "star,4", "algo": "ina", "size": 10_000, "bw": 10.0,
                              "loss": 0.0, "repeat": 0}
    assert first["cpu_bound"] and first["cpu_bound_reasons"][0].startswith("s1 (switch)")
    assert first["monitor"]["processes"][0]["cpu_mean"] == 0.95
    failed = [m for m in ms if not m["ok"]]
    assert {(m["point"]["algo"], m["point"]["size"]) for m in failed} == {("ps", 10_000)}
    assert failed[0]["errors"] == ["h2: exit status 1: connection refused"]
    assert failed[0]["completion_s"] is None
    good = next(m for m in ms if m["point"]["algo"] == "ring" and m["point"]["size"] == 10**6)
    assert good["busbw_mbps"] == pytest.approx(good["algbw_mbps"] * 1.5)
    assert good["algbw_mbps"] == pytest.approx(4e6 * 8 / good["completion_s"] / 1e6)
    assert good["wire_bytes_sent_per_host"] == pytest.approx(
        good["model"]["wire_bytes_sent_per_host"] * 1.01, rel=1e-6)


def test_results_csv(run: SweepOutcome) -> None:
    with open(run.run_dir / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert len(rows) == 48
    r = rows[0]
    assert (r["topo"], r["workers"], r["algo"], r["size"], r["bytes"], r["bw_mbps"],
            r["cpu_bound"]) == ("star,4", "4", "ina", "10000", "40000", "10.0", "True")
    model = model_ina(ModelInput(4, 10_000, 10.0, k=256))
    assert float(r["seconds"]) == pytest.approx(model.seconds * SLOWDOWN["ina"])
    assert float(r["model_seconds"]) == pytest.approx(model.seconds)
    assert float(r["switch_cpu_mean"]) == 0.95
    failed = next(r for r in rows if r["ok"] == "False")
    assert failed["seconds"] == "" and "connection refused" in failed["error"]


# ---------------------------------------------------------------------- show


def table_row(text: str, *cells: str) -> list[str]:
    for line in text.splitlines():
        words = line.split()
        if words[:len(cells)] == list(cells):
            return words
    raise AssertionError(f"no row {cells} in:\n{text}")


def test_show_prints_nccl_tests_columns(run: SweepOutcome) -> None:
    proc = ina("show", str(run.run_dir))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert re.search(r"topo +N +algo +size \(B\) +count +bw \(Mbit/s\) +loss +time \(s\) +"
                     r"algbw \(Mbit/s\) +busbw \(Mbit/s\) +model \(s\) +time/model +runs +note",
                     out)
    t = model_ina(ModelInput(8, 10**6, 10.0, k=256)).seconds * SLOWDOWN["ina"]
    row = table_row(out, "star,8", "8", "ina", "4000000", "1000000", "10", "0")
    algbw = 4e6 * 8 / t / 1e6
    assert row[7:13] == [f"{t:.4f}", f"{algbw:.2f}", f"{algbw * 2 * 7 / 8:.2f}",
                         f"{t / SLOWDOWN['ina']:.4f}", f"{SLOWDOWN['ina']:.2f}", "2/2"]
    assert table_row(out, "star,4", "4", "ina", "40000")[-1] == "cpu_bound"
    failed = table_row(out, "star,4", "4", "ps", "40000")
    assert failed[7] == "-" and "2 failed: h2: exit status 1" in " ".join(failed)
    assert "cpu_bound: a switch or agent process" in out


def test_show_speedup_and_bytes(run: SweepOutcome) -> None:
    out = ina("show", str(run.run_dir)).stdout
    speed = out[out.index("in-network over ring"):]
    m = ModelInput(8, 10**6, 10.0, k=256)
    model = model_ring(m).seconds / model_ina(m).seconds  # type: ignore[operator]
    measured = model * SLOWDOWN["ring"] / SLOWDOWN["ina"]
    row = table_row(speed, "star,8", "8", "4000000", "10", "0")
    assert row[5:9] == [f"{measured:.2f}", f"{model:.2f}", "1.75",
                        f"{SLOWDOWN['ring'] / SLOWDOWN['ina']:.2f}"]
    sent = out[out.index("bytes sent per host"):]
    row = table_row(sent, "star,4", "ring", "4000000")
    assert row[3:5] == ["6120000", "6000000"] and row[5] == "1.020"
    assert row[8] == "1.010"


def test_show_markdown(run: SweepOutcome) -> None:
    out = ina("show", str(run.run_dir), "--markdown").stdout
    assert "| topo | N | algo | size (B) | count |" in out
    assert "| star,4 | 4 | ina | 40000 | 10000 | 10 | 0 |" in out


@pytest.mark.parametrize("verb", ["show", "plot"])
def test_not_a_run_directory(verb: str, tmp_path: Path) -> None:
    proc = ina(verb, str(tmp_path))
    assert proc.returncode == 1
    assert (f"ina {verb}: error: {tmp_path}/results.json: no such file (is {tmp_path} a "
            f"run directory of 'ina run'?)") in proc.stderr
    (tmp_path / "results.json").write_text('{"version": 1, "results": {}}')
    proc = ina(verb, str(tmp_path))
    assert proc.returncode == 1
    assert "results version 1, expected 2" in proc.stderr
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------- plot


def test_plot_writes_every_figure(run: SweepOutcome, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``ina plot`` (in this process, to see the figures it saves) writes every figure,
    and each shows the run's numbers (FakeRunner: the model's, slowed down)."""
    import matplotlib.image

    import experiments.plot
    from ina.cli import main

    drawn: dict[str, Any] = {}
    draw = experiments.plot.draw_figures

    def recording(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        figures, notes = draw(doc)
        drawn.update(figures)
        return figures, notes

    monkeypatch.setattr(experiments.plot, "draw_figures", recording)
    assert main(["plot", str(run.run_dir), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    names = ["time_vs_size", "speedup_vs_workers", "goodput_vs_loss", "bytes_per_host"]
    for name in names:
        png = matplotlib.image.imread(tmp_path / f"{name}.png")
        assert png.ndim == 3 and png.shape[0] > 300 and png.shape[1] > 400
        assert png.std() > 0.05  # not a blank canvas
        svg = ET.parse(tmp_path / f"{name}.svg").getroot()
        assert svg.tag.endswith("svg")
        assert f"wrote {tmp_path}/{name}.png" in out
    assert "note:" not in out
    svg_text = (tmp_path / "time_vs_size.svg").read_text()
    for label in ("tensor size per worker (bytes)", "completion time (s)", "ina (model)",
                  "hollow: cpu_bound"):
        assert label in svg_text
    assert "speedup of in-network over ring" in (tmp_path / "speedup_vs_workers.svg").read_text()
    # what the saved figures show
    assert list(drawn) == names
    check_time_vs_size(drawn["time_vs_size"])
    check_speedup(drawn["speedup_vs_workers"])
    check_goodput(drawn["goodput_vs_loss"])
    check_bytes(drawn["bytes_per_host"])


def model(algo: str, n: int, size: int) -> Prediction:
    prediction = predict(algo, ModelInput(n, size, 10.0, k=256))
    assert prediction is not None and prediction.seconds is not None
    return prediction


def seconds(algo: str, n: int, size: int, loss: float) -> float:
    """FakeRunner's completion time of a point."""
    return model(algo, n, size).seconds * SLOWDOWN[algo] * (1 + loss)  # type: ignore[operator]


def approx(points: list[tuple[float, float]]) -> object:
    return [pytest.approx(p, rel=1e-9) for p in points]


def check_time_vs_size(fig: Any) -> None:
    shown = panels(fig)
    assert list(shown) == [f"star,{n}, 10 Mbit/s, loss {loss:g}" for n in (4, 8)
                           for loss in (0, 0.01)]
    for n in (4, 8):
        for loss in (0, 0.01):
            ax = shown[f"star,{n}, 10 Mbit/s, loss {loss:g}"]
            sizes = {"ina": SIZES, "ring": SIZES, "ps": SIZES[1:]}  # ps failed at 1e4
            assert lines(ax) == {
                **{algo: approx([(4 * s, seconds(algo, n, s, loss)) for s in sizes[algo]])
                   for algo in ("ina", "ring", "ps")},
                **{f"{algo} (model)": approx([(4 * s, model(algo, n, s).seconds)
                                              for s in sizes[algo]])
                   for algo in ("ina", "ring", "ps")}}
            # ina at 1e4 was cpu_bound: its point is hollow, every other one filled
            small = (4 * SIZES[0], seconds("ina", n, SIZES[0], loss))
            assert markers(ax, hollow=True) == approx([small])
            assert len(markers(ax, hollow=False)) == 4


def check_speedup(fig: Any) -> None:
    shown = panels(fig)
    assert list(shown) == [f"in-network vs ring, 10 Mbit/s, loss {loss:g}"
                           for loss in (0, 0.01)]
    for ax in shown.values():
        expected = {"2(N-1)/N": [(4.0, 1.5), (8.0, 1.75)]}
        for size, label in zip(SIZES, ("40 kB", "4 MB"), strict=True):
            ratio = [(n, model("ring", n, size).seconds / model("ina", n, size).seconds)  # type: ignore[operator]
                     for n in (4, 8)]
            expected[f"{label} per worker"] = [
                (n, r * SLOWDOWN["ring"] / SLOWDOWN["ina"]) for n, r in ratio]
            expected[f"{label} per worker (model)"] = ratio
        assert lines(ax) == {label: approx(points) for label, points in expected.items()}


def check_goodput(fig: Any) -> None:
    shown = panels(fig)
    assert list(shown) == [f"star,{n}, 10 Mbit/s, 4 MB per worker" for n in (4, 8)]
    for n in (4, 8):
        expected = {algo: [(100 * loss, 4e6 * 8 / seconds(algo, n, 10**6, loss) / 1e6)
                           for loss in (0, 0.01)] for algo in ("ina", "ring", "ps")}
        assert lines(shown[f"star,{n}, 10 Mbit/s, 4 MB per worker"]) == {
            **{algo: approx(points) for algo, points in expected.items()},
            "link rate": [(0.0, 10.0), (1.0, 10.0)]}


def check_bytes(fig: Any) -> None:
    shown = panels(fig)
    assert list(shown) == ["star,4, 4 MB per worker", "star,8, 4 MB per worker"]
    for n in (4, 8):
        predictions = [model(algo, n, 10**6) for algo in ("ina", "ring", "ps")]
        heights = {  # per tensor byte: FakeRunner's payload is 2% and its wire 1% over
            "payload, measured": [m.bytes_sent_per_host * 1.02 for m in predictions],
            "payload, model": [m.bytes_sent_per_host for m in predictions],
            "wire, measured": [int(m.wire_bytes_sent_per_host * 1.01) for m in predictions],
            "wire, model": [m.wire_bytes_sent_per_host for m in predictions]}
        ax = shown[f"star,{n}, 4 MB per worker"]
        assert bars(ax) == {
            label: approx([(j + (i - 1.5) * 0.2, value / 4e6) for j, value in enumerate(values)])
            for i, (label, values) in enumerate(heights.items())}
        assert [t.get_text() for t in ax.get_xticklabels()] == ["ina", "ring", "ps"]


def test_plot_skips_what_the_run_lacks(tmp_path: Path) -> None:
    settings = sweep_settings(tmp_path, topo=["star,4"], algo=["ina"], size=[10_000],
                              loss=[0], repeat=1)
    outcome = run_sweep(build_sweep(settings), runner=FakeRunner)
    proc = ina("plot", str(outcome.run_dir))
    assert proc.returncode == 0, proc.stderr
    assert ("note: time_vs_size: skipped, the run has fewer than two sizes per (topology, "
            "link rate, loss)") in proc.stdout
    assert "note: speedup_vs_workers: skipped" in proc.stdout
    assert "note: goodput_vs_loss: skipped" in proc.stdout
    assert (outcome.run_dir / "plots" / "bytes_per_host.png").is_file()
    assert not (outcome.run_dir / "plots" / "time_vs_size.png").exists()


# ------------------------------------------------------------------ progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_plain_lines_and_eta() -> None:
    sweep = build_sweep({"size": Setting(["1e3", "1e6"], "--size"),
                         "bw": Setting(["10"], "--bw")})
    points = sweep.points()
    out, clock = io.StringIO(), Clock()
    estimate = {0: 1.0, 1: 9.0}
    progress = Progress(points, out, tty=False, estimate=lambda p: estimate[p.index],
                        clock=clock)
    assert progress.eta() is None
    progress.start(points[0])
    clock.now = 8.0  # 4 s of estimated cost (1 + 3 overhead) took 8 s: twice as slow
    progress.done(points[0], "0.1 s")
    assert progress.eta() == pytest.approx(2 * (9.0 + 3.0))
    progress.done(points[1], "FAILED: x")
    assert out.getvalue() == ("[1/2] ina star,4 size=1000 bw=10 loss=0 #1: 0.1 s  (ETA 24s)\n"
                              "[2/2] ina star,4 size=1e6 bw=10 loss=0 #1: FAILED: x  (ETA 0s)\n")
    assert "\r" not in out.getvalue()


def test_progress_bar_on_a_terminal() -> None:
    points = build_sweep({"algo": Setting(["ina", "ring"], "--algo")}).points()
    out, clock = io.StringIO(), Clock()
    progress = Progress(points, out, tty=True, clock=clock)
    progress.start(points[0])
    text = out.getvalue()
    assert text.startswith("\r\033[K[....................] 0/2 ina star,4 size=1e5")
    assert text.endswith("0s elapsed, ETA --")
    clock.now = 65.0
    progress.done(points[0], "1.000 s")
    progress.close()
    text = out.getvalue()
    assert "\r\033[K[1/2] ina star,4 size=1e5 unshaped loss=0 #1: 1.000 s\n" in text
    assert "[##########..........] 1/2  1m05s elapsed, ETA 1m05s" in text


def test_format_duration() -> None:
    assert [format_duration(s) for s in (0, 59.4, 61, 3599, 3600 * 2 + 65)] == [
        "0s", "59s", "1m01s", "59m59s", "2h01m"]
