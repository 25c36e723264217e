"""The options of one all-reduce experiment (``RunOptions``) and their registry.

Every option is a ``Field``: its ``ina run`` flag, its key in an experiment file
(the flag without dashes, ``-`` as ``_``), how a value is read from either (command-line
text or a TOML value) and what a valid value is. ``ina run``'s parser, the experiment
files and ``RunOptions.validate`` all go through ``FIELDS``, so a new option is one
entry here. Fields marked ``axis`` take a list in a sweep (``--size 1e4,1e5``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from experiments.jobspec import TARGETS, JobEntry, JobSpec
from hosts.baselines.collective import DEFAULT_SEGMENT
from hosts.inputs import DISTRIBUTIONS, MAX_SIZE
from hosts.quantize import Scaling
from hosts.wire import ALLOWED_K

WINDOW = {"builtin": 64, "bmv2": 16}
"""An in-network job's default window (chunks in flight) per switch. BMv2 handles a
few hundred aggregation packets a second: 16 chunks per worker already keep it busy,
and a larger window only queues packets in it (which delays everything behind them,
the controller's liveness probes too) and overflows its queues."""

PROBE_PERIOD_MS = {"builtin": 100.0, "bmv2": 100.0}
"""The controller's default probe period per switch."""

NO_FALLBACK = "none"
"""``--fallback none``: an in-network job that the switches cannot serve fails, saying
why, instead of running by a host-based algorithm."""

ROUTINGS = ("ecmp", "shortest")
"""How the controller routes IPv4 between hosts: ``ecmp``, over every equal-cost path
by a hash of the 5-tuple (where the program has ECMP), or ``shortest``, one shortest
path per destination (the lowest port)."""


ON_FULL = ("refuse", "shrink", "fallback")
"""What becomes of an in-network job whose window the switches' register arrays cannot
give: ``refuse``, the job fails with the reason; ``shrink``, it gets the slots that are
free (``controller.jobs``) and its window shrinks to them; ``fallback``, it runs by a
host-based algorithm (``--fallback``) instead."""
PROGRAM_SLOTS = 256  # INA_SLOTS of p4/aggregation.p4 (controller.jobs.DEFAULT_TOTAL_SLOTS)
MAX_SLOTS = 65536
MAX_WINDOW = 256  # the 8 bits of the packet's slot
MAX_JOBS = 253  # one host each, at most
MAX_START = 3600.0  # seconds


class RunError(RuntimeError):
    """The network or a job could not run, or an option is bad; the message says what
    and where."""


@dataclass(frozen=True)
class RunOptions:
    """One measurement point: everything ``run_allreduce`` needs."""

    topo: str = "star,4"
    algo: str = "ina"
    size: int = 100_000
    dist: str = "normal"
    seed: int = 0
    check: bool = False
    bw: float | None = None  # Mbit/s of every link (None: unshaped)
    loss: float = 0.0  # per switch port and direction
    duplicate: float = 0.0  # per switch port and direction
    target: str = "builtin"
    window: int | None = None  # chunks in flight; None: WINDOW[target]
    k: int = 64
    scaling: str = "tight"
    timeout_ms: float = 100.0
    runs_dir: str = "runs"
    root: str | None = None  # the root switch of an in-network job's tree
    cli: bool = False  # set the point up and leave the user at the mininet> prompt
    pcap: bool = False  # keep every switch port's capture
    ps_host: str | None = None  # --algo ps: the host that sums (default: the first)
    segment: int = DEFAULT_SEGMENT  # host-based: float32 values per TCP message
    routing: str = "ecmp"  # the IPv4 routes: one of ROUTINGS
    cluster: str | None = None  # a cluster file: the network on several servers
    jobs: tuple[JobEntry, ...] = ()  # several jobs at once (none: one job of every host)
    on_full: str = "refuse"  # one of ON_FULL
    fallback: str = "ring"  # a job the switches cannot serve runs this (or none)
    slots: int = PROGRAM_SLOTS  # the program's register slots, shared by its jobs
    faults: tuple[str, ...] = ()  # experiments.faults specs, injected during the run
    probe_period_ms: float | None = None  # the controller's probes; None: PROBE_PERIOD_MS
    hold_s: float = 10.0  # how long a job nothing can serve waits for the fabric to heal

    def validate(self) -> None:
        """Raise ``RunError`` naming the first bad option."""
        for f in FIELDS.values():
            problem = f.check(getattr(self, f.attr))
            if problem:
                raise RunError(f"{f.option} {show_value(getattr(self, f.attr))}: {problem}")
        problem = self.cross_check()
        if problem:
            raise RunError(problem)

    def cross_check(self) -> str | None:
        """What is wrong with the combination of options (None when nothing is). Loss
        and duplication work on every target, but BMv2 gets them from the kernel
        (``topologies.kernel_impair``), on host links only."""
        from topologies.spec import parse_topo_spec

        topo = parse_topo_spec(self.topo)
        for option, name, kind, plural, names in (
                ("--root", self.root, "switch", "switches", topo.switches()),
                ("--ps-host", self.ps_host, "host", "hosts", topo.hosts())):
            if name is not None and name not in names:
                listed = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
                return f"{option} {name}: not a {kind} of {self.topo} ({plural}: {listed})"
        if self.cluster is not None:
            problem = _cluster_placement(self.cluster, topo)
            if problem:
                return f"--cluster {self.cluster}: {problem}"
            if (self.loss or self.duplicate) and self.target != "builtin":
                return (f"--cluster with --loss or --duplicate needs the built-in switch "
                        f"(on {self.target}, they come from this machine's kernel)")
        if self.faults:
            problem = self._check_faults(topo)
            if problem:
                return problem
        if self.loss and self.target != "builtin" and any(
                topo.isSwitch(a) and topo.isSwitch(b) for a, b in topo.links()):
            return (f"--loss on {self.topo}'s links between switches needs the built-in "
                    f"switch (on {self.target}, loss comes from the kernel, on host links "
                    "only)")
        if self.on_full == "fallback" and self.fallback == NO_FALLBACK:
            return (f"--on-full fallback runs a job the switches have no room for by "
                    f"--fallback, which is {NO_FALLBACK}")
        return self._jobs_problem(list(topo.hosts()))  # in natural order, as the net has them

    def _jobs_problem(self, hosts: list[str]) -> str | None:
        """What is wrong with the jobs (``--jobs``, ``[[job]]``) and their windows."""
        windows = [("--window", self.job_window)] + [
            (f"{e.where or f'job {i}'}: window", e.window)
            for i, e in enumerate(self.jobs, 1) if e.window is not None]
        for what, window in windows:
            if window > self.slots:
                return (f"{what} {window}: more than the program's {self.slots} slots "
                        f"(--slots)")
        if len(self.jobs) > 1 and self.cli:
            return f"--cli sets up one job, and --jobs makes {len(self.jobs)}"
        try:
            self.job_hosts(hosts)
        except RunError as e:
            return str(e)
        return None

    def job_hosts(self, hosts: Sequence[str]) -> list[tuple[str, ...]]:
        """The hosts of every job, in job order, out of the topology's ``hosts``: an
        entry's own, or else an equal share (the first ones one more where they do not
        divide) of the hosts that no entry names, in order; ``RunError`` when a host is
        not the topology's, is in two jobs or a job gets none."""
        if not self.jobs:
            return [tuple(hosts)]
        named: dict[str, int] = {}
        for i, entry in enumerate(self.jobs, 1):
            what = entry.where or f"job {i}"
            for h in entry.hosts or ():
                if h not in hosts:
                    listed = ", ".join(hosts[:8]) + (" ..." if len(hosts) > 8 else "")
                    raise RunError(f"{what}: hosts: {h} is not a host of {self.topo} "
                                   f"(hosts: {listed})")
                if h in named:
                    raise RunError(f"{what}: hosts: {h} is in job {named[h]} already (a "
                                   f"host runs one job's agent)")
                named[h] = i
        rest = [h for h in hosts if h not in named]
        shared = [i for i, e in enumerate(self.jobs) if e.hosts is None]
        out: list[tuple[str, ...]] = [e.hosts or () for e in self.jobs]
        at = 0
        for n, i in enumerate(shared):
            count = len(rest) // len(shared) + (n < len(rest) % len(shared))
            out[i] = tuple(rest[at:at + count])
            at += count
        for i, group in enumerate(out, 1):
            if not group:
                entry = self.jobs[i - 1]
                what = (f"--jobs {len(self.jobs)}" if len(shared) == len(self.jobs)
                        and not entry.where else entry.where or f"job {i}")
                raise RunError(f"{what}: {self.topo} has {len(rest)} hosts for "
                               f"{len(shared)} jobs" + (f" (besides the {len(named)} "
                                                        f"named)" if named else ""))
        return out

    def _check_faults(self, topo: Any) -> str | None:
        from experiments.allreduce_net import AGENT_TIMEOUT
        from experiments.faults import check_faults, parse_faults

        if self.cli:
            return ("--fault schedules faults in a measured run; at the --cli prompt, "
                    "inject them by hand with the fault command")
        if self.cluster is not None:
            return ("--fault needs the network on this machine, not --cluster (the faults "
                    "and the agents' control channel are this machine's)")
        return check_faults(parse_faults(self.faults), topo.hosts(), topo.switches(),
                            topo.links(), AGENT_TIMEOUT)

    @property
    def probe_period(self) -> float:
        """Seconds between the controller's liveness probes (``PROBE_PERIOD_MS``)."""
        ms = self.probe_period_ms if self.probe_period_ms is not None else \
            PROBE_PERIOD_MS[self.target]
        return ms / 1000.0

    @property
    def job_window(self) -> int:
        """A job's window: ``--window``, or the switch's default (``WINDOW``)."""
        return self.window if self.window is not None else WINDOW[self.target]

    def job(self, job_id: int, workers: Sequence[str]) -> JobSpec:
        """The job of this point, on ``workers`` (rank = position)."""
        return JobSpec(job_id, tuple(workers), self.size, self.dist, self.seed,
                       self.job_window, self.k, self.scaling, self.timeout_ms, self.root,
                       self.ps_host, self.segment, self.algo)

    def job_specs(self, new_id: Callable[[], int], hosts: Sequence[str]) -> list[JobSpec]:
        """The jobs of this point out of the topology's ``hosts`` (one of them all, or
        one per entry of ``jobs``: ``job_hosts``), with ids from ``new_id``."""
        if not self.jobs:
            return [self.job(new_id(), hosts)]
        out = []
        for entry, workers in zip(self.jobs, self.job_hosts(hosts), strict=True):
            job = self.job(new_id(), workers)
            out.append(replace(job, algo=entry.algo or self.algo,
                               size=entry.size or self.size,
                               window=entry.window or self.job_window, start=entry.start,
                               ps_host=self.ps_host if self.ps_host in workers else None))
        return out

    @property
    def workers(self) -> int:
        """The hosts of the topology, every one a worker."""
        from topologies.spec import parse_topo_spec

        return len(parse_topo_spec(self.topo).hosts())


def show_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ------------------------------------------------------------------ readers
# Each takes command-line text or a TOML value and returns the option's value, or
# raises ValueError saying what the value should be.


def read_count(value: Any) -> int:
    """A whole number, also written as ``1e6`` or ``100_000``."""
    if isinstance(value, bool):
        raise ValueError("expected a whole number")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            raise ValueError("expected a whole number (like 1000 or 1e6)") from None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise ValueError("expected a whole number (like 1000 or 1e6)")


def read_number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise ValueError("expected a number")


def read_rate(value: Any) -> float | None:
    """A link rate in Mbit/s, or ``none`` for links that are not shaped."""
    if isinstance(value, str) and value.strip().lower() == "none":
        return None
    return read_number(value)


def read_text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value.strip()


def read_jobs(value: Any) -> tuple[JobEntry, ...]:
    """``--jobs N``: N jobs, each an equal share of the hosts; an experiment file's
    ``[[job]]`` tables come read already (``experiments.job_tables``)."""
    if isinstance(value, tuple) and all(isinstance(e, JobEntry) for e in value):
        return value
    n = read_count(value)
    if n < 1:
        raise ValueError("expected a number of jobs, at least 1")
    return tuple(JobEntry() for _ in range(n))


def read_flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError("expected true or false")


# ------------------------------------------------------------------- checks


def _one_of(choices: Any) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in choices else f"not one of {', '.join(map(str, choices))}"
    return check


def _range(low: float, high: float, text: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if low <= value <= high else f"must be in {text}"
    return check


def _unset_or(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    """``check`` for a value given; None (the switch's default) passes."""
    return lambda value: None if value is None else check(value)


def _check_algo(name: str) -> str | None:
    from experiments.algorithms import ALGORITHMS

    if name in ALGORITHMS:
        return None
    return f"unknown algorithm (algorithms: {', '.join(sorted(ALGORITHMS))})"


def _check_topo(spec: str) -> str | None:
    from topologies.spec import TopoSpecError, parse_topo_spec

    try:
        parse_topo_spec(spec)
    except TopoSpecError as e:
        return str(e).removeprefix(f"topology spec {spec!r}: ")
    return None


def _check_bw(bw: float | None) -> str | None:
    if bw is None or 0 < bw <= 10_000:
        return None
    return "must be in (0, 10000] Mbit/s"


def _check_probability(p: float) -> str | None:
    return None if 0 <= p < 1 else "must be in [0, 1)"


def _check_positive(x: float) -> str | None:
    return None if x > 0 and math.isfinite(x) else "must be positive"


def _check_seed(seed: int) -> str | None:
    return None if seed >= 0 else "must be non-negative"


def _check_jobs(jobs: tuple[JobEntry, ...]) -> str | None:
    return None if len(jobs) <= MAX_JOBS else f"must be at most {MAX_JOBS}"


def _check_fallback(name: str) -> str | None:
    from experiments.algorithms import ALGORITHMS

    hosts = sorted(a for a in ALGORITHMS if a != "ina")
    return None if name in (*hosts, NO_FALLBACK) else \
        f"not a host-based algorithm ({', '.join(hosts)}) or {NO_FALLBACK}"


def read_fault(value: Any) -> str:
    """One fault spec (``experiments.faults``), written the way it reads back."""
    from experiments.faults import FaultError, parse_fault

    if not isinstance(value, str):
        raise ValueError("expected a fault spec like 'link s1-s3 down at 1.5s'")
    try:
        return parse_fault(value).text
    except FaultError as e:
        raise ValueError(str(e).removeprefix(f"fault {' '.join(value.split())!r}: ")) from None


def _check_faults(specs: tuple[str, ...]) -> str | None:
    for spec in specs:
        try:
            read_fault(spec)
        except ValueError as e:
            return f"{spec!r}: {e}"
    return None


def _check_period(ms: float | None) -> str | None:
    return None if ms is None or 10 <= ms <= 10_000 else "must be in [10, 10000] ms"


def _check_dir(path: str) -> str | None:
    return None if path else "must not be empty"


def _check_cluster(path: str | None) -> str | None:
    from topologies.cluster.spec import ClusterFileError, load_cluster_file

    if path is None:
        return None
    try:
        load_cluster_file(path)
    except ClusterFileError as e:
        return str(e)
    return None


def _cluster_placement(path: str, topo: Any) -> str | None:
    """What keeps the cluster file from placing ``topo``'s nodes (None: nothing)."""
    from topologies.cluster.placement import PlacementError, place_nodes
    from topologies.cluster.spec import load_cluster_file

    try:
        place_nodes(topo, load_cluster_file(path))
    except PlacementError as e:
        return str(e)
    return None


def _node_name(letter: str, kind: str) -> Callable[[str | None], str | None]:
    """The check of a node's name: ``letter`` and a number (``s1``, ``h2``)."""
    def check(name: str | None) -> str | None:
        if name is None or (name[:1] == letter and name[1:].isdigit()):
            return None
        return f"not a {kind} name ({letter}1, {letter}2, ...)"
    return check


@dataclass(frozen=True)
class Field:
    attr: str  # the RunOptions attribute
    option: str  # the ina run flag
    read: Callable[[Any], Any]
    check: Callable[[Any], str | None]
    help: str
    axis: bool = False  # a list in a sweep
    metavar: str | None = None
    repeated: bool = False  # given once per value (--fault A --fault B), kept as a tuple

    @property
    def key(self) -> str:
        """The key in an experiment file."""
        return self.option.lstrip("-").replace("-", "_")

    def parse(self, raw: Any, where: str) -> Any:
        """``raw`` read and checked; ``RunError`` naming ``where`` otherwise."""
        try:
            value = self.read(raw)
        except ValueError as e:
            raise RunError(f"{where} {show_value(raw)}: {e}") from None
        problem = self.check((value,) if self.repeated else value)
        if problem:
            raise RunError(f"{where} {show_value(value)}: {problem}")
        return value


FIELDS: dict[str, Field] = {f.attr: f for f in (
    Field("topo", "--topo", read_text, _check_topo, axis=True, metavar="SPEC",
          help="topology spec, repeatable: --topo star,4 --topo star,8 (default star,4)"),
    Field("algo", "--algo", read_text, _check_algo, axis=True, metavar="NAME[,NAME...]",
          help="all-reduce algorithms (default ina)"),
    Field("size", "--size", read_count, _range(1, MAX_SIZE, f"[1, {MAX_SIZE}]"), axis=True,
          metavar="N[,N...]", help="float32 values per worker, e.g. 1e4,1e5,1e6 "
                                   "(default 100000)"),
    Field("bw", "--bw", read_rate, _check_bw, axis=True, metavar="MBPS[,MBPS...]",
          help="link rates in Mbit/s, 'none' for unshaped links (default unshaped)"),
    Field("loss", "--loss", read_number, _check_probability, axis=True, metavar="P[,P...]",
          help="drop P of the frames on every switch port, in and out (default 0)"),
    Field("duplicate", "--duplicate", read_number, _check_probability, metavar="P",
          help="duplicate P of the frames on every switch port, in and out"),
    Field("dist", "--dist", read_text, _one_of(list(DISTRIBUTIONS)),
          help=f"input distribution: {', '.join(DISTRIBUTIONS)} (default normal)"),
    Field("seed", "--seed", read_count, _check_seed, help="input seed (default 0)"),
    Field("check", "--check", read_flag, lambda v: None,
          help="check every result against the exact sum (a wrong one fails the point)"),
    Field("target", "--target", read_text, _one_of(TARGETS),
          help="the switch: builtin (ina switch) or bmv2 (simple_switch_grpc)"),
    Field("window", "--window", read_count,
          _unset_or(_range(1, MAX_WINDOW, f"[1, {MAX_WINDOW}] (and at most --slots)")),
          metavar="S",
          help=f"in-network: chunks in flight = the job's slots (default "
               f"{WINDOW['builtin']}, {WINDOW['bmv2']} on BMv2)"),
    Field("slots", "--slots", read_count, _range(1, MAX_SLOTS, f"[1, {MAX_SLOTS}]"),
          metavar="N",
          help=f"the register slots of the switches' program (INA_SLOTS), which its jobs "
               f"share (default {PROGRAM_SLOTS})"),
    Field("jobs", "--jobs", read_jobs, _check_jobs, metavar="N",
          help="run N jobs at once, each on an equal share of the hosts (in order); "
               "an experiment file's [[job]] tables set each one (default 1)"),
    Field("on_full", "--on-full", read_text, _one_of(ON_FULL),
          metavar="|".join(ON_FULL),
          help="in-network: a job whose window the switches cannot give is refused "
               "(default), gets the slots that are free (shrink), or runs --fallback"),
    Field("fallback", "--fallback", read_text, _check_fallback, metavar="ALGO|none",
          help="the host-based algorithm an in-network job runs when the switches cannot "
               "serve it: from its start with --on-full fallback, or from where it got "
               "when no aggregation tree survives a fault (default ring; none: it "
               "fails, saying why)"),
    Field("k", "--k", read_count, _one_of(ALLOWED_K), metavar="K",
          help=f"in-network: values per packet, {', '.join(map(str, ALLOWED_K))} "
               f"(default 64)"),
    Field("scaling", "--scaling", read_text, _one_of([s.value for s in Scaling]),
          help="in-network quantizer scaling: tight or pow2 (default tight)"),
    Field("timeout_ms", "--timeout", read_number, _check_positive, metavar="MS",
          help="in-network: the agents' first retransmission timeout (default 100 ms)"),
    Field("runs_dir", "--runs-dir", read_text, _check_dir, metavar="DIR",
          help="where run directories go (default runs/)"),
    Field("root", "--root", read_text, _node_name("s", "switch"), metavar="SWITCH",
          help="in-network: the root switch of the job's aggregation tree (default: the "
               "switch that makes the tree shallowest)"),
    Field("cli", "--cli", read_flag, lambda v: None,
          help="set the network and the job up, then leave you at the mininet> prompt; "
               "everything is torn down when you leave it"),
    Field("pcap", "--pcap", read_flag, lambda v: None,
          help="keep every switch port's capture in the run directory (netN/pcaps/)"),
    Field("ps_host", "--ps-host", read_text, _node_name("h", "host"), metavar="HOST",
          help="--algo ps: the host that sums and answers (default: the first, h1)"),
    Field("segment", "--segment", read_count, _range(1, MAX_SIZE, f"[1, {MAX_SIZE}]"),
          metavar="VALUES",
          help=f"host-based algorithms: float32 values per TCP message, the unit of "
               f"pipelining (default {DEFAULT_SEGMENT})"),
    Field("routing", "--routing", read_text, _one_of(ROUTINGS), metavar="ecmp|shortest",
          help="IPv4 routes between hosts: ecmp, spread over equal-cost paths by a hash "
               "of the 5-tuple (default), or shortest, one shortest path per host"),
    Field("cluster", "--cluster", read_text, _check_cluster, metavar="FILE.toml",
          help="run the network on the servers of a cluster file (Mininet Cluster "
               "Edition: hosts and switches over ssh, tunnels between servers)"),
    Field("faults", "--fault", read_fault, _check_faults, repeated=True, metavar="SPEC",
          help="inject a fault, repeatable: 'link s1-s3 down at 1.5s', 'link s1-s3 up at "
               "3s', 'switch s2 down|up|restart at 1s', 'controller down|up|restart at "
               "1s', 'host h3 down at 2s' (seconds from the agents' start)"),
    Field("probe_period_ms", "--probe-period", read_number, _check_period, metavar="MS",
          help="with faults: the controller's liveness probes go out every MS ms on "
               "every link (default 100 on the built-in switch, 300 on BMv2)"),
    Field("hold_s", "--hold", read_number, _range(0, 300, "[0, 300] s"), metavar="SECONDS",
          help="with faults: how long a job that neither a tree nor the routes can serve "
               "waits for the fabric to heal before it fails (default 10)"),
)}
assert set(FIELDS) == {f.name for f in fields(RunOptions)}, "every option has a Field"

AXES = tuple(name for name, f in FIELDS.items() if f.axis)
