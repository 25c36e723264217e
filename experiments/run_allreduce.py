"""All-reduce experiments, start to finish: ``ina run`` and ``run_allreduce``.

    from experiments.run_allreduce import run_allreduce
    results = run_allreduce(topo="star,4", size=100_000, check=True)

runs one point; ``run_sweep(sweep)`` runs every point of a ``experiments.sweep.Sweep``.
A sweep starts one Mininet network per group of points that share a topology, link
rate, switch target, K, routing and the program's slots (``experiments.allreduce_net``),
sets the switch ports' impairments (``loss``, ``duplicate``) for each point, runs the
point's job with every host of the topology as a worker, or its several jobs at once
(``--jobs``, ``[[job]]``; ``experiments.jobs``), with the fidelity monitor watching
(``experiments.monitor``), and stores the measurement with the model's prediction
(``experiments.model``) and each job's figures (``experiments.job_results``) in one
run directory under ``runs_dir`` (``experiments.results``). A point that fails is
recorded with its error and the sweep goes on; a network whose switch died is started
again for the next point.

``run_allreduce`` returns the point's measurement as a dict; ``run_sweep`` a
``SweepOutcome`` with the whole results document.
"""

from __future__ import annotations

import io
import itertools
import os
import traceback
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from experiments.allreduce_net import AllReduceNet, need_root
from experiments.fault_run import FaultSession
from experiments.fault_show import fault_text
from experiments.job_results import (
    fill_several,
    job_error,
    job_record,
    job_result,
    jobs_lines,
)
from experiments.jobs import JobOutcome, run_jobs
from experiments.model import ModelInput, bus_factor, predict
from experiments.monitor import Monitor, MonitorReport
from experiments.options import RunError, RunOptions
from experiments.progress import Progress
from experiments.results import new_document, write_results
from experiments.rundir import RunDir
from experiments.summary import several
from experiments.sweep import Point, Sweep, network_label
from hosts.baselines.collective import DEFAULT_SEGMENT

if TYPE_CHECKING:
    from experiments.train_sweep import TrainSweep

__all__ = ["RunError", "RunOptions", "SweepOutcome", "format_summary", "impairment_spec",
           "run_allreduce", "run_sweep"]

MAX_JOB_ID = 0xFFFF


def impairment_spec(loss: float, duplicate: float) -> str | None:
    parts = [f"loss={loss:g}"] if loss else []
    parts += [f"duplicate={duplicate:g}"] if duplicate else []
    return ",".join([*parts, "direction=both"]) if parts else None


def model_for(options: RunOptions, workers: int) -> dict[str, Any] | None:
    from experiments.model_topology import ShapeError, shape_of

    try:
        shape = shape_of(options.topo)
    except ShapeError:
        shape = None
    m = ModelInput(workers, options.size, options.bw, k=options.k, window=options.job_window,
                   shape=shape if shape and shape.hosts == workers else None)
    prediction = predict(options.algo, m)
    return prediction.to_json() if prediction else None


def estimate_seconds(point: Point) -> float:
    """What a point should take (for the progress bar's ETA)."""
    try:
        model = model_for(point.options, point.options.workers)
    except Exception:
        return 0.0
    return (model or {}).get("seconds") or 0.0


@dataclass
class SweepOutcome:
    run_dir: Path
    doc: dict[str, Any]

    @property
    def ok(self) -> bool:
        return bool(self.doc["ok"])

    @property
    def measurements(self) -> list[dict[str, Any]]:
        return list(self.doc["measurements"])


# ------------------------------------------------------------ one network


class NetworkRunner:
    """The points of one network: starts it when needed (again if a switch died), sets
    the impairments and runs each point's job."""

    needs_root = True

    def __init__(self, key: tuple[Any, ...], work_dir: Path, run_dir: RunDir) -> None:
        self.key = key
        self.topo, self.bw, self.target, self.k, self.routing, self.slots = key
        self.work_dir = work_dir
        self.run_dir = run_dir
        self.net: AllReduceNet | None = None
        self.impairment: str | None = None
        self.job_ids = itertools.count(1)
        self.start_error: str | None = None
        self.pcap = False  # keep the switch ports' captures (the sweep's --pcap)
        self.cluster: str | None = None  # the sweep's --cluster file

    def start(self) -> AllReduceNet:
        if self.net is not None and all(sw.exit_status is None for sw in self.net.switches()):
            return self.net
        self.stop()
        net = AllReduceNet(self.topo, self.work_dir, self.target, self.bw, self.k,
                           pcap=self.pcap, ecmp=self.routing == "ecmp", cluster=self.cluster,
                           slots=self.slots)
        net.start()
        self.net = net
        for pid in switch_pids(net).values():
            raise_priority(pid, SWITCH_NICE)
        self.impairment = None
        return net

    def stop(self) -> None:
        if self.net is not None:
            net, self.net = self.net, None
            net.stop()

    def impair(self, net: AllReduceNet, options: RunOptions) -> None:
        spec = impairment_spec(options.loss, options.duplicate) or "none"
        if spec != self.impairment:
            net.impair(spec)
            self.impairment = spec

    def network(self, point: Point, record: dict[str, Any]) -> AllReduceNet | None:
        """The running network for ``point`` (started if need be); None, with the
        reason in ``record["errors"]``, when it does not start."""
        if self.start_error is not None:
            record["errors"].append(self.start_error)
            return None
        self.cluster = getattr(point.options, "cluster", None)
        try:
            return self.start()
        except Exception as e:
            self.start_error = f"the network {network_label(self.key)} did not start: {e}"
            self._log(point, e)
            record["errors"].append(self.start_error)
            return None

    def next_job_id(self) -> int:
        job_id = next(self.job_ids)
        if job_id > MAX_JOB_ID:
            self.job_ids = itertools.count(2)
            job_id = 1
        return job_id

    def monitor(self, net: AllReduceNet) -> Monitor:
        """A fidelity monitor on the switches, which watches the agents from the moment
        they are released (until ``net.agent_watch`` is reset)."""
        monitor = Monitor(link_rates(net))
        monitor.watch(switch_pids(net), "switch")

        def release(agents: dict[str, int]) -> None:
            for pid in agents.values():
                raise_priority(pid, AGENT_NICE)
            monitor.release(agents)

        net.agent_watch = release
        return monitor

    @staticmethod
    def result_text(record: dict[str, Any]) -> str:
        return result_text(record)

    def run(self, point: Point) -> dict[str, Any]:
        """The point's measurement; never raises for the point's own failure."""
        options = point.options
        record = base_record(point)
        self.pcap = options.pcap
        net = self.network(point, record)
        if net is None:
            return record
        record["workers_count"] = len(net.hosts)
        if options.cluster:
            record["cluster"] = net.net.describe()
        jobs = options.job_specs(self.next_job_id, net.hosts)
        many = len(jobs) > 1
        record["model"] = None if many else model_for(options, len(net.hosts))
        record["job"] = None if many else jobs[0].to_json()
        monitor = self.monitor(net)
        before = switch_counters(net)
        outcomes: list[JobOutcome] = []
        faults: FaultSession | None = None
        try:
            self.impair(net, options)
            if options.faults:
                faults = self.watch_faults(net, options)
            out_dir = self.run_dir.sub("agents") / f"p{point.index + 1:04d}"
            outcomes = run_jobs(net, jobs, out_dir, check=options.check,
                                on_full=options.on_full, fallback=options.fallback)
            for npy in out_dir.glob("*.npy"):  # the results were checked: 4 bytes a value
                npy.unlink()
        except Exception as e:
            record["errors"].append(f"{type(e).__name__}: {e}" if not isinstance(e, RunError)
                                    else str(e))
            self._log(point, e)
        finally:
            net.agent_watch = None
            report = monitor.stop()
        after = switch_counters(net)
        hosts = host_links(net)
        record["jobs"] = [job_record(o, options, report, hosts) for o in outcomes]
        fill_record(record, options, None if many or not outcomes else outcomes[0],
                    report, counter_delta(before, after), hosts)
        if many and outcomes:
            fill_several(record, outcomes)
        if faults is not None:
            self.record_faults(record, faults, outcomes)
        return record

    def watch_faults(self, net: AllReduceNet, options: RunOptions) -> FaultSession:
        """The controller on watch and the faults ready to go when the agents start."""
        faults = FaultSession(net, options)
        release = net.agent_watch

        def and_inject(agents: dict[str, int]) -> None:
            faults.release()
            if release is not None:
                release(agents)

        net.agent_watch = and_inject
        return faults

    def record_faults(self, record: dict[str, Any], faults: FaultSession,
                      outcomes: list[JobOutcome]) -> None:
        """What the faults did, into ``record`` (and, with several jobs, what they did
        to each job into its entry of ``record["jobs"]``: ``experiments.fault_run``). A
        network whose links or switches they touched is torn down (the next point
        starts a fresh one); after controller faults alone the next point runs on the
        same switches, under the controller that took over."""
        keep = all(f.kind == "controller" for f in faults.faults)
        try:
            found = faults.finish(outcomes)
            if keep and self.net is not None:
                self.net.unsupervise()
        finally:
            if not keep:
                self.stop()
        record["errors"] += found.pop("errors")
        per_job = found.pop("per_job")
        record.update(found)
        for entry in record["jobs"] if per_job else []:
            entry.update(per_job.get(entry["job_id"]) or
                         {"faults": [], "finished_with": None, "progress": None})
        record["ok"] = record["ok"] and not record["errors"]

    def _log(self, point: Point, error: BaseException) -> None:
        with open(self.run_dir.path / "errors.log", "a") as log:
            log.write(f"point {point.index + 1} ({point.label}):\n")
            log.write("".join(traceback.format_exception(error)) + "\n")


SWITCH_NICE = -10
AGENT_NICE = -5


def raise_priority(pid: int, nice: int) -> None:
    """Give every thread of ``pid`` the scheduling priority ``nice`` (threads it starts
    later inherit it), so that work outside the experiment does not take the CPU from
    the emulated network: a switch is hardware and a host has its own cores. Quietly
    nothing where that is not allowed."""
    try:
        tasks = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return
    for tid in tasks:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        except OSError:
            pass


def switch_pids(net: AllReduceNet) -> dict[str, int]:
    return {sw.name: sw.process.pid for sw in net.local_switches() if sw.process is not None}


def link_rates(net: AllReduceNet) -> dict[str, float | None]:
    """Every switch interface (one end of every link) and its rate."""
    return {intf.name: net.bw for sw in net.local_switches() for intf in sw.intfList()
            if intf.name != "lo"}


def host_links(net: AllReduceNet) -> dict[str, str]:
    """host -> the switch interface its link ends in (its rx bytes: what the host sent)."""
    out = {}
    for host in net.hosts:
        intf = net.net.get(host).defaultIntf()
        link = intf.link
        if link is not None:
            out[host] = (link.intf2 if link.intf1 is intf else link.intf1).name
    return out


def switch_counters(net: AllReduceNet) -> dict[str, Any]:
    """Every built-in switch's port counters (nothing for BMv2)."""
    if net.target != "builtin":
        return {}
    from switch.process.control import ControlError

    out = {}
    for sw in net.switches():
        try:
            reply = sw.control({"cmd": "counters"})
        except ControlError:
            continue
        if reply.get("ok"):
            out[sw.name] = reply
    return out


COUNTERS = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes")


def counter_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What the point added to the port counters of each switch."""
    out: dict[str, Any] = {}
    for name, reply in after.items():
        old = {p["port"]: p for p in before.get(name, {}).get("ports", [])}
        ports = []
        for p in reply["ports"]:
            o = old.get(p["port"], {})
            row = {"port": p["port"], "iface": p["iface"]}
            row.update({c: p[c] - o.get(c, 0) for c in COUNTERS})
            drops = {r: n - o.get("drops", {}).get(r, 0) for r, n in p["drops"].items()}
            row["drops"] = {r: n for r, n in drops.items() if n}
            ports.append(row)
        out[name] = {"ports": ports}
    return out


# ------------------------------------------------------------ measurements


def base_record(point: Point) -> dict[str, Any]:
    return {"index": point.index, "point": point.to_json(), "options": asdict(point.options),
            "ok": False, "errors": [], "workers_count": None, "job": None,
            "completion_s": None, "goodput_mbps": None, "goodput_fraction": None,
            "algbw_mbps": None, "busbw_mbps": None, "bytes_sent_per_host": None,
            "bytes_sent_max": None, "bytes_received_per_host": None,
            "wire_bytes_sent_per_host": None, "check": None, "workers": [],
            "model": None, "monitor": None, "cpu_bound": False, "cpu_bound_reasons": [],
            "switch_counters": {}, "jobs": [], "faults": [], "finished_with": None,
            "timeline": None, "controller_events": []}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def fill_record(record: dict[str, Any], options: RunOptions, outcome: JobOutcome | None,
                report: MonitorReport, counters: dict[str, Any],
                hosts: dict[str, str]) -> None:
    """The figures of a finished (or failed) point, into ``record``."""
    record["monitor"] = report.to_json()
    record["switch_counters"] = counters
    reasons = report.verdict()
    record["cpu_bound"] = bool(reasons)
    record["cpu_bound_reasons"] = reasons
    rx = {link.iface: link.rx_bytes for link in report.links}
    wire = [rx[i] for i in hosts.values() if i in rx]
    record["wire_bytes_sent_per_host"] = _mean([float(w) for w in wire])
    if outcome is None:
        return
    data = outcome.to_json()
    record["errors"] += data["errors"]
    record["ok"] = data["ok"] and not record["errors"]
    record["check"] = data["check"]
    record["workers"] = data["workers"]
    seconds = data["completion_s"]
    if not outcome.stats or not seconds or seconds <= 0:
        return
    n = len(outcome.stats)
    record["completion_s"] = seconds
    algbw = options.size * 32 / seconds / 1e6
    record["goodput_mbps"] = record["algbw_mbps"] = algbw
    record["busbw_mbps"] = algbw * bus_factor(n)
    if options.bw:
        record["goodput_fraction"] = algbw / options.bw
    sent = [s["bytes_sent"] for s in outcome.stats if "bytes_sent" in s]
    received = [s["bytes_received"] for s in outcome.stats if "bytes_received" in s]
    if len(sent) == n:
        record["bytes_sent_per_host"] = _mean(sent)
        record["bytes_sent_max"] = max(sent)
    if len(received) == n:
        record["bytes_received_per_host"] = _mean(received)


def result_text(m: dict[str, Any]) -> str:
    """One line about a measurement, for the progress output."""
    if several(m):
        text = "; ".join(f"job {j['job_id']}: {job_result(j)}" for j in m["jobs"])
        return text + (", cpu_bound" if m["cpu_bound"] else "")
    if m["completion_s"] is None:
        return "FAILED: " + "; ".join(m["errors"])
    text = f"{m['completion_s']:.3f} s"
    model = (m.get("model") or {}).get("seconds")
    if model:
        text += f" (model {model:.3f} s)"
    if m["algbw_mbps"] is not None:
        text += f", algbw {m['algbw_mbps']:.2f} Mbit/s"
    if m["check"] is not None:
        text += ", check " + ("passed" if m["check"]["ok"] else "FAILED")
    if m["cpu_bound"]:
        text += ", cpu_bound"
    if not m["ok"]:
        text += " FAILED: " + "; ".join(m["errors"])
    return text


# ------------------------------------------------------------------ sweeps


def run_sweep(sweep: Sweep | TrainSweep, progress: Progress | None = None,
              command: list[str] | None = None,
              runner: type[NetworkRunner] | None = None) -> SweepOutcome:
    """Run every point of ``sweep`` (see the module docstring): an ``ina run`` sweep or
    an ``ina train`` one (``experiments.train_sweep.TrainSweep``, whose ``kind`` the
    results document keeps). ``runner`` runs the points of one network
    (``NetworkRunner``; ``experiments.run_train.TrainRunner``; tests give a fake)."""
    runner_class = runner or NetworkRunner
    kind = sweep.kind
    verb = "ina train" if kind == "train" else "ina run"
    why = need_root() if runner_class.needs_root and sweep.needs_network() else None
    if why:
        raise RunError(f"{verb} {why}")
    sweep.validate()
    points = sweep.points()
    if progress is None:
        progress = Progress(points, tty=False, stream=io.StringIO())
    run_dir = RunDir.create(Path(sweep.base.runs_dir).resolve(), sweep.name)
    doc = new_document(sweep.to_json(), command or [], kind)
    describe = getattr(runner_class, "result_text", result_text)
    doc["run_dir"] = str(run_dir.path)
    write_results(run_dir.path, doc)
    progress.note(f"run directory: {run_dir.path}")
    groups = itertools.groupby(points, key=lambda p: p.network_key)
    try:
        for number, (key, group) in enumerate(groups, 1):
            network = runner_class(key, run_dir.sub(f"net{number}"), run_dir)
            progress.note(f"network {number}: {network_label(key)}")
            try:
                for point in group:
                    progress.start(point)
                    record = network.run(point)
                    record["run_dir"] = str(run_dir.path)
                    doc["measurements"].append(record)
                    write_results(run_dir.path, doc)
                    progress.done(point, describe(record))
            finally:
                network.stop()
    finally:
        progress.close()
    return SweepOutcome(run_dir.path, doc)


def run_allreduce(options: RunOptions | None = None, **changes: Any) -> dict[str, Any]:
    """Run one point; its measurement (see the module docstring). Options come as a
    ``RunOptions`` or as its fields: ``run_allreduce(topo="star,8", check=True)``."""
    options = replace(options or RunOptions(), **changes)
    options.validate()
    name = f"{options.algo}-{options.topo.replace(',', '')}"
    outcome = run_sweep(Sweep(base=options, name=name))
    [record] = outcome.measurements
    return record


def format_summary(results: dict[str, Any]) -> str:
    """What ``ina run`` prints about a single point."""
    if several(results):
        return format_jobs_summary(results)
    job = results.get("job") or {}
    o = results.get("options") or {}
    workers = len(job.get("workers", [])) or results.get("workers_count") or "?"
    algo = o.get("algo", "ina")

    def setting(key: str) -> Any:
        return job.get(key, o.get(key))

    if algo == "ina":
        how = (f"K={setting('k')}, window {setting('window')}, "
               f"{setting('scaling')} scaling")
    else:
        how = f"segments of {setting('segment') or DEFAULT_SEGMENT} values"
        if algo == "ps":
            how = f"server {setting('ps_host') or (job.get('workers') or ['h1'])[0]}, {how}"
    lines = [f"all-reduce {algo} ({workers} workers, {setting('size')} float32 values, "
             f"{setting('dist')}, {how})"]
    if results["completion_s"] is not None:
        line = (f"  completion time {results['completion_s']:.3f} s, goodput "
                f"{results['goodput_mbps']:.2f} Mbit/s")
        if results.get("goodput_fraction") is not None:
            line += (f" = {100 * results['goodput_fraction']:.1f}% of the "
                     f"{o.get('bw', results.get('link_mbps')):g} Mbit/s link rate")
        lines.append(line)
        model = (results.get("model") or {}).get("seconds")
        if model:
            lines.append(f"  model {model:.3f} s ({results['completion_s'] / model:.2f}x)")
        counters = [w.get("counters", {}) for w in results["workers"]]
        if counters and all("retransmitted" in c for c in counters):
            retx = sum(c["retransmitted"] for c in counters)
            dups = sum(c.get("duplicate_results", 0) for c in counters)
            lines.append(f"  packets: retransmitted {retx}, duplicate results {dups}")
        elif counters:  # a host-based algorithm over TCP
            sent = sum(w.get("bytes_sent", 0) for w in results["workers"])
            tcp = sum(c.get("tcp_retransmits", 0) for c in counters)
            lines.append(f"  bytes sent {sent} ({sent // len(counters)} per worker), "
                         f"TCP retransmissions {tcp}")
    for f in results.get("faults") or []:
        lines.append(f"  fault {f['fault']}: {fault_text(f)}")
    if results.get("finished_with") not in (None, "ina"):
        lines.append(f"  finished by {results['finished_with']} on the hosts (no tree could "
                     "serve the job)")
    if results.get("cpu_bound"):
        lines.append("  cpu_bound: " + "; ".join(results["cpu_bound_reasons"]))
    check = results["check"]
    if check is not None:
        verdict = "PASSED" if check["ok"] else "FAILED"
        line = f"  check {verdict}: {check['message']}"
        if "max_error_over_bound" in check:
            line += (f" (max error {check['max_error']:.3g}, "
                     f"{100 * check['max_error_over_bound']:.1f}% of the allowed error"
                     f"{', exact' if check.get('exact') else ''})")
        lines.append(line)
    for e in results["errors"]:
        lines.append(f"  error: {e}")
    lines.append(f"  results: {results['run_dir']}/results.json")
    return "\n".join(lines)


def format_jobs_summary(results: dict[str, Any]) -> str:
    """What ``ina run`` prints about a single point of several jobs."""
    o = results.get("options") or {}
    slots = o.get("slots")
    lines = [f"{len(results['jobs'])} jobs at once on {o.get('topo')} (--on-full "
             f"{o.get('on_full')}; the switches' program has {slots} slots)"]
    lines += [f"  {line}" for line in jobs_lines(results)]
    for f in results.get("faults") or []:
        if not f.get("jobs"):  # what touched a job is on its lines
            lines.append(f"  fault {f['fault']}: {fault_text(f)}")
    if results["completion_s"] is not None:
        lines.append(f"  all done {results['completion_s']:.3f} s after the first job "
                     f"started")
    if results.get("cpu_bound"):
        lines.append("  cpu_bound: " + "; ".join(results["cpu_bound_reasons"]))
    named = {job_error(j, e) for j in results["jobs"] for e in j["errors"]}
    for e in results["errors"]:
        if e not in named:  # the jobs' own errors are on their lines
            lines.append(f"  error: {e}")
    lines.append(f"  results: {results['run_dir']}/results.json")
    return "\n".join(lines)
