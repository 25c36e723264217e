"""``ina bench switch [PROGRAM]``: packets per second and latency through ``ina switch``.

Creates throw-away veth pairs, starts ``ina switch`` (a subprocess, as Mininet would) on
their switch ends with PROGRAM (default ``p4/ipv4_forward.p4``; ``aggregation`` names
``p4/aggregation.p4``), and drives it from raw sockets on the far ends. Needs root.
Figures only; nothing is asserted.

A program with the aggregation tables is measured as an aggregation switch: see
``ina.bench_switch_agg``. Any other program is measured as a router: one route is
installed over P4Runtime and IPv4/UDP frames go into port 1 and come out of port 2:

- latency: one frame at a time, the time from send to arrival (percentiles);
- throughput: ``--count`` frames with at most a window of frames in flight;
- a back-to-back burst of 256 frames and how many came out.

The router needs a table with a single 32-bit LPM key (the IPv4 destination) and an
action whose parameters are a 9-bit port and optionally a 48-bit MAC address, as
``ipv4_forward.p4``'s ``ipv4_lpm``/``forward``.
"""

from __future__ import annotations

import os
import select
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from p4.config.v1 import p4info_pb2

from controller import P4RuntimeClient, TableEntry
from controller.values import Lpm
from ina.bench_switch_agg import bench_aggregation
from ina.switch_under_test import (
    TARGET_NAMES,
    TARGETS,
    Figures,
    RunningSwitch,
    cpu_text,
    figures_table,
    host_socket,
    missing_tools,
    percentiles_text,
    print_port_counters,
    running_switch,
)

PROGRAMS_DIR = Path(__file__).resolve().parents[1] / "p4"
DEFAULT_PROGRAM = PROGRAMS_DIR / "ipv4_forward.p4"
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


def resolve_program(program: str | None) -> str:
    """The P4 source to run: a path, or the name of one of the project's programs
    (``aggregation`` for ``p4/aggregation.p4``, ``ipv4_forward``)."""
    if not program:
        return str(DEFAULT_PROGRAM)
    named = PROGRAMS_DIR / f"{program}.p4"
    if not os.path.exists(program) and "/" not in program and named.is_file():
        return str(named)
    return program


def bench_switch(program: str | None, count: int, *, workers: int = 2, window: int = 64,
                 include_dirs: Sequence[str] = (), defines: Sequence[str] = (),
                 targets: Sequence[str] = ("ina",), engine: str = "auto") -> int:
    """Run the benchmark on each of ``targets`` in turn (``ina``, ``bmv2``); the exit
    status. A program with the aggregation tables (``ina_job``) is measured as an
    aggregation switch with ``workers`` worker ports (``ina.bench_switch_agg``), any
    other one as a router between two ports. With several targets, a table puts their
    figures side by side at the end."""
    if not targets:
        print("ina bench switch: --target: name a switch (ina, bmv2)", file=sys.stderr)
        return 2
    for t in targets:
        if t not in TARGETS:
            print(f"ina bench switch: --target {t}: must be one of {', '.join(TARGETS)}",
                  file=sys.stderr)
            return 2
        why = missing_tools(t)
        if why:
            print(f"ina bench switch: --target {t}: {why}", file=sys.stderr)
            return 1
    if os.geteuid() != 0:
        print("ina bench switch: needs root (veth pairs, raw sockets)", file=sys.stderr)
        return 1
    if not 1 <= workers <= 32:
        print(f"ina bench switch: --workers {workers}: must be in [1, 32] (the bits of "
              "a slot's bitmap)", file=sys.stderr)
        return 2
    if window < 1:
        print(f"ina bench switch: --window {window}: must be at least 1", file=sys.stderr)
        return 2
    if count < 1:
        print(f"ina bench switch: --count {count}: must be at least 1", file=sys.stderr)
        return 2
    program = resolve_program(program)
    if not os.path.isfile(program):
        print(f"ina bench switch: {program}: no such P4 program", file=sys.stderr)
        return 2
    compile_args = [*(f"-I{d}" for d in include_dirs), *(f"-D{d}" for d in defines)]
    rows: list[Figures] = []
    for target in dict.fromkeys(targets):
        if len(targets) > 1:
            print(f"== {TARGET_NAMES[target]} ==")
        status, fig = _bench_one(program, count, workers, window, compile_args, target, engine)
        if status:
            return status
        if fig is not None:
            rows.append(fig)
    if len(rows) > 1:
        print(f"side by side ({', '.join(TARGET_NAMES[f.target] for f in rows)}):")
        print(figures_table(rows))
    return 0


def _bench_one(program: str, count: int, workers: int, window: int,
               compile_args: Sequence[str], target: str,
               engine: str = "auto") -> tuple[int, Figures | None]:
    with running_switch(program, max(2, workers), compile_args, target, engine) as sw:
        if sw is None:
            return 1, None
        with P4RuntimeClient(sw.address, device_id=0) as client:
            info = client.fetch_pipeline()
        if any(t.preamble.name.endswith("ina_job") for t in info.tables):
            return bench_aggregation(sw, info, workers, window, count)
        return _run_forwarding(sw, info, count)


def _run_forwarding(sw: RunningSwitch, info: p4info_pb2.P4Info, count: int
                    ) -> tuple[int, Figures | None]:
    try:
        table, key, action, _, params = _route(info)
    except LookupError as e:
        print(f"ina bench switch: {e}", file=sys.stderr)
        return 1, None
    with P4RuntimeClient(sw.address, device_id=0) as client:
        client.use_p4info(info)
        client.insert(TableEntry(table, {key: Lpm(0x0A000200, 24)}, action, params))
    src, sink = host_socket(sw.pairs[0][1]), host_socket(sw.pairs[1][1])
    try:
        size = len(_frame(0))
        lat = _latency(src, sink, LATENCY_SAMPLES)
        if lat:
            print(f"latency, one {size}-byte frame at a time ({len(lat)} of {LATENCY_SAMPLES} "
                  f"arrived): {percentiles_text(lat)}")
        else:
            print("latency: no frame came out of port 2 (is the route right?)")
        cpu = sw.cpu_seconds()
        delivered, seconds = _throughput(src, sink, count)
        cpu = sw.cpu_seconds() - cpu
        print(f"throughput, window of {WINDOW} frames: {delivered / seconds:,.0f} packets/s "
              f"({delivered} of {count} delivered in {seconds:.2f} s; "
              f"{cpu_text(cpu, seconds, count)})")
        print(f"burst of {BURST} back-to-back frames: {_burst(src, sink)} delivered")
    finally:
        src.close()
        sink.close()
    print_port_counters(sw)
    return 0, Figures(sw.target, delivered / seconds if seconds > 0 else 0.0, "packets/s",
                      cpu, seconds, count, lat[len(lat) // 2] if lat else None,
                      f"{delivered} of {count} frames")
