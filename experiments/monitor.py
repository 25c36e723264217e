"""Fidelity monitor: is a measurement the network's, or the emulator's CPU's?

An emulated network is only as good as the CPUs that run it (the idea of
Mininet-HiFi's monitors): a switch process or an agent that needs a whole core, or
one that waits for a CPU the other processes hold, stretches the timings, and the
figures then describe the emulator. While a point runs, ``Monitor`` samples

- the CPU time of each watched process with all its threads and descendants
  (``/proc/PID/stat``: utime + stime, and cutime + cstime for reaped children),
- for each of its threads, the time on a CPU and the time runnable but waiting for
  one (``/proc/PID/task/*/schedstat``, the run-queue delay),
- the machine's CPU time (``/proc/stat``),
- the bytes through each link interface (``/sys/class/net/IF/statistics``),

every ``interval`` seconds from ``release`` (the moment the agents start) until the
last agent has exited; the report keeps the links' byte counts at every sample
(``link_samples``, not in its JSON), from which ``experiments.job_results`` draws each
job's goodput over time. ``MonitorReport.verdict`` then marks the point ``cpu_bound``

- when a watched process used more than 90% of a core for most of the run (saturated),
- or when the busiest link carried well under its rate (less than 80%) while a CPU was
  saturated: all the machine's cores more than 90% busy, or a thread of a watched
  process running or waiting to run more than 90% of the time (starved: it would have
  used a core it could not get) for most of the run.

A starved switch that still keeps its links busy only adds latency, which the window
hides; its point stands. Threads count one by one: helper threads that wake up often
and queue briefly each (gRPC's pollers in the switch) do not add up to a starved one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")
BUSY = 0.9  # of a core (or of all cores, for the machine)
MOSTLY = 0.5  # of the run's samples
IDLE_LINK = 0.8  # of the link rate: "well under" it
MIN_SAMPLES = 3  # fewer: judge by the mean over the run instead
CHILDREN_EVERY = 10  # samples between looks for new descendants
PROC = Path("/proc")
SYS_NET = Path("/sys/class/net")


# ------------------------------------------------------------------- readers


def process_stat(pid: int, proc: Path = PROC) -> tuple[str, int] | None:
    """(state, CPU ticks incl. reaped children) of ``pid``; None when it is gone."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    rest = text[text.rindex(")") + 2:].split()
    # after "pid (comm) ": state ppid ... utime(11) stime(12) cutime(13) cstime(14)
    return rest[0], sum(int(x) for x in rest[11:15])


def children_of(pid: int, proc: Path = PROC) -> list[int]:
    """Direct children of every thread of ``pid``."""
    out: list[int] = []
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def descendants_of(pid: int, proc: Path = PROC) -> list[int]:
    out: list[int] = []
    todo = children_of(pid, proc)
    while todo:
        child = todo.pop()
        out.append(child)
        todo += children_of(child, proc)
    return out


def thread_times(pid: int, proc: Path = PROC) -> dict[int, tuple[int, int]]:
    """Every thread of ``pid``: (ns on a CPU, ns runnable but waiting for one)."""
    out: dict[int, tuple[int, int]] = {}
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            run, wait = (task / "schedstat").read_text().split()[:2]
            out[int(task.name)] = (int(run), int(wait))
        except (OSError, ValueError):
            continue
    return out


def machine_ticks(proc: Path = PROC) -> tuple[int, int]:
    """(busy, total) CPU ticks of all cores since boot."""
    with open(proc / "stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # guest time is already in user
    return total - idle, total


def link_bytes(iface: str, sys_net: Path = SYS_NET) -> tuple[int, int] | None:
    """(rx_bytes, tx_bytes) of an interface; None when it is gone."""
    stats = sys_net / iface / "statistics"
    try:
        return (int((stats / "rx_bytes").read_text()), int((stats / "tx_bytes").read_text()))
    except OSError:
        return None


# ------------------------------------------------------------------- report


@dataclass
class ProcessUse:
    name: str
    role: str  # "switch" or "agent"
    pid: int
    cpu_mean: float = 0.0  # cores, all threads and children, over the run
    cpu_max: float = 0.0  # cores, the busiest sample
    thread_run: float = 0.0  # the busiest thread: share of the run on a CPU
    thread_wait: float = 0.0  # ... and waiting for one
    busy_fraction: float = 0.0  # share of the samples above BUSY of a core
    starved_fraction: float = 0.0  # share of the samples in which a thread needed a core
    samples: int = 0

    @property
    def saturated(self) -> bool:
        """It used more than BUSY of a core for most of the run."""
        if self.samples < MIN_SAMPLES:
            return self.cpu_mean > BUSY
        return self.busy_fraction > MOSTLY

    @property
    def starved(self) -> bool:
        """A thread was running or waiting to run most of the time, most of the run."""
        if self.samples < MIN_SAMPLES:
            return self.thread_run + self.thread_wait > BUSY
        return self.starved_fraction > MOSTLY


@dataclass
class LinkUse:
    iface: str
    rx_bytes: int
    tx_bytes: int
    rate_mbps: float | None

    def utilization(self, seconds: float) -> float | None:
        if not self.rate_mbps or seconds <= 0:
            return None
        return max(self.rx_bytes, self.tx_bytes) * 8 / seconds / (self.rate_mbps * 1e6)


@dataclass
class MonitorReport:
    seconds: float  # from release until the last agent exited
    interval: float
    cores: int
    machine_cpu_mean: float  # share of all cores
    machine_busy_fraction: float
    machine_samples: int
    processes: list[ProcessUse] = field(default_factory=list)
    links: list[LinkUse] = field(default_factory=list)
    link_samples: list[tuple[float, dict[str, tuple[int, int]]]] = field(
        default_factory=list)
    """(seconds since the release, interface -> (rx_bytes, tx_bytes)) at every sample,
    the release's first."""

    @property
    def busiest_link_utilization(self) -> float | None:
        values = [u for link in self.links
                  if (u := link.utilization(self.seconds)) is not None]
        return max(values) if values else None

    @property
    def machine_busy(self) -> bool:
        if self.machine_samples < MIN_SAMPLES:
            return self.machine_cpu_mean > BUSY
        return self.machine_busy_fraction > MOSTLY

    def verdict(self) -> list[str]:
        """Why the point is CPU-bound (empty: it is not)."""
        reasons = [f"{p.name} ({p.role}) used more than {BUSY:.0%} of a core for "
                   f"{p.busy_fraction:.0%} of the run (mean {p.cpu_mean:.0%})"
                   for p in self.processes if p.saturated]
        link = self.busiest_link_utilization
        if link is not None and link >= IDLE_LINK:
            return reasons
        # unshaped links have no rate to fall short of: a starved CPU set the pace
        carried = (f"while the busiest link carried {link:.0%} of its rate" if link is not None
                   else "on links without a rate (unshaped)")
        reasons += [f"{p.name} ({p.role}) was starved: its busiest thread ran "
                    f"{p.thread_run:.0%} of the time and waited for a CPU "
                    f"{p.thread_wait:.0%}, {carried}"
                    for p in self.processes if p.starved and not p.saturated]
        if self.machine_busy:
            reasons.append(f"the machine's {self.cores} cores were "
                           f"{self.machine_cpu_mean:.0%} busy {carried}")
        return reasons

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        del d["link_samples"]
        d["busiest_link_utilization"] = self.busiest_link_utilization
        for link, out in zip(self.links, d["links"], strict=True):
            out["utilization"] = link.utilization(self.seconds)
        return d


# ------------------------------------------------------------------ monitor


@dataclass
class _Watched:
    name: str
    role: str
    pid: int
    descendants: list[int]
    ticks: int = 0  # the tree's CPU ticks at the previous sample
    first: int = 0  # ... at the release
    threads: dict[int, tuple[int, int]] = field(default_factory=dict)  # previous sample
    first_threads: dict[int, tuple[int, int]] = field(default_factory=dict)  # release
    cpu: list[float] = field(default_factory=list)  # per sample, cores
    demand: list[float] = field(default_factory=list)  # per sample, busiest thread
    alive: bool = True


class Monitor:
    """Samples the watched processes and links in a thread (see the module docstring).

    ``watch`` the switches before the run, ``release`` with the agents' PIDs when they
    start, ``stop`` after they have finished."""

    def __init__(self, links: dict[str, float | None] | None = None,
                 interval: float = 0.05, clock: Callable[[], float] = time.monotonic,
                 proc: Path = PROC, sys_net: Path = SYS_NET) -> None:
        self.interval = interval
        self.clock = clock
        self.proc = proc
        self.sys_net = sys_net
        self.link_rates = dict(links or {})
        self._watched: list[_Watched] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0
        self._prev = 0.0
        self._end: float | None = None
        self._links0: dict[str, tuple[int, int]] = {}
        self._links1: dict[str, tuple[int, int]] = {}
        self._link_samples: list[tuple[float, dict[str, tuple[int, int]]]] = []
        self._machine: list[float] = []
        self._machine0 = (0, 0)
        self._machine_prev = (0, 0)
        self._count = 0

    def watch(self, processes: dict[str, int], role: str) -> None:
        """Add processes (name -> PID) to watch from the next sample on."""
        with self._lock:
            for name, pid in processes.items():
                w = _Watched(name, role, pid, descendants_of(pid, self.proc))
                self._baseline(w)
                self._watched.append(w)

    def release(self, agents: dict[str, int]) -> None:
        """The agents (name -> PID) start now: the run begins."""
        self.watch(agents, "agent")
        with self._lock:
            for w in self._watched:  # the run starts now for the switches too
                self._baseline(w)
            self._start = self.clock()
            self._prev = self._start
            self._links0 = self._read_links()
            self._link_samples = [(0.0, self._links0)]
            self._machine0 = self._machine_prev = machine_ticks(self.proc)
        self._thread = threading.Thread(target=self._loop, name="monitor", daemon=True)
        self._thread.start()

    def stop(self) -> MonitorReport:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._thread is not None and self._end is None:
                self._sample(final=True)
            return self._report()

    # ---------------------------------------------------------------- internal

    def _baseline(self, w: _Watched) -> None:
        tree = [w.pid, *w.descendants]
        w.ticks = w.first = self._tree_ticks(tree)
        w.threads = self._tree_threads(tree)
        w.first_threads = dict(w.threads)

    def _tree_threads(self, pids: Iterable[int]) -> dict[int, tuple[int, int]]:
        out: dict[int, tuple[int, int]] = {}
        for pid in pids:
            out.update(thread_times(pid, self.proc))
        return out

    def _tree_ticks(self, pids: Iterable[int]) -> int:
        total = 0
        for pid in pids:
            st = process_stat(pid, self.proc)
            if st is not None:
                total += st[1]
        return total

    def _read_links(self) -> dict[str, tuple[int, int]]:
        out = {}
        for iface in self.link_rates:
            b = link_bytes(iface, self.sys_net)
            if b is not None:
                out[iface] = b
        return out

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                if self._end is not None:
                    return
                self._sample(final=False)

    def _sample(self, final: bool) -> None:
        now = self.clock()
        dt = now - self._prev
        self._prev = now
        self._count += 1
        agents_running = False
        for w in self._watched:
            if not w.alive:
                continue
            if self._count % CHILDREN_EVERY == 0:
                w.descendants = descendants_of(w.pid, self.proc)
            st = process_stat(w.pid, self.proc)
            if st is None or st[0] in "ZX":
                w.alive = False
            if st is not None:
                ticks = st[1] + self._tree_ticks(w.descendants)
                threads = self._tree_threads([w.pid, *w.descendants])
                if dt > 0:
                    w.cpu.append(max(ticks - w.ticks, 0) / CLK_TCK / dt)
                    w.demand.append(max(
                        [_busy_ns(now_, w.threads.get(tid)) / 1e9 / dt
                         for tid, now_ in threads.items()], default=0.0))
                w.ticks = max(ticks, w.ticks)
                w.threads.update(threads)
                for tid in threads:  # threads born since the release start from zero
                    w.first_threads.setdefault(tid, (0, 0))
            if w.role == "agent" and w.alive:
                agents_running = True
        busy, total = machine_ticks(self.proc)
        pb, pt = self._machine_prev
        if total > pt:
            self._machine.append((busy - pb) / (total - pt))
        self._machine_prev = (busy, total)
        self._links1 = self._read_links()
        self._link_samples.append((now - self._start, self._links1))
        if final or not agents_running:
            self._end = now

    def _report(self) -> MonitorReport:
        end = self._end if self._end is not None else self._start
        seconds = max(end - self._start, 0.0)
        cores = os.cpu_count() or 1
        busy, total = self._machine_prev
        b0, t0 = self._machine0
        machine_mean = (busy - b0) / (total - t0) if total > t0 else 0.0
        report = MonitorReport(seconds, self.interval, cores, machine_mean,
                               _share_above(self._machine, BUSY), len(self._machine),
                               link_samples=self._link_samples)
        for w in self._watched:
            mean = (w.ticks - w.first) / CLK_TCK / seconds if seconds > 0 else 0.0
            run = wait = 0.0
            if seconds > 0 and w.threads:
                tid = max(w.threads, key=lambda t: _busy_ns(w.threads[t],
                                                            w.first_threads.get(t)))
                (r1, w1), (r0, w0) = w.threads[tid], w.first_threads.get(tid, (0, 0))
                run, wait = (r1 - r0) / 1e9 / seconds, (w1 - w0) / 1e9 / seconds
            report.processes.append(ProcessUse(
                w.name, w.role, w.pid, mean, max(w.cpu, default=0.0), run, wait,
                _share_above(w.cpu, BUSY), _share_above(w.demand, BUSY), len(w.cpu)))
        for iface, rate in self.link_rates.items():
            if iface in self._links0 and iface in self._links1:
                (r0, t0_), (r1, t1) = self._links0[iface], self._links1[iface]
                report.links.append(LinkUse(iface, r1 - r0, t1 - t0_, rate))
        return report


def _busy_ns(now: tuple[int, int], before: tuple[int, int] | None) -> int:
    """A thread's running plus waiting time between two samples."""
    r0, w0 = before or (0, 0)
    return max(now[0] - r0, 0) + max(now[1] - w0, 0)


def _share_above(samples: list[float], level: float) -> float:
    return sum(1 for s in samples if s > level) / len(samples) if samples else 0.0
