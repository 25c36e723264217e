"""``ina agent``: one worker of an all-reduce, as a process.

    ina agent --job 1 --workers 4 --aggregator 10.0.0.254 --size 100000 --seed 7 \\
        --rank 0 --dist normal --output out.npy --stats stats.json
    ina agent --algo ring --peers 10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4 --rank 0 \\
        --size 100000 --seed 7 --output out.npy --stats stats.json

``--algo ina`` (the default) is in-network aggregation: the agent binds UDP port
48879 on every address and all-reduces its input with the other workers of the job
through the switch at the aggregator address. ``--algo ring|ps|ps-sharded|hd`` are
the host-based algorithms (``hosts.baselines``): the agent is rank ``--rank`` of the
hosts listed in ``--peers`` (``IP[:PORT]`` in rank order, port ``--port`` by
default), connects to them over TCP and all-reduces with them, through the switches'
ordinary IPv4 forwarding. Either way it writes the result (``--output``, float32
``.npy``) and its figures (``--stats``, JSON: ``algo``, ``seconds``, the completion
time, ``bytes_sent`` and ``bytes_received``, the payload bytes through its sockets,
and the algorithm's ``counters``). The input is a ``.npy`` file (``--input``) or
generated (``--size/--seed/--rank/--dist``, see ``hosts.inputs``), so that whoever
started the workers can recompute every input. With ``--start-on-stdin`` the agent
gets ready (socket bound or TCP connections made, input made), prints ``ready`` and
waits for a line on stdin before it sends anything: a start barrier for timing
several agents (the host-based algorithms also meet in a barrier of their own and
start the clock when they leave it).

Retransmission (``ina``): ``--timeout`` is the first retransmission timeout (RTO);
from then on the RTO follows the measured round-trip time of the chunks as TCP's does
(RFC 6298: smoothed RTT + 4 x its mean deviation, within
``--min-timeout``/``--max-timeout``), doubling on each timeout until a fresh
measurement. ``--fixed-timeout`` gives every packet ``--timeout`` instead (the slot's
wait still doubles on each timeout). The final smoothed RTT and RTO are in the stats
(``srtt``, ``rto``, seconds). ``--max-gather`` lets RESULTs gather for a moment before
the agent handles them, while the window is busy: fewer wake-ups, so less CPU per
chunk where eight agents and a switch share two cores.

``--control SOCKET`` (``ina``) connects the agent to the controller's control channel
(``hosts.control``): when a link or switch of the job's tree fails, the controller
pauses the agents, installs a new tree and tells them where to continue, or has them
finish over TCP (the stats then say ``control.finished_with``). The stats file gets
the channel's report (``control``: the pauses, the chunks sent again, the fallback,
the progress over time).

Exit status: 0 on success, 1 when the all-reduce failed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hosts.inputs import DISTRIBUTIONS, InputError, generate
from hosts.quantize import Scaling
from hosts.wire import ALLOWED_K, DEFAULT_K

PROG = "ina agent"
MIN_TIMEOUT_MS = 10.0
MAX_TIMEOUT_MS = 1000.0


class AgentError(Exception):
    """Bad input or settings; the message says what."""


def add_agent_parser(verbs: Any) -> None:
    """Register ``ina agent`` in the ``ina`` verbs."""
    from hosts.baselines.collective import DEFAULT_SEGMENT
    from hosts.baselines.registry import COLLECTIVES
    from hosts.baselines.tcp import CONNECT_TIMEOUT, DEFAULT_PORT

    p = verbs.add_parser("agent", help="run one all-reduce worker (e.g. in a Mininet host)",
                         description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--algo", choices=["ina", *COLLECTIVES], default="ina",
                   help="ina: in-network aggregation through the switch (default); "
                        "ring, ps, ps-sharded, hd: host-based over TCP")
    ina = p.add_argument_group("in-network aggregation (--algo ina)")
    ina.add_argument("--job", type=int, help="the job id (required)")
    ina.add_argument("--workers", type=int,
                     help="number of workers in the job (required; with the host-based "
                          "algorithms, if given, the number of --peers)")
    ina.add_argument("--aggregator", metavar="IP",
                     help="the job's aggregator address, the switch (required)")
    ina.add_argument("--window", type=int, default=64, metavar="S",
                     help="chunks in flight, at most the job's slots (default 64)")
    ina.add_argument("--timeout", type=float, default=100.0, metavar="MS",
                     help="first retransmission timeout in ms; then it adapts to the "
                          "measured RTT (default 100)")
    ina.add_argument("--min-timeout", type=float, metavar="MS",
                     help=f"lowest adaptive timeout in ms (default {MIN_TIMEOUT_MS:g}, "
                          f"or --timeout if lower)")
    ina.add_argument("--max-timeout", type=float, metavar="MS",
                     help=f"highest timeout, also the backoff limit, in ms (default "
                          f"{MAX_TIMEOUT_MS:g}, or --timeout if higher)")
    ina.add_argument("--fixed-timeout", action="store_true",
                     help="do not adapt: every packet is first given --timeout")
    ina.add_argument("--max-gather", type=float, default=20.0, metavar="MS",
                     help="let RESULTs gather up to this long (and a quarter of the "
                          "smoothed RTT) before handling them, while the window is busy; "
                          "0: handle each as it comes (default 20)")
    ina.add_argument("--k", type=int, default=DEFAULT_K, choices=ALLOWED_K,
                     help=f"values per packet, the program's INA_K (default {DEFAULT_K})")
    ina.add_argument("--scaling", choices=[s.value for s in Scaling], default="tight",
                     help="quantizer scaling, the same on every worker (default tight)")
    ina.add_argument("--control", metavar="SOCKET",
                     help="the controller's control channel (a Unix socket): it pauses, "
                          "resumes or falls back the job when its tree fails "
                          "(hosts/control.py)")
    host = p.add_argument_group("host-based algorithms (--algo ring, ps, ps-sharded, hd)")
    host.add_argument("--peers", metavar="IP[:PORT],...",
                      help="every rank's address, in rank order (required)")
    host.add_argument("--port", type=int, default=DEFAULT_PORT,
                      help=f"TCP port of a peer address without one (default "
                           f"{DEFAULT_PORT})")
    host.add_argument("--ps-host", type=int, metavar="RANK",
                      help="--algo ps: the rank that sums (default 0)")
    host.add_argument("--segment", type=int, default=DEFAULT_SEGMENT, metavar="VALUES",
                      help=f"float32 values per message; blocks are pipelined in "
                           f"segments (default {DEFAULT_SEGMENT})")
    host.add_argument("--connect-timeout", type=float, default=CONNECT_TIMEOUT,
                      metavar="SECONDS",
                      help=f"how long to retry connecting to the peers (default "
                           f"{CONNECT_TIMEOUT:g})")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--input", metavar="FILE.npy", help="the input tensor (float32)")
    src.add_argument("--size", type=int, help="generate an input of this many values")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    p.add_argument("--rank", type=int, default=0,
                   help="this worker's rank, mixed into the generator seed; with the "
                        "host-based algorithms its position in --peers (default 0)")
    p.add_argument("--dist", choices=list(DISTRIBUTIONS), default="normal",
                   help="generated input distribution (default normal)")
    p.add_argument("--output", metavar="FILE.npy", help="write the result here")
    p.add_argument("--stats", metavar="FILE.json", help="write counters and timing here")
    p.add_argument("--start-on-stdin", action="store_true",
                   help="print 'ready' and wait for a line on stdin before starting")
    p.set_defaults(func=cmd_agent)


def load_input(args: argparse.Namespace) -> npt.NDArray[np.float32]:
    if args.input is None:
        try:
            return generate(args.dist, args.size, args.seed, args.rank)
        except InputError as e:
            raise AgentError(f"generated input: {e}") from None
    try:
        array = np.load(args.input, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise AgentError(f"--input {args.input}: cannot read a .npy array: {e}") from None
    if array.dtype != np.float32:
        raise AgentError(f"--input {args.input}: expected float32 values, got {array.dtype}")
    if array.size == 0:
        raise AgentError(f"--input {args.input}: the array is empty")
    return np.ascontiguousarray(array)


def settings_from(args: argparse.Namespace) -> Any:
    from hosts.protocol import WorkerSettings

    timeout = args.timeout
    low = min(MIN_TIMEOUT_MS, timeout) if args.min_timeout is None else args.min_timeout
    high = max(MAX_TIMEOUT_MS, timeout) if args.max_timeout is None else args.max_timeout
    for option, ms in (("--timeout", timeout), ("--min-timeout", low),
                       ("--max-timeout", high)):
        if not (ms > 0 and math.isfinite(ms)):
            raise AgentError(f"{option} {ms:g}: must be a positive number of ms")
    if not 0 <= args.max_gather <= 1000:  # also refuses NaN
        raise AgentError(f"--max-gather {args.max_gather:g}: must be between 0 and 1000 ms")
    if not low <= timeout <= high:
        raise AgentError(f"--min-timeout {low:g} <= --timeout {timeout:g} <= --max-timeout "
                         f"{high:g} does not hold")
    settings = WorkerSettings(k=args.k, window=args.window, scaling=Scaling(args.scaling),
                              timeout=timeout / 1000.0, min_timeout=low / 1000.0,
                              max_timeout=high / 1000.0, adaptive=not args.fixed_timeout,
                              max_gather=args.max_gather / 1000.0)
    try:
        settings.check()
    except ValueError as e:
        raise AgentError(str(e)) from None
    return settings


def check_algo_options(args: argparse.Namespace) -> None:
    """The options of the other kind of algorithm are mistakes, not silently ignored."""
    ina_only = [("--job", args.job), ("--aggregator", args.aggregator),
                ("--control", args.control)]
    if args.algo == "ina":
        missing = [o for o, v in [*ina_only[:2], ("--workers", args.workers)] if v is None]
        if missing:
            raise AgentError(f"--algo ina needs {', '.join(missing)}")
        given = [o for o, v in (("--peers", args.peers), ("--ps-host", args.ps_host))
                 if v is not None]
        if given:
            raise AgentError(f"{given[0]} is for the host-based algorithms, not --algo ina")
        return
    if args.peers is None:
        raise AgentError(f"--algo {args.algo} needs --peers (every rank's address)")
    given = [o for o, v in ina_only if v is not None]
    if given:
        raise AgentError(f"{given[0]} is for --algo ina, not --algo {args.algo}")
    if args.ps_host is not None and args.algo != "ps":
        raise AgentError(f"--ps-host is for --algo ps, not --algo {args.algo}")


def run_agent(args: argparse.Namespace) -> dict[str, Any]:
    """Run the worker; the stats document (raises ``AgentError``, ``AllReduceError``
    or, for the host-based algorithms, ``ConnectError``/``MeshError``)."""
    check_algo_options(args)
    if args.algo == "ina":
        stats, values = _run_ina(args)
    else:
        stats, values = _run_host_based(args)
    if args.output:
        _write(args.output, lambda p: np.save(p, values, allow_pickle=False))
    if args.stats:
        _write(args.stats, lambda p: p.write_text(json.dumps(stats, indent=1) + "\n"))
    return stats


def _common_stats(args: argparse.Namespace, workers: int, size: int, seconds: float,
                  sent: int, received: int) -> dict[str, Any]:
    return {"algo": args.algo, "rank": args.rank, "workers": workers, "size": size,
            "seconds": seconds,
            "goodput_mbps": size * 32 / seconds / 1e6 if seconds > 0 else None,
            "bytes_sent": sent, "bytes_received": received}


class CountingTransport:
    """A transport that counts the UDP payload bytes it moves."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.bytes_sent = 0
        self.bytes_received = 0

    def send(self, packets: Any) -> None:
        self.bytes_sent += packets.nbytes
        self.inner.send(packets)

    def wait(self, timeout: float) -> bool:
        return bool(self.inner.wait(timeout))

    def recv(self) -> Any:
        batch = self.inner.recv()
        self.bytes_received += sum(batch.lengths)
        return batch

    def close(self) -> None:
        self.inner.close()


def _run_ina(args: argparse.Namespace) -> tuple[dict[str, Any], npt.NDArray[np.float32]]:
    from hosts.transport import TransportError, UdpTransport
    from hosts.worker import Worker

    settings = settings_from(args)
    array = load_input(args)
    try:
        transport = CountingTransport(UdpTransport(args.aggregator))
    except TransportError as e:
        raise AgentError(str(e)) from None
    control = None
    try:
        try:
            worker = Worker(transport, args.job, args.workers, settings)
        except ValueError as e:
            raise AgentError(str(e)) from None
        if args.control:
            from hosts.control import JobControl

            control = worker.control = JobControl(args.control, args.job, args.rank).start()
        if args.start_on_stdin:
            print("ready", flush=True)
            sys.stdin.readline()
        result = worker.allreduce(array)
    finally:
        if control is not None:
            control.close()
        transport.close()
    stats = _common_stats(args, args.workers, int(array.size), result.seconds,
                          transport.bytes_sent, transport.bytes_received)
    stats["job"] = args.job
    stats["counters"] = asdict(result.stats)
    stats["settings"] = {"k": settings.k, "window": settings.window,
                         "scaling": settings.scaling.value, "timeout_ms": args.timeout,
                         "min_timeout_ms": settings.min_timeout * 1000.0,
                         "max_timeout_ms": settings.max_timeout * 1000.0,
                         "adaptive_timeout": settings.adaptive}
    if control is not None:
        stats["control"] = control.report.to_json()
    return stats, result.values


def _run_host_based(args: argparse.Namespace
                    ) -> tuple[dict[str, Any], npt.NDArray[np.float32]]:
    from hosts.baselines.collective import Settings
    from hosts.baselines.session import allreduce_over_tcp
    from hosts.baselines.tcp import parse_peers

    if not 1 <= args.port <= 65535:
        raise AgentError(f"--port {args.port}: not in [1, 65535]")
    try:
        peers = parse_peers(args.peers, args.port)
    except ValueError as e:
        raise AgentError(f"--peers: {e}") from None
    n = len(peers)
    if args.workers is not None and args.workers != n:
        raise AgentError(f"--workers {args.workers}, but --peers lists {n} addresses")
    if not 0 <= args.rank < n:
        raise AgentError(f"--rank {args.rank}: not a position in --peers (0 to {n - 1})")
    if not (args.connect_timeout > 0 and math.isfinite(args.connect_timeout)):
        raise AgentError(f"--connect-timeout {args.connect_timeout:g}: must be a positive "
                         f"number of seconds")
    settings = Settings(segment=args.segment,
                        ps_host=0 if args.ps_host is None else args.ps_host)
    try:
        settings.check(n)
    except ValueError as e:
        option = "--segment" if e.args[0].startswith("segment") else "--ps-host"
        raise AgentError(f"{option}: {e}") from None
    array = load_input(args)

    def ready() -> None:
        if args.start_on_stdin:
            print("ready", flush=True)
            sys.stdin.readline()

    run = allreduce_over_tcp(args.algo, array, args.rank, peers, settings, ready=ready,
                             connect_timeout=args.connect_timeout)
    stats = _common_stats(args, n, int(array.size), run.seconds, run.traffic.bytes_sent,
                          run.traffic.bytes_received)
    stats["counters"] = run.counters
    stats["settings"] = {"segment": settings.segment, "peers": [str(p) for p in peers]}
    if args.algo == "ps":
        stats["settings"]["ps_host"] = settings.ps_host
    return stats, run.values


def _write(path: str, write: Any) -> None:
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        write(p)
    except OSError as e:
        raise AgentError(f"cannot write {path}: {e.strerror or e}") from None


def cmd_agent(args: argparse.Namespace) -> int:
    from hosts.baselines.mesh import MeshError
    from hosts.baselines.tcp import ConnectError
    from hosts.protocol import AllReduceError
    from hosts.transport import TransportError

    try:
        stats = run_agent(args)
    except AgentError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except (AllReduceError, ConnectError, MeshError, TransportError) as e:
        print(f"{PROG}: all-reduce failed: {e}", file=sys.stderr)
        return 1
    c = stats["counters"]
    head = (f"{stats['size']} values in {stats['seconds']:.3f} s "
            f"({_mbps(stats['goodput_mbps'])})")
    if args.algo == "ina":
        print(f"{PROG}: job {args.job}: {head}, sent {c['sent']}, retransmitted "
              f"{c['retransmitted']}, duplicate results {c['duplicate_results']}, "
              f"smoothed RTT {_ms(c['srtt'])}, RTO {_ms(c['rto'])}")
    else:
        print(f"{PROG}: {args.algo} rank {stats['rank']} of {stats['workers']}: {head}, "
              f"sent {stats['bytes_sent']} bytes, received {stats['bytes_received']} "
              f"bytes, TCP retransmissions {c['tcp_retransmits']}")
    return 0


def _mbps(value: float | None) -> str:
    return "- Mbit/s" if value is None else f"{value:.1f} Mbit/s"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def main(argv: list[str] | None = None) -> int:
    """``python -m hosts.agent_cli``: the same as ``ina agent``, with fewer imports."""
    parser = argparse.ArgumentParser(prog="ina")
    add_agent_parser(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["agent", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
