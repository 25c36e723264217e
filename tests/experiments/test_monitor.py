"""The fidelity monitor against real processes (a busy loop must show as a whole core,
a sleeper as none, a child's work as its parent's), link counters from a stand-in
``/sys/class/net``, and the ``cpu_bound`` verdict."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from experiments.monitor import (
    CLK_TCK,
    LinkUse,
    Monitor,
    MonitorReport,
    ProcessUse,
    descendants_of,
    process_stat,
)

# Busy for CPU_S seconds of CPU time once a line arrives on stdin, then print the CPU
# and wall time it took: on a loaded machine the loop gets less than a core, and the
# monitor must see what the process really got.
BUSY = ("import sys, time\n"
        "sys.stdin.readline()\n"
        "w, c = time.monotonic(), time.process_time()\n"
        "while time.process_time() - c < {s}: pass\n"
        "print(time.process_time() - c, time.monotonic() - w, flush=True)\n")
PARENT_OF_BUSY = ("import subprocess, sys\n"
                  "subprocess.run([sys.executable, '-c', {code!r}])\n")
IDLE = "import sys, time\nsys.stdin.readline()\ntime.sleep({s})\n"
CPU_S = 1.0


def start(code: str) -> subprocess.Popen[str]:
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)  # past the interpreter's start-up
    return p


def watch(procs: dict[str, subprocess.Popen[str]]) -> tuple[MonitorReport, dict[str, str]]:
    """Release the processes together, wait for their exit without reaping them (so
    the last sample still reads their final CPU time), then stop the monitor."""
    monitor = Monitor(interval=0.05)
    monitor.release({name: p.pid for name, p in procs.items()})
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outputs = {}
    for name, p in procs.items():
        assert p.stdout is not None
        outputs[name] = p.stdout.read()
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    report = monitor.stop()
    for p in procs.values():
        p.wait()
    return report, outputs


def test_busy_loop_is_a_whole_core_and_a_sleeper_none() -> None:
    busy, idle = start(BUSY.format(s=CPU_S)), start(IDLE.format(s=CPU_S))
    report, out = watch({"busy": busy, "idle": idle})
    use = {p.name: p for p in report.processes}
    cpu, wall = map(float, out["busy"].split())
    # the core the loop got (1.0 on a quiet machine, less when others compete)
    assert use["busy"].cpu_mean == pytest.approx(cpu / wall, abs=0.15)
    assert use["busy"].cpu_mean * report.seconds == pytest.approx(CPU_S, abs=0.15)
    assert use["idle"].cpu_mean < 0.05 and not use["idle"].saturated
    assert use["busy"].samples >= 10
    # running or waiting to run all along: it would have used a whole core
    assert use["busy"].thread_run + use["busy"].thread_wait == pytest.approx(1.0, abs=0.15)
    assert use["busy"].thread_run == pytest.approx(use["busy"].cpu_mean, abs=0.1)
    assert use["busy"].starved and not use["idle"].starved
    # whatever share of a core it got, the loop makes the point cpu_bound (saturated,
    # or starved on these links without a rate) and the sleeper does not (the machine,
    # busy with other work, may add a reason of its own)
    verdict = report.verdict()
    [reason] = [r for r in verdict if not r.startswith("the machine's ")]
    assert reason.startswith("busy (agent) "), verdict
    if cpu / wall > 0.95:  # it had a core: saturated, which alone makes it cpu_bound
        assert use["busy"].saturated
        assert reason.startswith("busy (agent) used more than 90% of a core for ")
    elif cpu / wall < 0.8:  # others held the CPU: starved, not saturated
        assert not use["busy"].saturated
        assert reason.startswith("busy (agent) was starved: ")
    # in between, where the load of the machine decides, test_the_verdict_on_each_sample
    # holds the verdict to samples it is given


class StandInProc:
    """A stand-in ``/proc`` for the monitor, moved by the monitor's own clock: each
    call of ``clock`` is the next sample's time (``DT`` apart) and first adds that
    interval's share of a core on a CPU and waiting for one to every process, as its
    ``script`` says, and half of the machine's cores to their busy time. With the last
    sample the processes have exited (``done`` is set)."""

    DT = 1.0  # seconds between samples
    CORES = 2

    def __init__(self, root: Path, script: dict[int, list[tuple[float, float]]]) -> None:
        self.root, self.script = root, script
        self.samples = len(next(iter(script.values())))
        self.calls = 0
        self.done = threading.Event()
        self.ticks = dict.fromkeys(script, 0)
        self.run_ns = dict.fromkeys(script, 0)
        self.wait_ns = dict.fromkeys(script, 0)
        self.machine = [0, 0]  # busy and all ticks
        for pid in script:
            (root / str(pid) / "task" / str(pid)).mkdir(parents=True)
            (root / str(pid) / "task" / str(pid) / "children").write_text("")
        self._write("S")

    def _write(self, state: str) -> None:
        for pid in self.script:
            # pid (comm) state ppid pgrp session tty tpgid flags 4 faults, then utime
            # stime cutime cstime (monitor.process_stat)
            (self.root / str(pid) / "stat").write_text(
                f"{pid} (stand-in) {state} 1 1 1 0 -1 0 0 0 0 0 {self.ticks[pid]} 0 0 0 20\n")
            (self.root / str(pid) / "task" / str(pid) / "schedstat").write_text(
                f"{self.run_ns[pid]} {self.wait_ns[pid]} 1\n")
        busy, total = self.machine
        # user nice system idle iowait irq softirq steal
        (self.root / "stat").write_text(f"cpu  {busy} 0 0 {total - busy} 0 0 0 0 0 0\n")

    def clock(self) -> float:
        k = self.calls
        self.calls += 1
        if 1 <= k <= self.samples:
            for pid, shares in self.script.items():
                cpu, wait = shares[k - 1]
                self.ticks[pid] += round(cpu * self.DT * CLK_TCK)
                self.run_ns[pid] += round(cpu * self.DT * 1e9)
                self.wait_ns[pid] += round(wait * self.DT * 1e9)
            self.machine[0] += round(self.CORES * self.DT * CLK_TCK / 2)
            self.machine[1] += round(self.CORES * self.DT * CLK_TCK)
            self._write("Z" if k == self.samples else "S")
            if k == self.samples:
                self.done.set()
        return k * self.DT


def test_the_verdict_on_each_sample(tmp_path: Path) -> None:
    """Twenty samples of five processes, each with a share of a core on a CPU and one
    waiting for a CPU per sample (the busiest thread's): saturated means above 90% of
    a core in most samples (more than half), starved means on a CPU or waiting for one
    more than 90% of the time in most samples, whatever the means say."""
    script = {
        101: [(0.97, 0.03)] * 20,  # a core all along: saturated
        102: [(0.85, 0.15)] * 20,  # 85% of a core, waiting the rest: starved only
        103: [(1.0, 0.0)] * 10 + [(0.6, 0.0)] * 10,  # busy in half the samples: neither
        104: [(1.0, 0.0)] * 11 + [(0.6, 0.0)] * 9,  # ... in 11 of 20: saturated
        105: [(0.0, 0.0)] * 20,  # asleep
    }
    names = {101: "full", 102: "band", 103: "half", 104: "most", 105: "sleeper"}
    fake = StandInProc(tmp_path, script)
    monitor = Monitor(interval=0.001, clock=fake.clock, proc=tmp_path)
    monitor.release({names[pid]: pid for pid in script})
    assert fake.done.wait(30)
    report = monitor.stop()
    assert report.seconds == 20 * StandInProc.DT and report.machine_cpu_mean == 0.5
    use = {p.name: p for p in report.processes}
    assert [(use[n].samples, use[n].cpu_mean, use[n].busy_fraction, use[n].saturated,
             use[n].starved) for n in names.values()] == [
        (20, pytest.approx(0.97), 1.0, True, True),
        (20, pytest.approx(0.85), 0.0, False, True),
        (20, pytest.approx(0.8), 0.5, False, False),
        (20, pytest.approx(0.82), 0.55, True, True),
        (20, 0.0, 0.0, False, False)]
    assert (use["band"].thread_run, use["band"].thread_wait) == (
        pytest.approx(0.85), pytest.approx(0.15))
    assert report.verdict() == [
        "full (agent) used more than 90% of a core for 100% of the run (mean 97%)",
        "most (agent) used more than 90% of a core for 55% of the run (mean 82%)",
        "band (agent) was starved: its busiest thread ran 85% of the time and waited for "
        "a CPU 15%, on links without a rate (unshaped)"]


def test_two_loops_on_one_core_each_wait_half_the_time() -> None:
    pinned = "import os\nos.sched_setaffinity(0, {0})\n" + BUSY.format(s=CPU_S / 2)
    a, b = start(pinned), start(pinned)
    report, _ = watch({"a": a, "b": b})
    for use in report.processes:
        # each got about half of core 0 and waited for it the rest of the time: the
        # CPU figure alone would not show that they set the pace
        assert use.cpu_mean < 0.85  # far from the whole core each would use alone
        assert use.thread_wait > 0.25
        assert use.thread_run + use.thread_wait == pytest.approx(1.0, abs=0.15)
        assert use.starved and not use.saturated


def test_a_child_counts_for_its_parent() -> None:
    parent = start(PARENT_OF_BUSY.format(code=BUSY.format(s=CPU_S)))
    deadline = time.monotonic() + 10
    while not descendants_of(parent.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    report, out = watch({"parent": parent})
    [use] = report.processes
    cpu, wall = map(float, out["parent"].split())
    assert use.cpu_mean * report.seconds == pytest.approx(CPU_S, abs=0.2)
    assert use.cpu_mean == pytest.approx(cpu / wall, abs=0.2)


def test_a_gone_process_reads_as_none() -> None:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert process_stat(p.pid) is None


def test_links_from_the_interface_counters(tmp_path: Path) -> None:
    stats = tmp_path / "s1-eth1" / "statistics"
    stats.mkdir(parents=True)
    (stats / "rx_bytes").write_text("1000\n")
    (stats / "tx_bytes").write_text("5000\n")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.6)"])
    monitor = Monitor({"s1-eth1": 8.0, "s1-eth9": 8.0}, interval=0.05, sys_net=tmp_path)
    monitor.release({"h1": sleeper.pid})
    (stats / "rx_bytes").write_text(str(1000 + 250_000))
    (stats / "tx_bytes").write_text(str(5000 + 500_000))
    sleeper.wait()
    report = monitor.stop()
    [link] = report.links  # s1-eth9 does not exist
    assert (link.iface, link.rx_bytes, link.tx_bytes) == ("s1-eth1", 250_000, 500_000)
    # 500 kB in ~0.6 s over an 8 Mbit/s link: ~80% of the rate
    assert report.busiest_link_utilization == pytest.approx(
        500_000 * 8 / report.seconds / 8e6)


def report(processes: list[ProcessUse], machine: float, link_bytes: int,
           seconds: float = 1.0, rate: float | None = 10.0) -> MonitorReport:
    return MonitorReport(seconds, 0.05, 2, machine, 1.0 if machine > 0.9 else 0.0, 20,
                         processes, [LinkUse("s1-eth1", link_bytes, 0, rate)])


def test_verdict() -> None:
    calm = ProcessUse("s1", "switch", 1, 0.5, 0.7, 0.4, 0.1, 0.0, 0.0, 20)
    saturated = ProcessUse("s1", "switch", 1, 0.97, 1.0, 0.95, 0.02, 0.95, 0.95, 20)
    starved = ProcessUse("s1", "switch", 1, 0.2, 0.4, 0.2, 0.7, 0.0, 0.8, 20)
    busy_link, idle_link = 1_200_000, 300_000  # bytes in 1 s on 10 Mbit/s: 96%, 24%
    # a saturated switch makes the point cpu_bound, whatever the links did
    assert report([saturated], 0.6, busy_link).verdict() == [
        "s1 (switch) used more than 90% of a core for 95% of the run (mean 97%)"]
    # a starved one only when the links were idle; with them busy it only added latency
    assert report([starved], 0.6, busy_link).verdict() == []
    assert report([starved], 0.6, idle_link).verdict() == [
        "s1 (switch) was starved: its busiest thread ran 20% of the time and waited for a "
        "CPU 70%, while the busiest link carried 24% of its rate"]
    # so is a busy machine
    assert report([calm], 0.95, busy_link).verdict() == []
    assert report([calm], 0.95, idle_link).verdict() == [
        "the machine's 2 cores were 95% busy while the busiest link carried 24% of its rate"]
    assert report([calm], 0.5, idle_link).verdict() == []
    # unshaped links: a starved process or a busy machine set the pace
    assert report([starved], 0.6, busy_link, rate=None).verdict() == [
        "s1 (switch) was starved: its busiest thread ran 20% of the time and waited for a "
        "CPU 70%, on links without a rate (unshaped)"]
    assert report([calm], 0.95, busy_link, rate=None).verdict() == [
        "the machine's 2 cores were 95% busy on links without a rate (unshaped)"]
    assert report([calm], 0.5, busy_link, rate=None).verdict() == []
    # too few samples for "most of the run": the means decide
    assert ProcessUse("h1", "agent", 2, 0.95, 0.95, 0.95, 0.0, 0.0, 0.0, 2).saturated
    assert ProcessUse("h1", "agent", 2, 0.6, 0.6, 0.6, 0.35, 0.0, 0.0, 2).starved
    assert not ProcessUse("h1", "agent", 2, 0.6, 0.6, 0.6, 0.2, 0.0, 0.0, 2).starved
    assert report([calm], 0.6, idle_link).to_json()["busiest_link_utilization"] == 0.24
