"""Worker-side speed figures: ``python -m hosts.bench [--values N] [--k K] [--batch B]
[--udp]``.

Prints values per second of the quantizer and packets per second of the codec and of
the protocol state machine. The protocol runs as a job of one worker against a
reflector (a one-child switch returns each contribution as its RESULT), so the figure
is the worker's own cost per packet, without a network or a switch: CPU time per wire
chunk (send and receive, with setting up the run and the result). The reflector hands
the RESULTs back ``batch`` at a time (a window's worth by default), as a worker's
transport returns what has queued up. With ``--udp`` a ``hosts.worker.Worker`` also
runs over its UDP socket against a reflector process on the loopback: the worker
process's CPU per wire chunk then includes the system calls and wake-ups (and the
loopback's delivery, which the kernel charges to the sender).
"""

from __future__ import annotations

import argparse
import multiprocessing
import select
import socket
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection

import numpy as np

from hosts.batch import Datagrams, Packets
from hosts.mmsg import MmsgSocket
from hosts.protocol import AllReduceRun, WorkerSettings
from hosts.quantize import Quantizer
from hosts.transport import UdpTransport
from hosts.wire import ALLOWED_K, DEFAULT_K, FLAG_RESULT, VALUE_DTYPE, decode, encode_fast
from hosts.worker import AllReduceResult, Worker

_FLAGS_AT = 5
"""Where the flags are in the header (``hosts.wire.HEADER``)."""


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def as_results(packets: Packets) -> Packets:
    """A one-child switch's answer to ``packets``: each contribution as its RESULT."""
    rows = packets.copy()
    rows[:, _FLAGS_AT] |= FLAG_RESULT
    return rows


def reflect(packets: Packets) -> Datagrams:
    """``as_results`` as the worker receives them."""
    rows = as_results(packets)
    return Datagrams(rows.data, rows.shape[1], [rows.shape[1]] * len(rows),
                     rows.view(VALUE_DTYPE))


def run_reflected(x: np.ndarray, settings: WorkerSettings, batch: int = 0) -> AllReduceRun:
    """The all-reduce of a one-worker job against the reflector, the RESULTs handed
    back ``batch`` at a time (0: a window's worth)."""
    batch = batch or settings.window
    run = AllReduceRun(x, 1, 1, settings)
    pending = run.start_batch(0.0)
    while len(pending):
        nxt = [run.on_batch(reflect(pending[i:i + batch]), 0.0)
               for i in range(0, len(pending), batch)]
        pending = np.concatenate(nxt)
    return run


def reflector(conn: Connection) -> None:
    """``--udp``'s switch, a process: answers every contribution on its loopback UDP
    socket (port sent on ``conn``) to the worker's port (received on ``conn``) with
    ``as_results``, until ``conn`` says stop."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    conn.send(sock.getsockname()[1])
    io = MmsgSocket(sock, ("127.0.0.1", conn.recv()))
    while not conn.poll():
        if not select.select([sock], [], [], 0.05)[0]:
            continue
        batch = io.recv()
        if batch.lengths:
            rows = np.frombuffer(batch.buffer, dtype=np.uint8,
                                 count=len(batch) * batch.stride).reshape(-1, batch.stride)
            io.send(as_results(rows[:, :batch.lengths[0]]))
    sock.close()


def run_udp(x: np.ndarray, settings: WorkerSettings) -> AllReduceResult:
    """The all-reduce of a one-worker job over a UDP socket on the loopback, against
    ``reflector`` in a process of its own (so its CPU is not the worker's)."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=reflector, args=(theirs,), daemon=True)
    process.start()
    try:
        if not ours.poll(60):
            raise RuntimeError("the reflector process did not start")
        with UdpTransport("127.0.0.1", port=ours.recv(), bind=("127.0.0.1", 0)) as t:
            ours.send(t.address[1])
            return Worker(t, 1, 1, settings).allreduce(x)
    finally:
        ours.send("stop")
        process.join(5)
        if process.is_alive():
            process.kill()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hosts.bench", description=__doc__)
    ap.add_argument("--values", type=int, default=10**6, help="tensor size (default 1e6)")
    ap.add_argument("--k", type=int, default=DEFAULT_K, choices=ALLOWED_K)
    ap.add_argument("--batch", type=int, default=0,
                    help="RESULTs per batch (default: the window, 64)")
    ap.add_argument("--udp", action="store_true",
                    help="also over a UDP socket, against a reflector process on the "
                         "loopback")
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
    if args.udp:
        result = run_udp(x, settings)
        if not np.array_equal(result.values, expected):
            print("hosts.bench: the all-reduce over UDP gave a wrong result", file=sys.stderr)
            return 1
        wire = result.stats.wire_chunks
        print(f"protocol over UDP (one worker, reflector process on the loopback): "
              f"{wire / result.seconds:,.0f} packets/s, "
              f"{args.values / result.seconds:,.0f} values/s, "
              f"CPU {1e6 * result.stats.cpu_seconds / wire:.1f} us/chunk, "
              f"{result.stats.retransmitted} resent")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
