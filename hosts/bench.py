"""Worker-side speed figures: ``python -m hosts.bench [--values N] [--k K] [--batch B]``.

Prints values per second of the quantizer and packets per second of the codec and of
the protocol state machine. The protocol runs as a job of one worker against a
reflector (a one-child switch returns each contribution as its RESULT), so the figure
is the worker's own cost per packet, without a network or a switch: CPU time per wire
chunk (send and receive). The reflector hands the RESULTs back ``batch`` at a time (a
window's worth by default), as a worker's transport returns what has queued up.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from hosts.protocol import AllReduceRun, WorkerSettings
from hosts.quantize import Quantizer
from hosts.wire import ALLOWED_K, DEFAULT_K, FLAG_RESULT, decode, encode_fast


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def reflect(payload: bytes) -> bytes:
    return payload[:5] + bytes([payload[5] | FLAG_RESULT]) + payload[6:]


def run_reflected(x: np.ndarray, settings: WorkerSettings, batch: int = 0) -> AllReduceRun:
    """The all-reduce of a one-worker job against the reflector, the RESULTs handed
    back ``batch`` at a time (0: a window's worth)."""
    batch = batch or settings.window
    run = AllReduceRun(x, 1, 1, settings)
    pending = run.start(0.0)
    while pending:
        nxt: list[bytes] = []
        for i in range(0, len(pending), batch):
            nxt += run.on_packets([reflect(p) for p in pending[i:i + batch]], 0.0)
        pending = nxt
    return run


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hosts.bench", description=__doc__)
    ap.add_argument("--values", type=int, default=10**6, help="tensor size (default 1e6)")
    ap.add_argument("--k", type=int, default=DEFAULT_K, choices=ALLOWED_K)
    ap.add_argument("--batch", type=int, default=0,
                    help="RESULTs per batch (default: the window, 64)")
    args = ap.parse_args(argv)
    if args.values < 1:
        print("hosts.bench: --values must be at least 1", file=sys.stderr)
        return 2
    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.values).astype(np.float32)
    k = args.k
    chunks = -(-args.values // k)
    blocks = np.zeros((chunks, k), np.float32)
    blocks.reshape(-1)[:args.values] = x
    qz = Quantizer(8)
    fields = qz.propose(blocks)
    t = _timed(lambda: qz.quantize(blocks, fields))
    print(f"quantize (whole tensor): {args.values / t:,.0f} values/s")
    q = qz.quantize(blocks, fields)
    t = _timed(lambda: qz.dequantize(q, fields))
    print(f"dequantize (whole tensor): {args.values / t:,.0f} values/s")
    n = min(chunks, 20000)
    t = _timed(lambda: [encode_fast(1, i & 63, 0, 0, i, q[i]) for i in range(n)])
    print(f"encode: {n / t:,.0f} packets/s")
    pkts = [encode_fast(1, i & 63, 0, 0, i, q[i]) for i in range(n)]
    t = _timed(lambda: [decode(p) for p in pkts])
    print(f"decode: {n / t:,.0f} packets/s")
    if args.batch < 0:
        print("hosts.bench: --batch must be at least 1", file=sys.stderr)
        return 2
    settings = WorkerSettings(k=k)
    t0, cpu0 = time.perf_counter(), time.process_time()
    run = run_reflected(x, settings, args.batch)
    t, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    one = Quantizer(1)
    f1 = one.propose(blocks)
    expected = one.dequantize(one.quantize(blocks, f1), f1).reshape(-1)[:args.values]
    if not np.array_equal(run.result(), expected):
        print("hosts.bench: the reflected all-reduce gave a wrong result", file=sys.stderr)
        return 1
    wire = run.stats.wire_chunks
    print(f"protocol (one worker, reflected): {wire / t:,.0f} packets/s, "
          f"{args.values / t:,.0f} values/s, CPU {1e6 * cpu / wire:.1f} us/chunk")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
