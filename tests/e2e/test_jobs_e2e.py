"""The README's "Several jobs at once" section runs as written, with smaller tensors
(1e5 values instead of 1e6): two in-network jobs on a star of 4 whose windows (12 slots
each) do not both fit in the program's 16 slots. With ``--on-full shrink`` (the
experiment file's) the second gets the 4 slots left and runs with a window of 4; with
``--on-full fallback`` (the command-line run of ``--jobs 2``) it runs ring. Both jobs
finish exact (integers, pow2 scaling) either way. The shrunk run also runs on BMv2
(where ``simple_switch_grpc`` is installed): its program compiled by p4c-bm2-ss with the
16 slots. Each command starts its own network, so no other may be up meanwhile (the
Mininet lock): this module has no network fixture."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from readme_sections import blocks, section

from experiments.allreduce_net import need_root, target_missing
from experiments.plot import draw_figures

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("Several jobs at once: shared switch memory")
COMMANDS = [line for text in blocks(SECTION, "") for line in text.strip().splitlines()]
SMALL = "1e5"


@pytest.fixture(autouse=True)
def root() -> None:
    why = need_root()
    if why:
        pytest.skip(why)


def test_the_section_shows_the_file_and_its_commands() -> None:
    import tomllib

    [shown] = blocks(SECTION, "toml")
    shipped = (ROOT / "experiments" / "two-jobs.toml").read_text()
    assert tomllib.loads(shown) == tomllib.loads(shipped)
    assert [c.split()[2] for c in COMMANDS] == ["run", "run", "run"]
    assert COMMANDS[2].endswith(" experiments/two-jobs-shared.toml")


def run(command: str, tmp_path: Path, *extra: str, size: str = SMALL
        ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    argv = command.replace(".venv/bin/", f"{ROOT}/.venv/bin/").split()[1:]  # no sudo
    argv += extra
    if "--size" in argv:
        argv[argv.index("--size") + 1] = size
    else:
        argv += ["--size", size]
    proc = subprocess.run(argv + ["--runs-dir", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    [results] = tmp_path.glob("*/results.json")
    [m] = json.loads(results.read_text())["measurements"]
    return proc, m


def exact(job: dict[str, Any]) -> bool:
    return bool(job["ok"] and job["check"]["ok"] and job["check"]["exact"])


@pytest.mark.parametrize("target", ["builtin", "bmv2"])
def test_shrink_gives_the_second_job_the_slots_left(tmp_path: Path, target: str) -> None:
    why = target_missing(target)
    if why:
        pytest.skip(why)
    proc, m = run(COMMANDS[0], tmp_path, "--target", target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert m["options"]["target"] == target
    first, second = m["jobs"]
    assert exact(first) and exact(second), (first, second)
    assert (first["hosts"], first["window"], first["on_full"]) == (["h1", "h2"], 12, None)
    assert (second["hosts"], second["algo"], second["window"], second["asked_window"],
            second["on_full"], second["start_s"]) == (["h3", "h4"], "ina", 4, 12, "shrink",
                                                      1.0)
    # the agents ran with the windows the switch gave: the 4 slots job 2 got
    windows = {w["host"]: w["settings"]["window"] for w in m["workers"]}
    assert windows == {"h1": 12, "h2": 12, "h3": 4, "h4": 4}
    assert m["completion_s"] == pytest.approx(1.0 + second["completion_s"])
    assert ("job 2 (h3,h4, from 1 s): ina, window 4 of 12 (shrunk), 100000 values"
            in proc.stdout), proc.stdout
    # each job's timeline: its hosts received their traffic between its start and its
    # end (the samples are 50 ms apart, and the last agent's exit ends the run)
    for job in (first, second):
        line = job["timeline"]
        points = list(zip([0.0, *line["t"]], line["t"], line["goodput_mbps"], strict=False))
        before = [g for _, t, g in points if t <= job["start_s"]]
        assert all(g == 0 for g in before) and len(before) >= (5 if job["start_s"] else 0)
        inside = sum(g * 1e6 * (t - t0) for t0, t, g in points
                     if t0 >= job["start_s"] - 0.1 and t <= job["end_s"] + 0.2)
        assert inside >= 0.98 * 32 * job["size"], (job["start_s"], job["end_s"], line)
    figures, _ = draw_figures({"measurements": [m]})
    try:
        assert list(figures) == ["goodput_over_time"]
    finally:
        for fig in figures.values():
            plt.close(fig)


def test_fallback_runs_the_second_job_by_ring(tmp_path: Path) -> None:
    proc, m = run(COMMANDS[1], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, second = m["jobs"]
    assert exact(first) and exact(second), (first, second)
    assert (first["hosts"], first["algo"], first["window"]) == (["h1", "h2"], "ina", 12)
    assert (second["hosts"], second["algo"], second["asked_algo"], second["on_full"]) == (
        ["h3", "h4"], "ring", "ina", "fallback")
    assert second["note"].startswith("ran ring, not ina: job 2 does not fit: with root s1: "
                                     "switch s1: no free region of 12 slots")
    assert {w["host"]: w["algo"] for w in m["workers"]} == {
        "h1": "ina", "h2": "ina", "h3": "ring", "h4": "ring"}
    assert "job 2 (h3,h4): ring (fallback: ina did not fit), 100000 values" in proc.stdout


def test_two_jobs_that_share_the_leaf_spine_links(tmp_path: Path) -> None:
    """The run whose jobs' trees share the leaf-spine links (5e5 values, so that job 1,
    from 0 s, still runs when job 2 starts at 1 s): both exact, job 2 shrunk to the 4
    slots left, and each job's goodput recorded beside the other and alone (the
    figures are a measurement: the README's, not an assertion)."""
    proc, m = run(COMMANDS[2], tmp_path, size="5e5")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, second = m["jobs"]
    assert exact(first) and exact(second), (first, second)
    assert (first["hosts"], second["hosts"]) == (["h1", "h3"], ["h2", "h4"])
    assert (first["window"], second["window"], second["asked_window"]) == (12, 4, 12)
    for job in (first, second):
        assert job["goodput_beside_mbps"] > 0 and job["goodput_alone_mbps"] > 0, job
    assert re.search(r"job 2 \(h2,h4, from 1 s\): ina, window 4 of 12 \(shrunk\), 500000 "
                     r"values: [\d.]+ s, goodput [\d.]+ Mbit/s \([\d.]+ beside another job, "
                     r"[\d.]+ alone\)", proc.stdout), proc.stdout
