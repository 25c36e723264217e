"""Throughput of the port layer through veth pairs (needs root).

``python -m switch.ports.bench [--frames N] [--size BYTES]`` creates two throw-away veth
pairs (``inab<hex>``), drives frames through a :class:`PortSet` from raw sockets on the
far ends, prints frames per second and removes the pairs again. The traffic generator
runs in the same Python thread, so the figures are per-core costs of the port layer
(``rx``/``tx``: only the time spent inside the PortSet) and of a whole
generator + switch + sink chain (``forward``).
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .portset import PortSet
from .rawsock import ETH_P_ALL, PACKET_IGNORE_OUTGOING, SO_RCVBUFFORCE, SO_SNDBUFFORCE, SOL_PACKET

_ETHERTYPE = b"\x88\xb5"


@dataclass
class BenchFigure:
    name: str
    frames: int
    seconds: float
    lost: int = 0

    @property
    def rate(self) -> float:
        return self.frames / self.seconds if self.seconds > 0 else float("inf")

    def __str__(self) -> str:
        lost = f", {self.lost} lost" if self.lost else ""
        return (
            f"{self.name:<40} {self.rate:>12,.0f} frames/s"
            f"  ({self.frames} in {self.seconds:.3f} s{lost})"
        )


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextlib.contextmanager
def veth_pairs(count: int) -> Iterator[list[tuple[str, str]]]:
    """``count`` veth pairs (switch side, host side), up, IPv6 off; deleted on exit."""
    created: list[str] = []
    pairs: list[tuple[str, str]] = []
    try:
        for _ in range(count):
            tag = secrets.token_hex(3)
            a, b = f"inab{tag}s", f"inab{tag}h"
            _ip("link", "add", a, "type", "veth", "peer", "name", b)
            created.append(a)
            for name in (a, b):
                knob = Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6")
                if knob.exists():
                    knob.write_text("1")
                _ip("link", "set", name, "up")
            _wait_operational(a, b)
            pairs.append((a, b))
        yield pairs
    finally:
        for a in created:
            subprocess.run(["ip", "link", "del", a], capture_output=True)


def _wait_operational(*ifaces: str, timeout: float = 5.0) -> None:
    # Until the link watcher has run, a veth silently discards what is sent into it.
    end = time.monotonic() + timeout
    for iface in ifaces:
        state = Path(f"/sys/class/net/{iface}/operstate")
        while state.read_text().strip() != "up":
            if time.monotonic() > end:
                raise TimeoutError(f"{iface} did not come up")
            time.sleep(0.002)


def _host_socket(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 32 << 20)
    s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    s.bind((iface, ETH_P_ALL))
    return s


def _frames(n: int, size: int) -> list[bytes]:
    head = bytes.fromhex("02aabbccddee021122334455") + _ETHERTYPE
    pad = bytes(max(0, size - len(head) - 4))
    return [head + i.to_bytes(4, "big") + pad for i in range(n)]


def _drain_host(s: socket.socket) -> int:
    n = 0
    while True:
        try:
            s.recv(65536, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return n
        n += 1


def _count(ports: PortSet) -> int:
    return sum(1 for _, f in ports.receive(timeout=0) if f[12:14] == _ETHERTYPE)


def bench_rx(a: str, b: str, frames: int, size: int, burst: int, fallback: bool) -> BenchFigure:
    host = _host_socket(b)
    batch = _frames(burst, size)
    got = 0
    spent = 0.0
    with PortSet([(1, a)], ignore_outgoing_sockopt=not fallback) as ports:
        for _ in range(frames // burst):
            for f in batch:
                host.send(f)
            t = time.perf_counter()
            want = got + burst
            end = time.monotonic() + 1.0
            while got < want and time.monotonic() < end:
                got += _count(ports)
            spent += time.perf_counter() - t
        lost = ports.counters(1).drops.get("rx_overflow", 0)
    host.close()
    name = f"rx ({'pkttype check' if fallback else 'IGNORE_OUTGOING'}, {size} B)"
    return BenchFigure(name, got, spent, lost)


def bench_tx(a: str, frames: int, size: int) -> BenchFigure:
    batch = _frames(1024, size)
    with PortSet([(1, a)]) as ports:
        t = time.perf_counter()
        for i in range(frames):
            ports.send(1, batch[i & 1023])
        spent = time.perf_counter() - t
        c = ports.counters(1)
    return BenchFigure(f"tx ({size} B)", c.tx_packets, spent, c.drops.get("tx_error", 0))


def bench_forward(
    pairs: list[tuple[str, str]], frames: int, size: int, burst: int
) -> BenchFigure:
    (a1, b1), (a2, b2) = pairs
    src, sink = _host_socket(b1), _host_socket(b2)
    batch = _frames(burst, size)
    delivered = 0
    with PortSet([(1, a1), (2, a2)]) as ports:
        t = time.perf_counter()
        for _ in range(frames // burst):
            for f in batch:
                src.send(f)
            forwarded = 0
            end = time.monotonic() + 1.0
            while forwarded < burst and time.monotonic() < end:
                for port, frame in ports.receive(timeout=0):
                    if port == 1:
                        ports.send(2, frame)
                        forwarded += 1
            delivered += _drain_host(sink)
        spent = time.perf_counter() - t
        delivered += _drain_host(sink)
    src.close()
    sink.close()
    sent = frames // burst * burst
    name = f"forward 1->2 incl. generator ({size} B)"
    return BenchFigure(name, delivered, spent, sent - delivered)


def bench_burst(
    a: str, b: str, bursts: tuple[int, ...] = (256, 1024, 4096, 16384)
) -> list[BenchFigure]:
    """One back-to-back burst of each size into an idle port: how many arrive."""
    host = _host_socket(b)
    out = []
    with PortSet([(1, a)]) as ports:
        for n in bursts:
            batch = _frames(n, 64)
            t = time.perf_counter()
            for f in batch:
                host.send(f)
            got = 0
            end = time.monotonic() + 2.0
            while got < n and time.monotonic() < end:
                got += _count(ports)
            out.append(BenchFigure(f"burst of {n} (64 B)", got, time.perf_counter() - t, n - got))
    host.close()
    return out


def run(frames: int = 100_000, size: int = 64, burst: int = 256) -> list[BenchFigure]:
    """Run every measurement, print each figure, return them."""
    results: list[BenchFigure] = []

    def report(fig: BenchFigure) -> None:
        results.append(fig)
        print(fig, flush=True)

    with veth_pairs(2) as pairs:
        (a, b) = pairs[0]
        for fig in bench_burst(a, b):
            report(fig)
        report(bench_rx(a, b, frames, size, burst, fallback=False))
        report(bench_rx(a, b, frames, size, burst, fallback=True))
        report(bench_rx(a, b, frames // 4, 1500, burst, fallback=False))
        report(bench_tx(a, frames, size))
        report(bench_tx(a, frames // 4, 1500))
        report(bench_forward(pairs, frames, size, burst))
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--burst", type=int, default=256)
    args = parser.parse_args(argv)
    run(args.frames, args.size, args.burst)


if __name__ == "__main__":
    main()
