"""Helpers shared by the port-layer tests: test frames, a raw peer socket, loops."""

from __future__ import annotations

import select
import socket
import time
from pathlib import Path

from switch.ports import PortSet

TEST_ETHERTYPE = 0x88B5  # IEEE 802 local experimental
FOREIGN_MAC = bytes.fromhex("02aabbccddee")  # locally administered, on no interface
PEER_MAC = bytes.fromhex("021122334455")
ETH_P_ALL = 0x0003


def make_frame(seq: int, size: int = 64, dst: bytes = FOREIGN_MAC) -> bytes:
    """A test frame carrying ``seq``; ``size`` is the whole frame length."""
    head = dst + PEER_MAC + TEST_ETHERTYPE.to_bytes(2, "big") + seq.to_bytes(4, "big")
    return head + bytes(max(0, size - len(head)))


def is_test_frame(frame: bytes) -> bool:
    return len(frame) >= 18 and frame[12:14] == TEST_ETHERTYPE.to_bytes(2, "big")


def seq_of(frame: bytes) -> int:
    return int.from_bytes(frame[14:18], "big")


class Peer:
    """A raw socket on the far end of a veth pair, standing in for a host."""

    def __init__(self, iface: str) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.sock.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE
        self.sock.setsockopt(socket.SOL_SOCKET, 32, 16 << 20)  # SO_SNDBUFFORCE
        self.sock.setsockopt(263, 23, 1)  # PACKET_IGNORE_OUTGOING
        self.sock.bind((iface, ETH_P_ALL))

    def send(self, frame: bytes) -> None:
        self.sock.send(frame)

    def read(self, idle: float = 0.05) -> list[bytes]:
        """Test frames received so far, waiting until none came for ``idle`` seconds."""
        out: list[bytes] = []
        while select.select([self.sock], [], [], idle)[0]:
            while True:
                try:
                    frame = self.sock.recv(65536, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                if is_test_frame(frame):
                    out.append(frame)
        return out

    def read_now(self) -> list[bytes]:
        return self.read(idle=0)

    def close(self) -> None:
        self.sock.close()


def collect(ports: PortSet, n: int, timeout: float = 2.0) -> list[tuple[int, bytes]]:
    """Receive until ``n`` test frames arrived or ``timeout`` passed."""
    got: list[tuple[int, bytes]] = []
    end = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < end:
        got += [(p, f) for p, f in ports.receive(timeout=0.02) if is_test_frame(f)]
    return got


def drain(ports: PortSet, idle: float = 0.05) -> list[tuple[int, bytes]]:
    """Receive test frames until none came for ``idle`` seconds (and nothing is pending)."""
    got: list[tuple[int, bytes]] = []
    while True:
        batch = ports.receive(timeout=idle)
        got += [(p, f) for p, f in batch if is_test_frame(f)]
        if not batch and ports.next_deadline() is None:
            return got


def pump(ports: PortSet, peer: Peer, n: int, timeout: float = 2.0) -> list[bytes]:
    """Run the port loop (releasing delayed frames) until the peer has ``n`` frames."""
    got: list[bytes] = []
    end = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < end:
        ports.receive(timeout=0.002)
        got += peer.read_now()
    return got


def iface_flags(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/flags").read_text(), 16)


IFF_PROMISC = 0x100


def wait_operational(*ifaces: str, timeout: float = 5.0) -> None:
    """Wait until the kernel's link watcher has brought the interfaces up.

    Until then a veth's queueing discipline is still the no-op one, which silently
    discards every frame sent into it; under load that takes a noticeable time.
    """
    end = time.monotonic() + timeout
    for iface in ifaces:
        state = Path(f"/sys/class/net/{iface}/operstate")
        while state.read_text().strip() != "up":
            if time.monotonic() > end:
                raise TimeoutError(f"{iface} did not come up")
            time.sleep(0.002)
