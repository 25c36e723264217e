"""Helpers for the ``ina switch`` process tests: veth pairs, a switch subprocess, hosts.

Interfaces are named ``isp<hex>s`` (switch side) and ``isp<hex>h`` (host side), have
IPv6 off (so the kernel sends nothing on them by itself) and are always deleted again.
"""

from __future__ import annotations

import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from controller import P4RuntimeClient, TableEntry
from controller.values import Lpm
from topologies.netutil import address_listening

ROOT = Path(__file__).resolve().parents[3]
FORWARD = ROOT / "p4" / "ipv4_forward.p4"
MARK = b"ispmark!"
ETH_P_ALL = 3


def need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (raw sockets, veth pairs)")
    if shutil.which("ip") is None:
        pytest.skip("needs iproute2's ip")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@contextmanager
def veth_pairs(count: int) -> Iterator[list[tuple[str, str]]]:
    """``count`` veth pairs (switch side, host side), up; deleted on exit."""
    need_root()
    created: list[str] = []
    pairs = []
    try:
        for _ in range(count):
            tag = secrets.token_hex(3)
            a, b = f"isp{tag}s", f"isp{tag}h"
            _ip("link", "add", a, "type", "veth", "peer", "name", b)
            created.append(a)
            for name in (a, b):
                Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1")
                _ip("link", "set", name, "up")
            pairs.append((a, b))
        end = time.monotonic() + 5
        for a, b in pairs:
            for name in (a, b):
                state = Path(f"/sys/class/net/{name}/operstate")
                while state.read_text().strip() != "up" and time.monotonic() < end:
                    time.sleep(0.005)
        yield pairs
    finally:
        for a in created:
            subprocess.run(["ip", "link", "del", a], capture_output=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ina(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ina", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


class SwitchProc:
    """``ina switch`` in a subprocess; stdout and stderr go to files in ``workdir``."""

    def __init__(self, workdir: Path, args: list[str], grpc_port: int | None = None):
        self.workdir = workdir
        self.grpc_port = grpc_port or free_port()
        self.address = f"127.0.0.1:{self.grpc_port}"
        self.control = str(workdir / "control.sock")
        self.stdout_path = workdir / "switch.out"
        self.stderr_path = workdir / "switch.err"
        own, target = (args[:args.index("--")], args[args.index("--") + 1:]) \
            if "--" in args else (args, [])
        argv = [sys.executable, "-m", "ina", "switch", *own, "--control-socket", self.control,
                "--", *target, "--grpc-server-addr", self.address]
        self._out = open(self.stdout_path, "w")  # noqa: SIM115
        self._err = open(self.stderr_path, "w")  # noqa: SIM115
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=self._out, stderr=self._err)

    def wait_ready(self, timeout: float = 90) -> None:
        end = time.monotonic() + timeout
        while not address_listening(self.address):
            time.sleep(0.05)
            if self.proc.poll() is not None or time.monotonic() > end:
                raise AssertionError(f"the switch did not start:\n{self.stderr}")

    @property
    def stdout(self) -> str:
        self._out.flush()
        return self.stdout_path.read_text()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return ina("switch-cli", "--socket", self.control, *args, timeout=30)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        self._err.close()
        return self.proc.returncode


def ipv4_frame(seq: int, dst_ip: int = 0x0A000205, ttl: int = 64, size: int = 0) -> bytes:
    """An Ethernet/IPv4/UDP frame carrying ``MARK`` and ``seq`` (correct checksum)."""
    payload = MARK + seq.to_bytes(4, "big")
    payload += bytes(max(0, size - 42 - len(payload)))
    udp = (1000).to_bytes(2, "big") + (2000).to_bytes(2, "big") + \
        (8 + len(payload)).to_bytes(2, "big") + bytes(2) + payload
    ip = bytearray(bytes.fromhex("4500") + (20 + len(udp)).to_bytes(2, "big") + bytes(4)
                   + bytes([ttl, 17]) + bytes(2) + bytes([10, 0, 1, 1])
                   + dst_ip.to_bytes(4, "big"))
    ip[10:12] = ip_checksum(bytes(ip)).to_bytes(2, "big")
    return bytes.fromhex("020000000001" "02000000000a" "0800") + bytes(ip) + udp


def ip_checksum(header: bytes) -> int:
    s = sum(int.from_bytes(header[i:i + 2], "big") for i in range(0, len(header), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def seq_of(frame: bytes) -> int | None:
    i = frame.find(MARK, 42)
    return None if i < 0 else int.from_bytes(frame[i + 8:i + 12], "big")


class Host:
    """A raw socket on the host end of a veth pair."""

    def __init__(self, iface: str):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.sock.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE
        self.sock.setsockopt(socket.SOL_SOCKET, 32, 32 << 20)  # SO_SNDBUFFORCE
        self.sock.setsockopt(263, 23, 1)  # PACKET_IGNORE_OUTGOING
        self.sock.bind((iface, ETH_P_ALL))

    def send(self, frame: bytes) -> None:
        self.sock.send(frame)

    def receive(self, want: int | None = None, idle: float = 0.3, timeout: float = 5.0
                ) -> list[bytes]:
        """Marked frames until ``want`` arrived, or none came for ``idle`` seconds."""
        out: list[bytes] = []
        end = time.monotonic() + timeout
        while (want is None or len(out) < want) and time.monotonic() < end:
            if not select.select([self.sock], [], [], idle)[0]:
                break
            while True:
                try:
                    frame = self.sock.recv(65536, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                if seq_of(frame) is not None:
                    out.append(frame)
        return out

    def close(self) -> None:
        self.sock.close()


def install_route(address: str, port: int, prefix: int, plen: int, mac: int,
                  device_id: int = 0) -> None:
    """Add an ``ipv4_lpm`` route of ``ipv4_forward.p4`` over P4Runtime."""
    with P4RuntimeClient(address, device_id=device_id) as client:
        client.fetch_pipeline()
        client.insert(TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": Lpm(prefix, plen)},
                                 "forward", {"port": port, "dst_mac": mac}))
