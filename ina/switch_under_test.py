"""A switch process under test, for the ``ina bench switch`` benchmarks: ``ina switch``
or BMv2's ``simple_switch_grpc`` on throw-away veth pairs with the program loaded, raw
sockets on the pairs' far ends (the hosts), the switch's CPU time, and the figures'
common formats.

BMv2 gets the program as ``ina run --target bmv2`` gives it: ``p4c-bm2-ss`` compiles it
(with the same ``-I``/``-D`` options) and the P4Info and JSON are pushed over P4Runtime
to a ``simple_switch_grpc --no-p4`` on the same ports; it has no control socket, so no
port counters."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from controller import P4RuntimeClient
from controller.errors import P4RuntimeClientError
from switch.ports.bench import veth_pairs
from switch.process.control import control_request
from topologies.netutil import address_listening

TARGETS = ("ina", "bmv2")
#: what each target runs, for the figures' headings
TARGET_NAMES = {"ina": "ina switch", "bmv2": "BMv2 simple_switch_grpc"}
BMV2_TOOLS = ("p4c-bm2-ss", "simple_switch_grpc")


@dataclass(frozen=True)
class RunningSwitch:
    """An ``ina switch`` process with a program, on veth pairs (switch port i is
    ``pairs[i - 1][0]``, its far end, where the hosts are, ``pairs[i - 1][1]``)."""

    program: str
    address: str  # P4Runtime
    control: str | None  # the control socket (None: BMv2 has none)
    pairs: list[tuple[str, str]]
    pid: int
    target: str = "ina"

    def cpu_seconds(self) -> float:
        """The CPU time the switch process has used so far (user + system)."""
        return process_cpu_seconds(self.pid)


def process_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def missing_tools(target: str) -> str | None:
    """Why ``target`` cannot run here (None when it can)."""
    if target == "bmv2":
        missing = [t for t in BMV2_TOOLS if shutil.which(t) is None]
        if missing:
            return f"{' and '.join(missing)} not on PATH (BMv2 and p4c from p4lang)"
    return None


@contextlib.contextmanager
def running_switch(program: str, ports: int, compile_args: Sequence[str] = (),
                   target: str = "ina", engine: str = "auto") -> Iterator[RunningSwitch | None]:
    """Start the ``target`` switch (``ina`` or ``bmv2``) with ``program`` on ``ports``
    throw-away veth pairs and wait until it serves P4Runtime with the program; None
    (after saying why) when it does not start. Stops the switch and removes the pairs
    on exit."""
    address = f"127.0.0.1:{_free_port()}"
    with tempfile.TemporaryDirectory(prefix="ina-bench-") as tmp, veth_pairs(ports) as pairs:
        control = os.path.join(tmp, "control.sock")
        log = open(os.path.join(tmp, "switch.log"), "w+")  # noqa: SIM115
        attach = [arg for i, (a, _) in enumerate(pairs) for arg in ("-i", f"{i + 1}@{a}")]
        files = None
        if target == "bmv2":
            files = _p4c_bm2(program, compile_args, tmp)
            if files is None:
                yield None
                return
            argv = ["simple_switch_grpc", "--no-p4", *attach, "--device-id", "0",
                    "--thrift-port", str(_free_port()), "--", "--grpc-server-addr", address]
        else:
            argv = [sys.executable, "-m", "ina", "switch", program, *attach, *compile_args,
                    "--engine", engine, "--control-socket", control, "--",
                    "--grpc-server-addr", address]
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            t = time.perf_counter()
            while not address_listening(address):
                time.sleep(0.05)
                if proc.poll() is not None or time.perf_counter() - t > 120:
                    log.seek(0)
                    print(f"ina bench switch: the switch did not start:\n{log.read()}",
                          file=sys.stderr)
                    yield None
                    return
            if files is not None:
                try:
                    with P4RuntimeClient(address, device_id=0) as client:
                        client.set_pipeline(*files)
                except P4RuntimeClientError as e:
                    print(f"ina bench switch: BMv2 refused the program: {e}", file=sys.stderr)
                    yield None
                    return
            print(f"ina bench switch: {program} on {TARGET_NAMES[target]}; switch ready in "
                  f"{time.perf_counter() - t:.2f} s")
            yield RunningSwitch(program, address, control if files is None else None, pairs,
                                proc.pid, target)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            log.close()


def _p4c_bm2(program: str, compile_args: Sequence[str], tmp: str) -> tuple[str, str] | None:
    """Compile ``program`` for BMv2: (P4Info file, JSON file), or None after saying why."""
    p4info, config = os.path.join(tmp, "program.p4info.txtpb"), os.path.join(tmp, "program.json")
    proc = subprocess.run(["p4c-bm2-ss", *compile_args, "--p4runtime-files", p4info, "-o",
                           config, program], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"ina bench switch: p4c-bm2-ss {program} failed (status {proc.returncode}):\n"
              f"{(proc.stderr or proc.stdout).strip()}", file=sys.stderr)
        return None
    return p4info, config


def host_socket(iface: str) -> socket.socket:
    """A raw socket on a host's interface, with large buffers, that sees only the
    frames arriving there."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE
    s.setsockopt(socket.SOL_SOCKET, 32, 32 << 20)  # SO_SNDBUFFORCE
    s.setsockopt(263, 23, 1)  # PACKET_IGNORE_OUTGOING
    s.bind((iface, 3))
    return s


def print_port_counters(sw: RunningSwitch) -> None:
    if sw.control is None:
        print("switch ports: BMv2 does not count them")
        return
    reply = control_request(sw.control, {"cmd": "counters"})
    for row in reply.get("ports", []):
        drops = row["drops"] or 0
        if isinstance(drops, dict):  # by reason
            drops = ", ".join(f"{n} {why}" for why, n in sorted(drops.items())) or "0"
        print(f"switch port {row['port']}: rx {row['rx_packets']}, tx {row['tx_packets']}, "
              f"drops {drops}")


def _percentile(sorted_ms: list[float], q: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def percentiles_text(sorted_ms: list[float]) -> str:
    """``p50 ... ms, p90 ..., p99 ..., max ...`` of sorted milliseconds (not empty)."""
    return (f"p50 {_percentile(sorted_ms, 0.5):.3f} ms, p90 {_percentile(sorted_ms, 0.9):.3f} "
            f"ms, p99 {_percentile(sorted_ms, 0.99):.3f} ms, max {sorted_ms[-1]:.3f} ms")


@dataclass(frozen=True)
class Figures:
    """One switch's headline figures, for the side-by-side table of ``--target
    ina,bmv2``."""

    target: str
    rate: float  # frames (contributions) in per second
    unit: str  # what ``rate`` counts
    cpu_s: float  # the switch's CPU time over the throughput phase
    seconds: float  # the throughput phase
    packets: int  # frames in over it
    latency_ms: float | None  # p50 of the latency phase (one at a time)
    complete: str  # how much of the throughput phase came through


def figures_table(rows: Sequence[Figures]) -> str:
    """The figures of several switches side by side, as a Markdown table."""
    def cpu(f: Figures) -> str:
        return f"{f.cpu_s / f.packets * 1e6:.1f} us" if f.packets else "-"

    def core(f: Figures) -> str:
        return f"{f.cpu_s / f.seconds * 100:.0f}%" if f.seconds > 0 else "-"

    lines = [("", [TARGET_NAMES[f.target] for f in rows]),
             (f"{rows[0].unit} in", [f"{f.rate:,.0f}" for f in rows]),
             ("switch CPU per packet in", [cpu(f) for f in rows]),
             ("share of a core", [core(f) for f in rows]),
             ("latency p50, one at a time", [f"{f.latency_ms:.3f} ms" if f.latency_ms
                                             is not None else "-" for f in rows]),
             ("came through", [f.complete for f in rows])]
    out = [f"| {name} | {' | '.join(cells)} |" for name, cells in lines]
    out.insert(1, "|" + " --- |" * (len(rows) + 1))
    return "\n".join(out)


def cpu_text(cpu_s: float, seconds: float, packets: int) -> str:
    """The switch's CPU use over a phase: per packet in, and as a share of one core
    (a share near 100% means the switch, not the sender, set the pace)."""
    if packets <= 0 or seconds <= 0:
        return "switch CPU: no packets"
    return (f"switch CPU: {cpu_s / packets * 1e6:.1f} us per packet in, "
            f"{cpu_s / seconds * 100:.0f}% of a core")
