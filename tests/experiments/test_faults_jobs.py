"""Faults in a measurement of several jobs, on made-up controller logs: each job's
entry keeps the faults that touched it (its own recovery: when it moved again, chunks
resent, the new root), the algorithm it finished with and its progress on the first
job's clock; a job no fault touched has none; the measurement's own entry of a fault
keeps the fault's figures and the jobs it touched. ``ina run`` prints them under each
job, ``ina show`` a row per fault and job, ``ina plot`` marks them on the jobs'
goodput (``experiments.fault_run``, ``experiments.fault_show``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from controller.supervisor import Recovery
from experiments.fault_injector import Injection
from experiments.fault_run import FaultSession
from experiments.fault_show import fault_table
from experiments.faults import parse_fault
from experiments.jobs import JobOutcome
from experiments.jobspec import JobSpec
from experiments.run_allreduce import format_summary
from experiments.show import format_run

T0 = 10.0  # the agents' start, on the clock of the controller's log


def outcome(job_id: int, workers: tuple[str, ...], start: float, seconds: float,
            finished_with: str = "ina") -> JobOutcome:
    stats = [{"seconds": seconds,
              "control": {"finished_with": finished_with,
                          "timeline": [[0.0, 0], [0.5, 40], [1.0, 80]]}}
             for _ in workers]
    return JobOutcome(JobSpec(job_id, workers, 300_000, k=256, start=start), True, [],
                      stats, [], None)


def session(injections: list[Injection], recoveries: list[Recovery]) -> FaultSession:
    """A session whose controller logged a link going down at 11.25 (probes), as the
    network's one supervisor would (no network: ``finish`` reads the logs)."""
    events = [{"t": 11.3, "at": 11.25, "event": "down", "subject": "link s1-s3",
               "by": "probes"},
              {"t": 11.6, "event": "recovered", "subject": "job 1"},
              {"t": 11.65, "event": "recovered", "subject": "job 2"}]
    s = FaultSession.__new__(FaultSession)
    s.net = SimpleNamespace(supervisors=[SimpleNamespace(events=events,  # type: ignore[assignment]
                                                         recoveries=recoveries)])
    s.first_supervisor = 0
    s.injector = SimpleNamespace(records=injections, stop=lambda: None)  # type: ignore[assignment]
    s.t0 = T0
    return s


def recovery(job: int, moving: float, resent: int) -> Recovery:
    return Recovery(job, "link s1-s3 down", 11.25, paused=11.26, start=500, resent=resent,
                    resumed=moving - 0.05, moving=moving, algorithm="ina", root="s4")


LINK_DOWN = Injection(parse_fault("link s1-s3 down at 1s"), 11.0, 11.01)


def found_for_three_jobs() -> dict[str, Any]:
    """Jobs 1 and 2 (trees through s3) touched, job 3 (on leaf s1 alone, from 0.5 s)
    not."""
    outcomes = [outcome(1, ("h1", "h4"), 0.0, 3.0), outcome(2, ("h2", "h5"), 0.0, 3.2),
                outcome(3, ("h3", "h6"), 0.5, 2.0)]
    return session([LINK_DOWN], [recovery(1, 11.6, 64), recovery(2, 11.7, 70)]
                   ).finish(outcomes)


def test_each_job_records_the_faults_that_touched_it() -> None:
    found = found_for_three_jobs()
    [f] = found["faults"]
    assert (f["injected_s"], f["detected_s"], f["detection_s"], f["detected_by"]) == (
        1.0, 1.25, 0.25, "probes")
    assert f["jobs"] == [1, 2] and f["note"] == "touched jobs 1, 2"
    assert (f["progress_s"], f["chunks_resent"], f["algorithm"]) == (None, None, None)
    assert found["finished_with"] is None and found["timeline"] is None
    per_job = found["per_job"]
    [one], [two] = per_job[1]["faults"], per_job[2]["faults"]
    assert (one["jobs"], one["progress_s"], one["recovered_s"], one["chunks_resent"],
            one["root"]) == ([1], 0.35, 1.6, 64, "s4")
    assert (two["jobs"], two["progress_s"], two["recovered_s"], two["chunks_resent"]) == (
        [2], pytest.approx(0.45), 1.7, 70)
    assert one["injected_s"] == two["injected_s"] == 1.0  # the fault's own figures too
    assert per_job[3]["faults"] == []  # its tree did not use the link
    # progress on the first job's clock: job 3 started 0.5 s after the others
    assert per_job[3]["progress"] == {"t": [0.5, 1.0, 1.5], "chunks": [0, 40, 80], "k": 256}
    assert all(per_job[j]["finished_with"] == "ina" for j in (1, 2, 3))
    assert found["errors"] == []


def test_one_job_keeps_the_fault_s_figures_in_the_measurement() -> None:
    found = session([LINK_DOWN], [recovery(1, 11.6, 64)]).finish(
        [outcome(1, ("h1", "h2", "h3", "h4"), 0.0, 3.0)])
    [f] = found["faults"]
    assert (f["jobs"], f["progress_s"], f["chunks_resent"], f["root"]) == ([1], 0.35, 64, "s4")
    assert found["per_job"] == {} and found["finished_with"] == "ina"
    assert found["timeline"]["chunks"] == [0, 40, 80]


def test_a_fault_after_every_job_ended_names_the_last_end() -> None:
    late = Injection(parse_fault("switch s2 down at 9s"))  # never injected
    found = session([late], []).finish([outcome(1, ("h1", "h3"), 0.0, 3.0),
                                        outcome(2, ("h2", "h4"), 1.0, 3.5)])
    assert found["errors"] == ["fault 'switch s2 down at 9s': not injected: the jobs had "
                               "finished at 4.500 s"]


def measurement(tmp_path: Path) -> dict[str, Any]:
    """A measurement record as ``ina run`` stores it (``NetworkRunner.record_faults``
    puts each job's figures into its entry)."""
    found = found_for_three_jobs()
    jobs = []
    for n, (hosts, start, seconds) in enumerate(
            ((["h1", "h4"], 0.0, 3.0), (["h2", "h5"], 0.0, 3.2), (["h3", "h6"], 0.5, 2.0)),
            1):
        jobs.append({"job_id": n, "hosts": hosts, "start_s": start, "algo": "ina",
                     "asked_algo": "ina", "size": 300_000, "window": 64,
                     "asked_window": 64, "on_full": None, "note": None, "ok": True,
                     "errors": [], "completion_s": seconds, "end_s": start + seconds,
                     "goodput_mbps": 9.6 / seconds, "busbw_mbps": 9.6 / seconds,
                     "bytes_sent_per_host": None, "check": {"ok": True, "exact": True},
                     "model": None,
                     "timeline": {"t": [1.0, 2.0, 3.0], "goodput_mbps": [3.0, 3.0, 3.0]},
                     **found["per_job"][n]})
    return {"index": 0, "point": {"topo": "leafspine,2,2,3"},
            "options": {"topo": "leafspine,2,2,3", "algo": "ina", "target": "builtin",
                        "bw": 10, "slots": 256, "on_full": "refuse"},
            "ok": True, "errors": [], "jobs": jobs, "completion_s": 3.2,
            "faults": found["faults"], "cpu_bound": False, "cpu_bound_reasons": [],
            "run_dir": str(tmp_path), "controller_events": []}


def test_ina_run_prints_the_faults_under_the_jobs_they_touched(tmp_path: Path) -> None:
    lines = format_summary(measurement(tmp_path)).splitlines()
    at = {line.split(":")[0].strip(): n for n, line in enumerate(lines)
          if line.lstrip().startswith("job ")}
    job1, job2, job3 = (at[f"job {n} (" + h] for n, h in
                        ((1, "h1,h4)"), (2, "h2,h5)"), (3, "h3,h6, from 0.5 s)")))
    assert lines[job1 + 1] == (
        "    fault link s1-s3 down at 1s: injected at 1.000 s; detected 0.250 s later "
        "(probes); the job moved again 0.350 s after the detection, on a tree rooted at "
        "s4, 64 chunks resent")
    assert lines[job2 + 1].startswith("    fault link s1-s3 down at 1s: ")
    assert "70 chunks resent" in lines[job2 + 1]
    assert not lines[job3 + 1].lstrip().startswith("fault")
    assert sum(line.startswith("    fault ") for line in lines) == 2


def test_ina_show_has_a_row_per_fault_and_job_it_touched(tmp_path: Path) -> None:
    m = measurement(tmp_path)
    text = fault_table({"measurements": [m]})
    assert text is not None
    rows = [line.split() for line in text.splitlines()[1:]]
    assert [r[:6] for r in rows] == [
        ["leafspine,2,2,3", "ina", "builtin", "#1", "job", "1"],
        ["leafspine,2,2,3", "ina", "builtin", "#1", "job", "2"]]
    assert [r[-7:-4] for r in rows] == [["0.350", "64", "ina,"], ["0.450", "70", "ina,"]]
    # a fault that touched no job: one row, the fault's own
    m["faults"][0].update(jobs=[], note="no job's tree used it")
    for job in m["jobs"]:
        job["faults"] = []
    text = fault_table({"measurements": [m]})
    assert text is not None
    [row] = text.splitlines()[1:]
    assert row.split()[:5] == ["leafspine,2,2,3", "ina", "builtin", "#1", "link"]
    assert row.endswith("no job's tree used it")
    assert "faults (seconds from the agents' start" in format_run({"measurements": [m]})


def test_ina_plot_marks_the_faults_on_the_jobs_goodput(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from experiments.plot import plot_goodput_over_time

    fig = plot_goodput_over_time(plt, [measurement(tmp_path)])
    assert fig is not None
    [ax] = [ax for ax in fig.axes if ax.get_visible()]
    jobs = [ln for ln in ax.get_lines() if ln.get_label().startswith("job ")]
    assert len(jobs) == 3
    marks = {(ln.get_linestyle(), ln.get_xdata()[0], ln.get_color())
             for ln in ax.get_lines() if len(set(ln.get_xdata())) == 1}
    assert ("-", 1.0, "black") in marks and ("--", 1.25, "black") in marks
    colour = {ln.get_label()[:5]: ln.get_color() for ln in jobs}
    assert ("-.", 1.6, colour["job 1"]) in marks and ("-.", 1.7, colour["job 2"]) in marks
    assert not any(style == "-." and c == colour["job 3"] for style, _, c in marks)
    assert (":", 0.5, colour["job 3"]) in marks  # job 3's start
    assert "moving again" in ax.get_title()
    plt.close(fig)
