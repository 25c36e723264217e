"""Fault specs (``experiments.faults``): how they read, what ``ina run`` and experiment
files refuse before anything starts, and what a point records about each fault
(``experiments.fault_run``), ``ina show`` prints and ``ina plot`` draws
(``experiments.fault_show``), on made-up events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.supervisor import Recovery
from experiments.fault_injector import Injection
from experiments.fault_run import fault_entry
from experiments.fault_show import fault_table, goodput_series
from experiments.faults import Fault, FaultError, check_faults, parse_fault
from experiments.options import RunError
from experiments.plot import plot_goodput_over_time
from experiments.sweep import build_sweep, read_experiment_file

ROOT = Path(__file__).resolve().parents[2]
LEAFSPINE = (["h1", "h2", "h3", "h4"], ["s1", "s2", "s3", "s4"],
             [("h1", "s1"), ("h2", "s1"), ("h3", "s2"), ("h4", "s2"), ("s1", "s3"),
              ("s1", "s4"), ("s2", "s3"), ("s2", "s4")])


@pytest.mark.parametrize("text, fault", [
    ("link s1-s3 down at 1.5s", Fault("link", ("s1", "s3"), "down", 1.5)),
    ("  LINK  s3-s1   up at 1500ms ", Fault("link", ("s3", "s1"), "up", 1.5)),
    ("switch s2 restart at 1", Fault("switch", ("s2",), "restart", 1.0)),
    ("controller down at .5s", Fault("controller", (), "down", 0.5)),
    ("host h3 down at 2s", Fault("host", ("h3",), "down", 2.0)),
])
def test_specs_read(text: str, fault: Fault) -> None:
    assert parse_fault(text) == fault
    assert parse_fault(fault.text) == fault  # the text reads back


@pytest.mark.parametrize("text, message", [
    ("", "empty fault spec"),
    ("router r1 down at 1s", "unknown kind 'router' (kinds: link, switch, controller, host)"),
    ("link s1 down at 1s", "a link is named by its two ends, like s1-s3, not 's1'"),
    ("link s1-s1 down at 1s", "a link joins two different nodes, not 's1-s1'"),
    ("switch s2 restart", "say when: 'at TIME' (e.g. at 1.5s)"),
    ("host h1 up at 1s", "a host can go down, not 'up'"),
    ("switch s2 down in 1s", "expected 'at TIME' after 'down', got 'in 1s'"),
    ("switch s2 down at soon", "time 'soon' is not a number of seconds like 1.5s or 1500ms"),
    ("controller", "say what happens: down or up or restart"),
])
def test_bad_specs_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(FaultError) as err:
        parse_fault(text)
    assert message in str(err.value)
    assert text.strip() == "" or f"fault {' '.join(text.split())!r}" in str(err.value)


def test_at_the_prompt_the_time_is_optional() -> None:
    assert parse_fault("switch s2 restart", need_time=False).at is None


@pytest.mark.parametrize("specs, message", [
    (["link s1-s9 down at 1s"], "no node 's9' in the topology (hosts: h1, h2, h3, h4; "
                                "switches: s1, s2, s3, s4)"),
    (["link s1-s2 down at 1s"], "there is no link between s1 and s2 (s1's links go to "
                                "h1, h2, s3, s4)"),
    (["switch h1 down at 1s"], "h1 is a host, not a switch"),
    (["host s1 down at 1s"], "s1 is a switch, not a host"),
    (["link s1-s3 up at 1s"], "the link is not down then (no earlier 'link s1-s3 down')"),
    (["link s1-s3 down at 2s", "link s3-s1 up at 1s"], "the link is not down then"),
    (["switch s3 down at 1s", "switch s3 down at 2s"], "the switch is down already then"),
    (["switch s3 down at 1s", "switch s3 restart at 2s"],
     "the switch is down then; bring it up instead"),
    (["controller up at 1s"], "the controller is not down then"),
    (["link s1-s3 down at 301s"], "301 s is past the run's time limit (300 s"),
])
def test_specs_that_do_not_fit_the_topology(specs: list[str], message: str) -> None:
    problem = check_faults([parse_fault(s) for s in specs], *LEAFSPINE, limit=300.0)
    assert problem is not None and message in problem


def test_a_sequence_that_fits() -> None:
    specs = ["link s1-s3 down at 1s", "link s3-s1 up at 2s", "link s1-s3 down at 3s",
             "switch s4 restart at 1s", "switch s4 down at 2s", "switch s4 up at 3s",
             "controller down at 1s", "controller up at 2s", "controller restart at 3s",
             "host h1 down at 4s"]
    assert check_faults([parse_fault(s) for s in specs], *LEAFSPINE, limit=300.0) is None


def settings(**values: Any) -> dict[str, Any]:
    from experiments.sweep import Setting

    return {k: Setting(v, f"--{k}") for k, v in values.items()}


def test_ina_run_options_and_files_take_faults(tmp_path: Path) -> None:
    sweep = build_sweep(settings(topo=["leafspine,2,2,2"],
                                 faults=["link s1-s3 down at 1s", "link s1-s3 up at 2s"],
                                 probe_period_ms="50", fallback="ps", hold_s="3"))
    o = sweep.base
    assert o.faults == ("link s1-s3 down at 1s", "link s1-s3 up at 2s")
    assert (o.probe_period_ms, o.fallback, o.hold_s) == (50.0, "ps", 3.0)
    path = tmp_path / "faults.toml"
    path.write_text('topo = "star,4"\nfault = ["switch s1 restart at 1s",\n'
                    '         "controller restart at 2s"]\nfallback = "none"\n')
    sweep = build_sweep(read_experiment_file(path))
    assert sweep.base.faults == ("switch s1 restart at 1s", "controller restart at 2s")
    # several jobs take faults too: each job touched recovers on its own
    path.write_text('topo = "leafspine,2,2,2"\nfault = ["link s1-s3 down at 1s"]\n'
                    '[[job]]\nhosts = ["h1", "h3"]\n[[job]]\nhosts = ["h2", "h4"]\n')
    sweep = build_sweep(read_experiment_file(path))
    assert sweep.base.faults == ("link s1-s3 down at 1s",) and len(sweep.base.jobs) == 2
    sweep = build_sweep(settings(topo=["star,4"], jobs="2",
                                 faults=["switch s1 restart at 1s"]))
    assert len(sweep.base.jobs) == 2
    path.write_text('topo = "star,4"\n\nfault = "link h1-h2 down at 1s"\n')
    with pytest.raises(RunError, match=r"fault 'link h1-h2 down at 1s': there is no link "
                                       r"between h1 and h2"):
        build_sweep(read_experiment_file(path))
    path.write_text('topo = "star,4"\n\nfault = ["switch s1 dwn at 1s"]\n')
    with pytest.raises(RunError, match=r"faults.toml:3: fault switch s1 dwn at 1s: a "
                                       r"switch can go down, up, restart, not 'dwn'"):
        build_sweep(read_experiment_file(path))


def test_bad_faults_stop_ina_run_before_anything_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No root needed: the options are refused first (status 2, one line)."""
    from ina.cli import main

    for args, message in (
            (["--topo", "star,4", "--fault", "link s1-s9 down at 1s"],
             "ina run: error: fault 'link s1-s9 down at 1s': no node 's9' in the topology"),
            (["--topo", "star,4", "--fault", "switch s1 restart at 400s"],
             "400 s is past the run's time limit"),
            (["--fault", "switch s1 restart at 1s", "--cli"],
             "--fault schedules faults in a measured run; at the --cli prompt, inject "
             "them by hand with the fault command"),
            (["--fallback", "tree"], "--fallback tree: not a host-based algorithm (hd, ps, "
                                     "ps-sharded, ring) or none"),
            (["--on-full", "fallback", "--fallback", "none"],
             "--on-full fallback runs a job the switches have no room for by --fallback, "
             "which is none"),
            (["--topo", "star,4", "--jobs", "2", "--fault", "link h1-s5 down at 1s"],
             "ina run: error: fault 'link h1-s5 down at 1s': no node 's5' in the "
             "topology"),
            (["--probe-period", "5"], "--probe-period 5: must be in [10, 10000] ms")):
        status = main(["run", *args, "--runs-dir", str(tmp_path)])
        stderr = capsys.readouterr().err
        assert status == 2, stderr
        assert message in stderr
        assert "Traceback" not in stderr
        assert not list(tmp_path.iterdir())  # nothing ran


# ------------------------------------------------------------------- records


def events() -> list[dict[str, Any]]:
    return [{"t": 10.9, "at": 10.9, "event": "hint", "subject": "job 1"},
            {"t": 11.3, "at": 11.25, "event": "down", "subject": "link s1-s3", "by": "probes"},
            {"t": 11.6, "event": "recovered", "subject": "job 1"},
            {"t": 13.2, "at": 13.1, "event": "up", "subject": "switch s2",
             "by": "it answered again"}]


def test_a_fault_is_matched_with_its_detection_and_recovery() -> None:
    rec = Recovery(1, "link s1-s3 down", 11.25, paused=11.26, start=900, resent=64,
                   resumed=11.6, moving=11.7, algorithm="ina", root="s4")
    entry = fault_entry(Injection(parse_fault("link s3-s1 down at 1s"), 11.0, 11.01),
                        events(), [rec], t0=10.0, end=4.0)
    assert (entry["injected_s"], entry["detected_s"], entry["detection_s"]) == (1.0, 1.25, 0.25)
    assert (entry["progress_s"], entry["recovered_s"]) == (0.45, 1.7)
    assert (entry["chunks_resent"], entry["algorithm"], entry["root"]) == (64, "ina", "s4")
    assert entry["detected_by"] == "probes" and entry["error"] is None
    restart = fault_entry(Injection(parse_fault("switch s2 up at 3s"), 13.0, 13.05),
                          events(), [rec], t0=10.0, end=None)
    assert (restart["back_s"], restart["note"]) == (3.1, "no job's tree used it")
    missed = fault_entry(Injection(parse_fault("switch s2 down at 9s")), events(), [],
                         t0=10.0, end=4.5)
    assert missed["error"] == "not injected: the job had finished at 4.500 s"


def record(faults: list[dict[str, Any]], chunks: list[int]) -> dict[str, Any]:
    return {"index": 0, "options": {"topo": "leafspine,2,2,2", "algo": "ina",
                                    "target": "builtin", "bw": 10},
            "faults": faults,
            "timeline": {"t": [0.1 * i for i in range(len(chunks))], "chunks": chunks,
                         "k": 256}}


def test_ina_show_prints_every_fault() -> None:
    f = fault_entry(Injection(parse_fault("link s1-s3 down at 1s"), 11.0, 11.01), events(),
                    [Recovery(1, "link s1-s3 down", 11.25, start=9, resent=64, moving=11.7,
                              algorithm="ring")], t0=10.0, end=4.0)
    text = fault_table({"measurements": [record([f], [0, 1])]})
    assert text is not None
    header, row = text.splitlines()
    assert header.split()[:4] == ["point", "fault", "injected", "(s)"]
    assert row.split() == ["leafspine,2,2,2", "ina", "builtin", "#1", "link", "s1-s3",
                           "down", "at", "1s", "1.000", "0.250", "probes", "-", "0.450",
                           "64", "ring", "on", "the", "hosts"]
    assert fault_table({"measurements": [record([], [0, 1])]}) is None


def test_goodput_over_time_with_the_faults_marked() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # 10 wire chunks of K = 256 every 0.1 s, then nothing for 0.4 s, then again.
    chunks = [10 * i for i in range(11)] + [100] * 4 + [100 + 10 * i for i in range(1, 6)]
    m = record([{"fault": "link s1-s3 down at 1s", "injected_s": 1.0, "detected_s": 1.3,
                 "recovered_s": 1.45}], chunks)
    times, rates = goodput_series(m) or ([], [])
    assert rates[:5] == [pytest.approx(20 * 256 * 32 / 0.2 / 1e6)] * 5
    assert rates[6] == 0
    fig = plot_goodput_over_time(plt, [m, record([], chunks)])  # one panel, m's
    assert fig is not None
    [ax] = [ax for ax in fig.axes if ax.get_visible()]
    [line] = [ln for ln in ax.get_lines() if ln.get_label().startswith("leafspine")]
    assert list(line.get_ydata()) == rates
    marks = sorted(ln.get_xdata()[0] for ln in ax.get_lines()
                   if ln.get_linestyle() in ("-", "--", ":") and len(set(ln.get_xdata())) == 1)
    assert marks == [1.0, 1.3, 1.45]
    plt.close(fig)
    assert plot_goodput_over_time(plt, [record([], chunks)]) is None
