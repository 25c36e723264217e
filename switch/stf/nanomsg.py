"""A minimal nanomsg (scalability protocols) client over IPC sockets, enough to talk to
BMv2: its ``--packet-in`` PAIR socket (packets in and out) and its ``--nanolog`` PUB
socket (the event log).

The wire format is nanomsg's and NNG's (which speaks it for compatibility): a Unix
stream socket; each side first sends an 8-byte header ``\\0SP\\0``, its protocol number
(16-bit big-endian) and two zero bytes; then every message is one byte 0x01, its length
(64-bit big-endian) and its bytes. Subscriptions are filtered by the subscriber, so a
SUB peer only reads.
"""

from __future__ import annotations

import socket
import struct
import time

PAIR = 0x10
PUB = 0x20
SUB = 0x21
_PEERS = {PAIR: PAIR, SUB: PUB}
_MESSAGE = 0x01


class NanomsgError(Exception):
    """The peer is not there, speaks another protocol, or closed the connection."""


def ipc_path(address: str) -> str:
    """The socket path of an ``ipc://PATH`` address."""
    if not address.startswith("ipc://"):
        raise NanomsgError(f"not an ipc:// address: {address}")
    return address[len("ipc://"):]


class SpSocket:
    """One connected nanomsg socket of protocol ``PAIR`` or ``SUB``."""

    def __init__(self, address: str, protocol: int, timeout: float = 10.0):
        self.address = address
        self.protocol = protocol
        self._sock = _connect(ipc_path(address), timeout)
        try:
            self._sock.settimeout(timeout)
            self._sock.sendall(b"\0SP\0" + struct.pack(">HH", protocol, 0))
            header = self._read(8)
        except (OSError, NanomsgError) as e:
            self._sock.close()
            raise NanomsgError(f"{address}: no nanomsg handshake ({e})") from None
        peer = struct.unpack(">H", header[4:6])[0]
        if header[:4] != b"\0SP\0" or peer != _PEERS[protocol]:
            self._sock.close()
            raise NanomsgError(f"{address}: expected a nanomsg peer of protocol "
                               f"{_PEERS[protocol]:#x}, got header {header.hex()}")
        self._sock.settimeout(None)

    def fileno(self) -> int:
        return self._sock.fileno()

    def send(self, payload: bytes) -> None:
        try:
            self._sock.sendall(struct.pack(">BQ", _MESSAGE, len(payload)) + payload)
        except OSError as e:
            raise NanomsgError(f"{self.address}: send failed: {e}") from None

    def recv(self) -> bytes:
        """The next message; blocks. NanomsgError when the peer closed the socket."""
        kind, length = struct.unpack(">BQ", self._read(9))
        if kind != _MESSAGE:
            raise NanomsgError(f"{self.address}: unknown message type {kind:#x}")
        return self._read(length)

    def close(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()

    def _read(self, n: int) -> bytes:
        chunks: list[bytes] = []
        while n:
            try:
                chunk = self._sock.recv(n)
            except OSError as e:
                raise NanomsgError(f"{self.address}: {e}") from None
            if not chunk:
                raise NanomsgError(f"{self.address}: the peer closed the connection")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)


def _connect(path: str, timeout: float) -> socket.socket:
    """Connect to a Unix socket that may not be listening yet."""
    deadline = time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except OSError as e:
            sock.close()
            if time.monotonic() > deadline:
                raise NanomsgError(f"ipc://{path}: cannot connect: {e.strerror}") from None
            time.sleep(0.01)
