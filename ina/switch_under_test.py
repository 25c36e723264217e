"""An ``ina switch`` process under test, for the ``ina bench switch`` benchmarks: the
process on throw-away veth pairs, raw sockets on the pairs' far ends (the hosts), the
switch's CPU time, and the figures' common formats."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from switch.ports.bench import veth_pairs
from switch.process.control import control_request
from topologies.netutil import address_listening


@dataclass(frozen=True)
class RunningSwitch:
    """An ``ina switch`` process with a program, on veth pairs (switch port i is
    ``pairs[i - 1][0]``, its far end, where the hosts are, ``pairs[i - 1][1]``)."""

    program: str
    address: str  # P4Runtime
    control: str  # the control socket
    pairs: list[tuple[str, str]]
    pid: int

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


@contextlib.contextmanager
def running_switch(program: str, ports: int, compile_args: Sequence[str] = ()
                   ) -> Iterator[RunningSwitch | None]:
    """Start ``ina switch`` with ``program`` on ``ports`` throw-away veth pairs and
    wait until it serves P4Runtime; None (after saying why) when it does not start.
    Stops the switch and removes the pairs on exit."""
    address = f"127.0.0.1:{_free_port()}"
    with tempfile.TemporaryDirectory(prefix="ina-bench-") as tmp, veth_pairs(ports) as pairs:
        control = os.path.join(tmp, "control.sock")
        log = open(os.path.join(tmp, "switch.log"), "w+")  # noqa: SIM115
        attach = [arg for i, (a, _) in enumerate(pairs) for arg in ("-i", f"{i + 1}@{a}")]
        proc = subprocess.Popen(
            [sys.executable, "-m", "ina", "switch", program, *attach, *compile_args,
             "--control-socket", control, "--", "--grpc-server-addr", address],
            stdout=log, stderr=subprocess.STDOUT)
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
            print(f"ina bench switch: {program}; switch ready in "
                  f"{time.perf_counter() - t:.2f} s")
            yield RunningSwitch(program, address, control, pairs, proc.pid)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=10)
            log.close()


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


def cpu_text(cpu_s: float, seconds: float, packets: int) -> str:
    """The switch's CPU use over a phase: per packet in, and as a share of one core
    (a share near 100% means the switch, not the sender, set the pace)."""
    if packets <= 0 or seconds <= 0:
        return "switch CPU: no packets"
    return (f"switch CPU: {cpu_s / packets * 1e6:.1f} us per packet in, "
            f"{cpu_s / seconds * 100:.0f}% of a core")
