"""``ina agent``: one worker of an in-network all-reduce job, as a process.

    ina agent --job 1 --workers 4 --aggregator 10.0.0.254 --size 100000 --seed 7 \\
        --rank 0 --dist normal --output out.npy --stats stats.json

It binds UDP port 48879 on every address, all-reduces its input with the other workers
of the job through the switch at the aggregator address, and writes the result
(``--output``, float32 ``.npy``) and its figures (``--stats``, JSON: the packet
counters, the completion time and the goodput). The input is a ``.npy`` file
(``--input``) or generated (``--size/--seed/--rank/--dist``, see ``hosts.inputs``), so
that whoever started the workers can recompute every input. With ``--start-on-stdin``
the agent gets ready (socket bound, input made), prints ``ready`` and waits for a line
on stdin before it sends anything: a start barrier for timing several agents.

Retransmission: ``--timeout`` is the first retransmission timeout (RTO); from then on
the RTO follows the measured round-trip time of the chunks as TCP's does (RFC 6298:
smoothed RTT + 4 x its mean deviation, within ``--min-timeout``/``--max-timeout``),
doubling on each timeout until a fresh measurement. ``--fixed-timeout`` gives every
packet ``--timeout`` instead (the slot's wait still doubles on each timeout). The
final smoothed RTT and RTO are in the stats (``srtt``, ``rto``, seconds).

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
    p = verbs.add_parser("agent", help="run one all-reduce worker (e.g. in a Mininet host)",
                         description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--job", type=int, required=True, help="the job id")
    p.add_argument("--workers", type=int, required=True, help="number of workers in the job")
    p.add_argument("--aggregator", required=True, metavar="IP",
                   help="the job's aggregator address (the switch)")
    p.add_argument("--window", type=int, default=64, metavar="S",
                   help="chunks in flight, at most the job's slots (default 64)")
    p.add_argument("--timeout", type=float, default=100.0, metavar="MS",
                   help="first retransmission timeout in ms; then it adapts to the "
                        "measured RTT (default 100)")
    p.add_argument("--min-timeout", type=float, metavar="MS",
                   help=f"lowest adaptive timeout in ms (default {MIN_TIMEOUT_MS:g}, "
                        f"or --timeout if lower)")
    p.add_argument("--max-timeout", type=float, metavar="MS",
                   help=f"highest timeout, also the backoff limit, in ms (default "
                        f"{MAX_TIMEOUT_MS:g}, or --timeout if higher)")
    p.add_argument("--fixed-timeout", action="store_true",
                   help="do not adapt: every packet is first given --timeout")
    p.add_argument("--k", type=int, default=DEFAULT_K, choices=ALLOWED_K,
                   help=f"values per packet, the program's INA_K (default {DEFAULT_K})")
    p.add_argument("--scaling", choices=[s.value for s in Scaling], default="tight",
                   help="quantizer scaling, the same on every worker (default tight)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--input", metavar="FILE.npy", help="the input tensor (float32)")
    src.add_argument("--size", type=int, help="generate an input of this many values")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    p.add_argument("--rank", type=int, default=0,
                   help="this worker's rank, mixed into the generator seed (default 0)")
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
    if not low <= timeout <= high:
        raise AgentError(f"--min-timeout {low:g} <= --timeout {timeout:g} <= --max-timeout "
                         f"{high:g} does not hold")
    settings = WorkerSettings(k=args.k, window=args.window, scaling=Scaling(args.scaling),
                              timeout=timeout / 1000.0, min_timeout=low / 1000.0,
                              max_timeout=high / 1000.0, adaptive=not args.fixed_timeout)
    try:
        settings.check()
    except ValueError as e:
        raise AgentError(str(e)) from None
    return settings


def run_agent(args: argparse.Namespace) -> dict[str, Any]:
    """Run the worker; the stats document (raises ``AgentError``/``AllReduceError``)."""
    from hosts.transport import TransportError, UdpTransport
    from hosts.worker import Worker

    settings = settings_from(args)
    array = load_input(args)
    try:
        transport = UdpTransport(args.aggregator)
    except TransportError as e:
        raise AgentError(str(e)) from None
    try:
        try:
            worker = Worker(transport, args.job, args.workers, settings)
        except ValueError as e:
            raise AgentError(str(e)) from None
        if args.start_on_stdin:
            print("ready", flush=True)
            sys.stdin.readline()
        result = worker.allreduce(array)
    finally:
        transport.close()
    if args.output:
        _write(args.output, lambda p: np.save(p, result.values, allow_pickle=False))
    seconds = result.seconds
    nbytes = array.size * 4
    stats = {
        "job": args.job, "workers": args.workers, "size": int(array.size),
        "seconds": seconds,
        "goodput_mbps": nbytes * 8 / seconds / 1e6 if seconds > 0 else None,
        "counters": asdict(result.stats),
        "settings": {"k": settings.k, "window": settings.window,
                     "scaling": settings.scaling.value, "timeout_ms": args.timeout,
                     "min_timeout_ms": settings.min_timeout * 1000.0,
                     "max_timeout_ms": settings.max_timeout * 1000.0,
                     "adaptive_timeout": settings.adaptive},
    }
    if args.stats:
        _write(args.stats, lambda p: p.write_text(json.dumps(stats, indent=1) + "\n"))
    return stats


def _write(path: str, write: Any) -> None:
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        write(p)
    except OSError as e:
        raise AgentError(f"cannot write {path}: {e.strerror or e}") from None


def cmd_agent(args: argparse.Namespace) -> int:
    from hosts.protocol import AllReduceError

    try:
        stats = run_agent(args)
    except AgentError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except AllReduceError as e:
        print(f"{PROG}: all-reduce failed: {e}", file=sys.stderr)
        return 1
    c = stats["counters"]
    print(f"{PROG}: job {args.job}: {stats['size']} values in {stats['seconds']:.3f} s "
          f"({stats['goodput_mbps']:.1f} Mbit/s), sent {c['sent']}, retransmitted "
          f"{c['retransmitted']}, duplicate results {c['duplicate_results']}, "
          f"smoothed RTT {_ms(c['srtt'])}, RTO {_ms(c['rto'])}")
    return 0


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
