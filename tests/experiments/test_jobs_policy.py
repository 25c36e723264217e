"""Several jobs at once without Mininet: ``run_jobs`` over a stand-in network whose
controller is a real ``JobTable`` (16 slots) and whose agents hand back the exact sum
at once. What ``--on-full`` does to a job the slots cannot hold (the window it runs
with, the algorithm, the agents' options, its note), what a measurement records per job
(``experiments.job_results``: the goodput timeline from the links' samples), and what
``ina show`` and ``ina plot`` make of it."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from plotted import lines, panels

from controller.jobs import JobError, JobTable
from controller.topology import Topology
from experiments.allreduce_net import AgentOutcome
from experiments.job_results import fill_several, goodput_timeline, job_record
from experiments.jobs import JobOutcome, run_jobs
from experiments.jobspec import AgentSpec, JobSpec
from experiments.monitor import MonitorReport
from experiments.options import RunOptions
from experiments.plot import draw_figures, timeline_label
from experiments.run_allreduce import base_record, format_summary
from experiments.show import format_run
from experiments.summary import phase_goodput
from experiments.sweep import Point
from hosts.inputs import exact_sum
from topologies.spec import parse_topo_spec


class FakeNet:
    """What ``run_jobs`` uses of an ``AllReduceNet``: the controller's job table (no
    switches) and agents that write the exact sum of their job's inputs."""

    def __init__(self, topo: str = "star,4", slots: int = 16) -> None:
        self.table = JobTable(Topology.from_mininet(parse_topo_spec(topo)), total_slots=slots)
        self.ctl = SimpleNamespace(jobs=self.table, topology=self.table.topology)
        self.known: dict[int, JobSpec] = {}
        self.released: list[tuple[str, list[str], float]] = []
        self.created: list[tuple[int, int, bool]] = []
        self.supervisor = None  # no controller on watch (faults): no control channel

    def create_job(self, job_id: int, workers: list[str], slots: int,
                   root: str | None = None, shrink: bool = False) -> Any:
        self.created.append((job_id, slots, shrink))
        return self.table.create(job_id, workers, slots, root, shrink=shrink).job

    def delete_job(self, job_id: int) -> None:
        self.table.delete(job_id)

    def run_agents(self, agents: list[AgentSpec], timeout: float = 0.0,
                   starts: list[float] | None = None) -> list[AgentOutcome]:
        assert starts is not None and len(starts) == len(agents)
        out = []
        for a, start in zip(agents, starts, strict=True):
            self.released.append((a.host, a.args, start))
            job = self.known[int(a.output.stem.split("-")[0].removeprefix("job"))]
            np.save(a.output, exact_sum(job.inputs()).astype(np.float32))
            a.stats.write_text(json.dumps({"seconds": 0.25 + job.job_id / 10,
                                           "bytes_sent": 1000, "counters": {}}))
            out.append(AgentOutcome(a.host, 0, "", ""))
        return out


def jobs(net: FakeNet, window: int = 12) -> list[JobSpec]:
    out = [JobSpec(1, ("h1", "h2"), 1000, window=window),
           JobSpec(2, ("h3", "h4"), 2000, window=window, start=0.5, seed=3)]
    net.known = {j.job_id: j for j in out}
    return out


def option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def test_shrink_runs_the_second_job_with_the_slots_left(tmp_path: Path) -> None:
    net = FakeNet()
    first, second = run_jobs(net, jobs(net), tmp_path, on_full="shrink")  # type: ignore[arg-type]
    assert net.created == [(1, 12, True), (2, 12, True)]
    assert first.ok and first.on_full is None and first.job.window == 12
    assert second.ok and second.check is not None and second.check.ok
    assert (second.job.window, second.asked, second.on_full) == (4, jobs(net)[1], "shrink")
    assert second.note == "window 4, not 12: the switches had 4 slots free for it"
    assert [(h, option(args, "--window"), start) for h, args, start in net.released] == [
        ("h1", "12", 0.0), ("h2", "12", 0.0), ("h3", "4", 0.5), ("h4", "4", 0.5)]
    assert net.table.jobs == {}  # both deleted after the run


def test_fallback_runs_the_second_job_by_ring(tmp_path: Path) -> None:
    net = FakeNet()
    first, second = run_jobs(net, jobs(net), tmp_path, on_full="fallback")  # type: ignore[arg-type]
    assert first.ok and first.job.algo == "ina"
    assert second.ok and second.job.algo == "ring" and second.on_full == "fallback"
    assert second.job.window == 12 and second.asked is not None and second.asked.algo == "ina"
    assert second.note is not None and second.note.startswith(
        "ran ring, not ina: job 2 does not fit: with root s1: switch s1: no free region of "
        "12 slots")
    assert second.check is not None and second.check.ok
    ring = [args for host, args, _ in net.released if host in ("h3", "h4")]
    assert [option(a, "--algo") for a in ring] == ["ring", "ring"]
    assert [option(a, "--peers") for a in ring] == ["10.0.0.3,10.0.0.4"] * 2
    assert net.table.jobs == {}


def test_ps_is_a_fallback_too(tmp_path: Path) -> None:
    net = FakeNet()
    _, second = run_jobs(net, jobs(net), tmp_path, on_full="fallback",  # type: ignore[arg-type]
                         fallback="ps")
    assert second.ok and second.job.algo == "ps"


def test_refuse_fails_the_job_that_does_not_fit_and_runs_the_others(tmp_path: Path) -> None:
    net = FakeNet()
    first, second = run_jobs(net, jobs(net), tmp_path)  # type: ignore[arg-type]
    assert first.ok
    assert not second.ok and second.stats == [] and second.check is None
    assert second.errors == ["job 2 does not fit: with root s1: switch s1: no free region of "
                             "12 slots in the register arrays (16 slots; free: 12..15); "
                             "delete a job or use fewer slots"]
    assert {host for host, _, _ in net.released} == {"h1", "h2"}


def test_a_tree_that_cannot_be_built_is_an_error_whatever_the_policy(tmp_path: Path) -> None:
    net = FakeNet("star,33", slots=256)
    wide = JobSpec(2, tuple(f"h{i}" for i in range(1, 34)), 100)
    net.known = {1: JobSpec(1, ("h1",), 100), 2: wide}
    with pytest.raises(JobError, match="would have 33 children"):
        run_jobs(net, [net.known[1], wide], tmp_path,  # type: ignore[arg-type]
                 on_full="fallback")
    assert net.table.jobs == {}  # job 1, set up first, is removed again


def test_jobs_fit_without_a_policy(tmp_path: Path) -> None:
    net = FakeNet()
    outcomes = run_jobs(net, jobs(net, window=8), tmp_path)  # type: ignore[arg-type]
    assert [(o.ok, o.job.window, o.note) for o in outcomes] == [(True, 8, None),
                                                                 (True, 8, None)]


# ------------------------------------------------------------ what a run records

def samples(rows: list[tuple[float, int, int]]) -> list[tuple[float, dict[str, tuple[int,
                                                                                   int]]]]:
    """(t, tx bytes of s1-eth1, of s1-eth3): h1's and h3's switch ports."""
    return [(t, {"s1-eth1": (0, a), "s1-eth3": (0, b), "s1-eth2": (0, 0)})
            for t, a, b in rows]


SAMPLES = samples([(0.0, 0, 0), (0.1, 400, 0), (0.2, 1000, 0), (0.3, 1000, 500),
                   (0.5, 1000, 1500)])


def test_the_timeline_spreads_the_tensor_as_the_hosts_received_it() -> None:
    line = goodput_timeline(SAMPLES, ["s1-eth1", "s1-eth2"], 1000)
    assert line is not None and line["t"] == [0.1, 0.2, 0.3, 0.5]
    # 32,000 bits: 40% in the first 0.1 s, 60% in the next, nothing after
    assert line["goodput_mbps"] == pytest.approx([0.128, 0.192, 0.0, 0.0])
    bits = sum(g * 1e6 * dt for g, dt in zip(line["goodput_mbps"], [0.1, 0.1, 0.1, 0.2],
                                             strict=True))
    assert bits == pytest.approx(32_000)
    assert goodput_timeline(SAMPLES, ["s1-eth2"], 1000) is None  # no traffic
    assert goodput_timeline([], ["s1-eth1"], 1000) is None


def test_goodput_beside_another_job_and_alone() -> None:
    """Job 1 runs from 0 to 2 s, job 2 from 1 to 3 s: each sample interval of a job's
    run counts beside the other job or alone by its middle."""
    def entry(start: float, end: float, rates: list[float]) -> dict[str, Any]:
        t = [0.5 * (i + 1) for i in range(len(rates))]
        return {"start_s": start, "end_s": end,
                "timeline": {"t": t, "goodput_mbps": rates}}

    one = entry(0.0, 2.0, [8.0, 8.0, 6.0, 6.0, 0.0, 0.0])
    two = entry(1.0, 3.0, [0.0, 0.0, 2.0, 2.0, 7.0, 7.0])
    assert phase_goodput(one, [two]) == (pytest.approx(6.0), pytest.approx(8.0))
    assert phase_goodput(two, [one]) == (pytest.approx(2.0), pytest.approx(7.0))
    assert phase_goodput(one, []) == (None, pytest.approx(7.0))
    assert phase_goodput({**one, "timeline": None}, [two]) == (None, None)
    failed = {**two, "end_s": None}  # a job that never ended ran beside it to the end
    assert phase_goodput(one, [failed])[1] == pytest.approx(8.0)


def two_job_measurement(tmp_path: Path, on_full: str) -> dict[str, Any]:
    net = FakeNet()
    outcomes: list[JobOutcome] = run_jobs(net, jobs(net), tmp_path,  # type: ignore[arg-type]
                                          on_full=on_full)
    options = RunOptions(slots=16, window=12, on_full=on_full, bw=10)
    record = base_record(Point(0, options))
    record["run_dir"] = str(tmp_path)
    report = MonitorReport(0.5, 0.05, 2, 0.5, 0.0, 10, link_samples=SAMPLES)
    ifaces = {"h1": "s1-eth1", "h2": "s1-eth2", "h3": "s1-eth3", "h4": "s1-eth4"}
    record["jobs"] = [job_record(o, options, report, ifaces) for o in outcomes]
    fill_several(record, outcomes)
    return record


def test_a_measurement_of_several_jobs(tmp_path: Path) -> None:
    m = two_job_measurement(tmp_path, "shrink")
    first, second = m["jobs"]
    assert m["ok"] and m["errors"] == []
    assert m["completion_s"] == pytest.approx(0.5 + 0.45)  # job 2 ends last
    assert [(w["host"], w["job"]) for w in m["workers"]] == [
        ("h1", 1), ("h2", 1), ("h3", 2), ("h4", 2)]
    assert first["goodput_mbps"] == pytest.approx(1000 * 32 / 0.35 / 1e6)
    assert (second["window"], second["asked_window"], second["on_full"]) == (4, 12, "shrink")
    assert (second["start_s"], second["end_s"]) == (0.5, pytest.approx(0.95))
    assert second["model"]["seconds"] > 0 and second["check"]["ok"]
    # job 1 had ended (0.35 s) when job 2 started (0.5 s): each ran alone only
    assert first["goodput_beside_mbps"] is second["goodput_beside_mbps"] is None
    rates = first["timeline"]["goodput_mbps"]  # samples at 0.1, 0.2, 0.3, 0.5 s
    assert first["goodput_alone_mbps"] == pytest.approx(sum(rates[:3]) / 3)
    assert second["timeline"]["goodput_mbps"] == pytest.approx(
        [0.0, 0.0, 64_000 / 3 / 0.1 / 1e6, 64_000 * 2 / 3 / 0.2 / 1e6], rel=1e-3)
    summary = format_summary(m)
    assert "job 2 (h3,h4, from 0.5 s): ina, window 4 of 12 (shrunk), 2000 values: 0.450 s" \
        in summary
    assert "window 4, not 12: the switches had 4 slots free for it" in summary


def test_show_and_plot_a_run_of_several_jobs(tmp_path: Path) -> None:
    doc = {"measurements": [two_job_measurement(tmp_path, "shrink"),
                            two_job_measurement(tmp_path, "fallback")]}
    doc["measurements"][1]["index"] = 1
    text = format_run(doc)
    rows = [line.split() for line in text.splitlines() if line.startswith(("    1", "    2"))]
    # the model's columns (alone, and time over it) are the model's; the check passed
    assert [r[:11] + r[-1:] for r in rows[:3]] == [
        ["1", "star,4", "1", "h1,h2", "0", "ina", "12", "4000", "0.3500", "0.3500", "0.09",
         "ok"],
        ["1", "star,4", "2", "h3,h4", "0.5", "ina", "4/12", "8000", "0.4500", "0.9500",
         "0.14", "ok"],
        ["2", "star,4", "1", "h1,h2", "0", "ina", "12", "4000", "0.3500", "0.3500", "0.09",
         "ok"]]
    assert rows[3][:12] + rows[3][-1:] == [
        "2", "star,4", "2", "h3,h4", "0.5", "ring", "(fallback)", "-", "8000", "0.4500",
        "0.9500", "0.14", "ok"]
    assert "in-network over ring" not in text  # no row of one job at a time
    figures, notes = draw_figures(doc)
    assert list(figures) == ["goodput_over_time"] and len(notes) == 4
    shown = panels(figures["goodput_over_time"])
    assert list(shown) == ["point 1: star,4, 10 Mbit/s, 16 slots, --on-full shrink",
                           "point 2: star,4, 10 Mbit/s, 16 slots, --on-full fallback"]
    for m, ax in zip(doc["measurements"], shown.values(), strict=True):
        drawn = lines(ax)
        for n, job in enumerate(m["jobs"], 1):
            line = job["timeline"]
            assert drawn[timeline_label(n, job)] == list(zip(
                [0.0, *line["t"]], [0.0, *line["goodput_mbps"]], strict=True))
        assert drawn["link rate"][0][1] == 10
    labels = [timeline_label(n, j) for n, j in enumerate(doc["measurements"][1]["jobs"], 1)]
    assert labels == ["job 1 (h1,h2): ina, window 12", "job 2 (h3,h4): ring, fallback"]
    import matplotlib.pyplot as plt

    for fig in figures.values():
        plt.close(fig)


def test_a_refused_job_fails_its_measurement(tmp_path: Path) -> None:
    m = two_job_measurement(tmp_path, "refuse")
    first, second = m["jobs"]
    assert first["ok"] and not second["ok"] and not m["ok"]
    refusal = ("job 2 does not fit: with root s1: switch s1: no free region of 12 slots in "
               "the register arrays (16 slots; free: 12..15); delete a job or use fewer "
               "slots")
    assert m["errors"] == [refusal] and second["errors"] == [refusal]
    assert (second["completion_s"], second["timeline"], second["window"]) == (None, None, 12)
    assert m["completion_s"] == pytest.approx(0.35)  # job 1's end
    summary = format_summary(m)
    assert f"job 2 (h3,h4, from 0.5 s): ina, window 12, 2000 values: FAILED: {refusal}" \
        in summary
    assert "error:" not in summary  # said once, on the job's line
