"""The README's "Experiments" section runs as written: ``ina model``, the experiment file
it shows, and (slow, root) the ``ina run`` sweeps followed by ``ina show`` and
``ina plot``, with smaller tensors (1e4 values instead of 1e6) so that the whole sweep
takes about a minute. The sweep's byte counts are held to the model and to the switch's
port counters."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from plotted import bars, lines, markers, panels
from readme_sections import blocks, section

from experiments.allreduce_net import need_root
from experiments.plot import draw_figures

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("Experiments: sweeps, the model, the table and the figures")
COMMANDS = [line for text in blocks(SECTION, "") for line in text.strip().splitlines()]
SMALL = "1e4"


def run(command: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = command.replace(".venv/bin/", f"{ROOT}/.venv/bin/").split() + list(extra)
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_the_section_shows_every_verb() -> None:
    verbs = [c.split()[1] for c in COMMANDS]
    # the model at scale and its validation: tests/experiments/test_model_readme.py
    assert verbs == ["run", "run", "show", "plot", "model", "model", "run", "run", "run",
                     "model", "model"]


def test_model_command() -> None:
    [command] = [c for c in COMMANDS if " model --workers " in c]
    proc = run(command, ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "N = 8, S = 1000000 float32 values (4000000 B), B = 10 Mbit/s" in proc.stdout
    assert "in-network over ring: 1.99" in proc.stdout


def test_the_experiment_file_is_the_one_shown() -> None:
    [shown] = blocks(SECTION, "toml")
    shipped = (ROOT / "experiments" / "speedup.toml").read_text()
    assert tomllib.loads(shown) == tomllib.loads(shipped)


def _check_sweep(doc: dict[str, Any], points: int) -> None:
    ms = doc["measurements"]
    assert len(ms) == points
    for m in ms:
        assert m["ok"] and m["check"]["ok"], (m["point"], m["errors"])
        model = m["model"]
        assert m["completion_s"] > 0 and model["seconds"] > 0
        assert m["monitor"]["processes"] and m["monitor"]["links"]
        if m["point"]["algo"] == "ina":  # retransmissions can only add
            assert m["bytes_sent_per_host"] >= model["bytes_sent_per_host"]
        else:  # TCP payload: exactly the schedule's
            assert m["bytes_sent_per_host"] == pytest.approx(model["bytes_sent_per_host"])
        assert m["wire_bytes_sent_per_host"] == pytest.approx(
            model["wire_bytes_sent_per_host"], rel=0.08)
        # the interfaces' counters (from the agents' start to their exit) and the
        # switch's own port counters (the whole point: also TCP's handshakes and FINs)
        links = {link["iface"]: link["rx_bytes"] for link in m["monitor"]["links"]}
        for port in m["switch_counters"]["s1"]["ports"]:
            assert port["rx_bytes"] == pytest.approx(links[port["iface"]], rel=0.01,
                                                     abs=30 * 66)


def _check_figures(doc: dict[str, Any]) -> None:
    """The figures ``ina plot`` draws from the sweep show its measurements: the
    speed-up of in-network over ring at N = 4 and 8 (hollow where either point was
    cpu_bound), and every algorithm's bytes sent per host over the tensor's bytes."""
    by = {(m["point"]["topo"], m["point"]["algo"]): m for m in doc["measurements"]}
    algos = ["ina", "ring", "ps", "hd"]
    figures, notes = draw_figures(doc)
    try:
        assert list(figures) == ["speedup_vs_workers", "bytes_per_host"], notes
        [speedup] = panels(figures["speedup_vs_workers"]).values()
        points = [(n, by[f"star,{n}", "ring"]["completion_s"] / by[f"star,{n}", "ina"][
            "completion_s"]) for n in (4, 8)]
        assert lines(speedup)["40 kB per worker"] == [pytest.approx(p) for p in points]
        bound = [by[f"star,{n}", "ring"]["cpu_bound"] or by[f"star,{n}", "ina"]["cpu_bound"]
                 for n in (4, 8)]
        assert markers(speedup, hollow=True) == [
            pytest.approx(p) for p, b in zip(points, bound, strict=True) if b]
        shown = panels(figures["bytes_per_host"])
        assert list(shown) == ["star,4, 40 kB per worker", "star,8, 40 kB per worker"]
        for topo in ("star,4", "star,8"):
            heights = {label: [bars(shown[f"{topo}, 40 kB per worker"])[label][j][1]
                               for j in range(len(algos))]
                       for label in ("payload, measured", "payload, model", "wire, measured",
                                     "wire, model")}
            ms = [by[topo, algo] for algo in algos]
            assert heights == {
                "payload, measured": [m["bytes_sent_per_host"] / 40000 for m in ms],
                "payload, model": [m["model"]["bytes_sent_per_host"] / 40000 for m in ms],
                "wire, measured": [m["wire_bytes_sent_per_host"] / 40000 for m in ms],
                "wire, model": [m["model"]["wire_bytes_sent_per_host"] / 40000 for m in ms]}
    finally:
        for fig in figures.values():
            plt.close(fig)


@pytest.mark.slow
def test_sweep_then_show_and_plot(tmp_path: Path) -> None:
    why = need_root()
    if why:
        pytest.skip(why)
    sweep, from_file = [c for c in COMMANDS if " run " in c and "model-validation" not in c]
    assert " --size 1e6 " in sweep
    proc = run(sweep.replace(" --size 1e6 ", f" --size {SMALL} "), tmp_path,
               "--runs-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "in-network over ring" in proc.stdout
    [run_dir] = tmp_path.glob("*-sweep")
    _check_sweep(json.loads((run_dir / "results.json").read_text()), 2 * 4)

    [show] = [c for c in COMMANDS if " show " in c]
    proc = run(show.replace("RUN_DIR", str(run_dir)), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "busbw (Mbit/s)" in proc.stdout and "star,8  8  hd" in proc.stdout
    [plot] = [c for c in COMMANDS if " plot " in c]
    proc = run(plot.replace("RUN_DIR", str(run_dir)), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (run_dir / "plots" / "speedup_vs_workers.png").is_file()
    assert (run_dir / "plots" / "bytes_per_host.svg").is_file()
    _check_figures(json.loads((run_dir / "results.json").read_text()))

    proc = run(from_file, tmp_path, "--size", SMALL, "--repeat", "1", "--topo", "star,2",
               "--runs-dir", str(tmp_path / "file"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [run_dir] = (tmp_path / "file").glob("*-speedup")
    doc = json.loads((run_dir / "results.json").read_text())
    assert doc["sweep"]["description"].startswith("in-network vs host-based")
    _check_sweep(doc, 4)
