"""What a run with faults must show, shared by the end-to-end fault tests
(``test_faults_e2e.py``) and the README's commands that run the same scenarios on the
built-in switch (``test_faults_readme.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def exact(m: dict[str, Any]) -> None:
    assert m["ok"], m["errors"]
    assert m["check"]["ok"] and "bit-identical" in m["check"]["message"], m["check"]


def link_of_the_tree_went_down(m: dict[str, Any], target: str) -> None:
    """leafspine,2,2,2 with s1-s3, a link of the job's tree (rooted at spine s3), down:
    the tree moves to s4. The probes found it (not the stall fallback, ten times as
    slow) and the job moved again; how soon is a measurement (``ina recovery``, the
    README's recovery table), not an assertion a busy machine could break."""
    exact(m)
    [f] = m["faults"]
    assert (f["detected_by"], f["algorithm"], f["root"]) == ("probes", "ina", "s4"), f
    assert f["chunks_resent"] >= 0 and m["finished_with"] == "ina"
    assert f["detection_s"] is not None and f["detection_s"] >= 0, f
    assert f["progress_s"] is not None and f["progress_s"] >= 0, f
    assert any(e["event"] == "recovered" for e in m["controller_events"])


def switch_restarted(m: dict[str, Any]) -> None:
    """star,4's only switch killed and a fresh one started: re-provisioned, exact."""
    exact(m)
    [f] = m["faults"]
    assert f["back_s"] is not None and f["root"] == "s1", f
    assert f["progress_s"] is not None, f
    ups = [e for e in m["controller_events"] if e["event"] == "up"]
    assert ups and "re-provisioned" in ups[0]["detail"], ups


def controller_replaced(measurements: list[dict[str, Any]]) -> None:
    """Two repeats with the controller killed at 1 s in each: both jobs exact, each
    controller taken over from the saved state, the second job created by a new
    controller (a higher election id) on the same switches."""
    for m in measurements:
        exact(m)
        [f] = m["faults"]
        assert f["back_s"] is not None and f["injected_s"] < f["back_s"] < 1.0 + 10, f
        [take] = [e for e in m["controller_events"] if e["event"] == "take-over"]
        assert "1 job(s) from the saved state" in take["detail"]
    assert [m["job"]["job_id"] for m in measurements] == [1, 2]
    ids = [e["election_id"] for m in measurements for e in m["controller_events"]
           if e["event"] == "take-over"]
    assert ids[1] > ids[0], ids
    # one network for both: the second job ran on the switches the first one did
    assert len(list(Path(measurements[0]["run_dir"]).glob("net*"))) == 1


def each_job_recovered(m: dict[str, Any], touched: list[int]) -> None:
    """A measurement of several jobs whose fault (one link down) touched the jobs
    ``touched``: every job exact (integers, pow2 scaling: every element equal to
    numpy's float64 sum); each job touched recovered on its own (paused, a tree rooted
    at s4, its own record), every other one was never paused and records no fault."""
    assert m["ok"], m["errors"]
    [f] = m["faults"]
    assert (f["detected_by"], f["jobs"]) == ("probes", touched), f
    for job in m["jobs"]:
        assert job["check"]["ok"] and job["check"]["exact"], job["check"]
        assert job["finished_with"] == "ina" and job["progress"]["chunks"][-1] > 0
        pauses = [len(w["control"]["pauses"]) for w in m["workers"]
                  if w["job"] == job["job_id"]]
        if job["job_id"] not in touched:
            assert job["faults"] == [] and pauses == [0] * len(job["hosts"]), job
            continue
        [mine] = job["faults"]
        assert (mine["jobs"], mine["algorithm"], mine["root"]) == (
            [job["job_id"]], "ina", "s4"), mine
        assert mine["detected_s"] == f["detected_s"] and mine["progress_s"] >= 0, mine
        assert mine["chunks_resent"] >= 0 and min(pauses) >= 1, (mine, pauses)
    recovered = [e["subject"] for e in m["controller_events"] if e["event"] == "recovered"]
    assert sorted(recovered) == [f"job {j}" for j in touched]
