"""``ina bench switch [PROGRAM]``: packets per second and latency through ``ina switch``.

Creates two throw-away veth pairs, starts ``ina switch`` (a subprocess, as Mininet would)
on their switch ends with PROGRAM (default ``p4/ipv4_forward.p4``), installs one route
over P4Runtime, and sends IPv4/UDP frames into port 1 from a raw socket on the far end
of the first pair; they come out of port 2. Needs root. Prints:

- latency: one frame at a time, the time from send to arrival (percentiles);
- throughput: ``--count`` frames with at most a window of frames in flight;
- a back-to-back burst of 256 frames and how many came out.

The program needs a table with a single 32-bit LPM key (the IPv4 destination) and an
action whose parameters are a 9-bit port and optionally a 48-bit MAC address, as
``ipv4_forward.p4``'s ``ipv4_lpm``/``forward``. Figures only; nothing is asserted.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from p4.config.v1 import p4info_pb2

from switch.ports.bench import veth_pairs
from switch.process.control import control_request
from switch.process.p4rt_client import P4RuntimeClient, table_entry, wait_for_port

DEFAULT_PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "ipv4_forward.p4"
WINDOW = 64
BURST = 256
LATENCY_SAMPLES = 500
MARK = b"inabench"


def _route(info: p4info_pb2.P4Info) -> tuple[str, str, str, str, dict[str, int]]:
    """(table, key field, action, port param, params) of a route to port 2."""
    actions = {a.preamble.id: a for a in info.actions}
    for t in info.tables:
        if len(t.match_fields) != 1:
            continue
        f = t.match_fields[0]
        if f.match_type != p4info_pb2.MatchField.LPM or f.bitwidth != 32:
            continue
        for ref in t.action_refs:
            a = actions[ref.id]
            widths = sorted(p.bitwidth for p in a.params)
            if widths not in ([9], [9, 48]):
                continue
            params = {p.name: (2 if p.bitwidth == 9 else 0x020000000002) for p in a.params}
            port_param = next(p.name for p in a.params if p.bitwidth == 9)
            return t.preamble.name, f.name, a.preamble.name, port_param, params
    raise LookupError("the program has no table with one 32-bit LPM key and an action "
                      "taking (bit<9> port[, bit<48> mac]) to install a route with")


def _frame(seq: int) -> bytes:
    payload = MARK + seq.to_bytes(4, "big") + bytes(6)
    udp = (1234).to_bytes(2, "big") + (5678).to_bytes(2, "big") + \
        (8 + len(payload)).to_bytes(2, "big") + bytes(2) + payload
    total = 20 + len(udp)
    ip = bytearray(bytes.fromhex("4500") + total.to_bytes(2, "big") + bytes(4) +
                   bytes([64, 17]) + bytes(2) + bytes([10, 0, 1, 1]) + bytes([10, 0, 2, 2]))
    s = sum(int.from_bytes(ip[i:i + 2], "big") for i in range(0, 20, 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    ip[10:12] = (~s & 0xFFFF).to_bytes(2, "big")
    return bytes.fromhex("020000000001" "02000000000a" "0800") + bytes(ip) + udp


def _host_socket(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE
    s.setsockopt(socket.SOL_SOCKET, 32, 32 << 20)  # SO_SNDBUFFORCE
    s.setsockopt(263, 23, 1)  # PACKET_IGNORE_OUTGOING
    s.bind((iface, 3))
    return s


def _ours(frame: bytes) -> bool:
    return MARK in frame[40:52]


def _receive(sink: socket.socket, wait: float) -> int:
    """Frames of ours that arrived within ``wait`` seconds (0: what is there now)."""
    got = 0
    while select.select([sink], [], [], wait)[0]:
        wait = 0
        while True:
            try:
                frame = sink.recv(2048, socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            got += _ours(frame)
    return got


def _percentile(sorted_ms: list[float], q: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def _latency(src: socket.socket, sink: socket.socket, samples: int) -> list[float]:
    out = []
    for i in range(samples):
        t = time.perf_counter()
        src.send(_frame(i))
        if _receive(sink, 1.0):
            out.append((time.perf_counter() - t) * 1000)
    return sorted(out)


def _throughput(src: socket.socket, sink: socket.socket, count: int) -> tuple[int, float]:
    frames = [_frame(i) for i in range(1024)]
    sent = delivered = 0
    t = time.perf_counter()
    while sent < count:
        while sent < count and sent - delivered < WINDOW:
            src.send(frames[sent & 1023])
            sent += 1
        got = _receive(sink, 1.0)
        if not got:
            break  # a whole second without a frame: the rest is lost
        delivered += got
    while delivered < sent:
        got = _receive(sink, 0.5)
        if not got:
            break
        delivered += got
    return delivered, time.perf_counter() - t


def _burst(src: socket.socket, sink: socket.socket) -> int:
    for i in range(BURST):
        src.send(_frame(i))
    got = 0
    end = time.monotonic() + 3.0
    while got < BURST and time.monotonic() < end:
        got += _receive(sink, 0.3)
    return got


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bench_switch(program: str | None, count: int) -> int:
    if os.geteuid() != 0:
        print("ina bench switch: needs root (veth pairs, raw sockets)", file=sys.stderr)
        return 1
    program = program or str(DEFAULT_PROGRAM)
    address = f"127.0.0.1:{_free_port()}"
    with tempfile.TemporaryDirectory(prefix="ina-bench-") as tmp, veth_pairs(2) as pairs:
        (a1, h1), (a2, h2) = pairs
        control = os.path.join(tmp, "control.sock")
        log = open(os.path.join(tmp, "switch.log"), "w+")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "ina", "switch", program, "-i", f"1@{a1}", "-i", f"2@{a2}",
             "--control-socket", control, "--", "--grpc-server-addr", address],
            stdout=log, stderr=subprocess.STDOUT)
        try:
            return _run(proc, log, program, address, control, h1, h2, count)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=10)
            log.close()


def _run(proc: subprocess.Popen[bytes], log: object, program: str, address: str,
         control: str, h1: str, h2: str, count: int) -> int:
    t = time.perf_counter()
    while not wait_for_port(address, timeout=0.5):
        if proc.poll() is not None or time.perf_counter() - t > 120:
            log.seek(0)  # type: ignore[attr-defined]
            print(f"ina bench switch: the switch did not start:\n"
                  f"{log.read()}", file=sys.stderr)  # type: ignore[attr-defined]
            return 1
    print(f"ina bench switch: {program}; switch ready in {time.perf_counter() - t:.2f} s")
    with P4RuntimeClient(address, device_id=0) as client:
        info = client.get_p4info()
        try:
            table, key, action, _, params = _route(info)
        except LookupError as e:
            print(f"ina bench switch: {e}", file=sys.stderr)
            return 1
        client.write(table_entry(info, table, {key: ("lpm", 0x0A000200, 24)}, action, params))
    src, sink = _host_socket(h1), _host_socket(h2)
    try:
        size = len(_frame(0))
        lat = _latency(src, sink, LATENCY_SAMPLES)
        if lat:
            print(f"latency, one {size}-byte frame at a time ({len(lat)} of {LATENCY_SAMPLES} "
                  f"arrived): p50 {_percentile(lat, 0.5):.3f} ms, p90 "
                  f"{_percentile(lat, 0.9):.3f} ms, p99 {_percentile(lat, 0.99):.3f} ms, "
                  f"max {lat[-1]:.3f} ms")
        else:
            print("latency: no frame came out of port 2 (is the route right?)")
        delivered, seconds = _throughput(src, sink, count)
        print(f"throughput, window of {WINDOW} frames: {delivered / seconds:,.0f} packets/s "
              f"({delivered} of {count} delivered in {seconds:.2f} s)")
        print(f"burst of {BURST} back-to-back frames: {_burst(src, sink)} delivered")
    finally:
        src.close()
        sink.close()
    reply = control_request(control, {"cmd": "counters"})
    for row in reply.get("ports", []):
        print(f"switch port {row['port']}: rx {row['rx_packets']}, tx {row['tx_packets']}, "
              f"drops {row['drops'] or 0}")
    return 0
