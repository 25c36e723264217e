"""A full mesh of TCP connections between the ranks of a host-based all-reduce.

Every rank listens on its own address (``peers[rank]``), connects to every rank below
it and accepts a connection from every rank above it. A connecting rank retries until
the peer listens (agents start in any order) and then introduces itself with a hello
(magic, its rank, the number of ranks), which the accepting rank checks. Connections
carry TCP_NODELAY, so the last segment of a message does not wait for an ACK.
"""

from __future__ import annotations

import errno
import socket
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass

from hosts.baselines.mesh import IDLE_TIMEOUT, SocketMesh

DEFAULT_PORT = 48880
"""The TCP port every rank listens on unless its peer address says otherwise (the
in-network agents use UDP port 48879)."""
CONNECT_TIMEOUT = 60.0
HELLO = struct.Struct("!4sHH")  # magic, rank, ranks
MAGIC = b"INAr"
_RETRY = {errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.EHOSTUNREACH,
          errno.ENETUNREACH, errno.ETIMEDOUT, errno.EAGAIN}
_TCP_INFO_TOTAL_RETRANS = 100  # offset of tcpi_total_retrans in Linux's struct tcp_info


class ConnectError(RuntimeError):
    """The mesh could not be set up; the message says which rank and address."""


@dataclass(frozen=True)
class PeerAddress:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_peers(text: str, default_port: int = DEFAULT_PORT) -> list[PeerAddress]:
    """``IP[:PORT],IP[:PORT],...`` in rank order (raises ``ValueError``)."""
    out = []
    for i, item in enumerate(text.split(",")):
        host, sep, port_text = item.strip().partition(":")
        try:
            socket.inet_aton(host)
            if host.count(".") != 3:
                raise OSError
        except OSError:
            raise ValueError(f"peer {i} ({item!r}): {host!r} is not an IPv4 address") from None
        port = default_port
        if sep:
            if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
                raise ValueError(f"peer {i} ({item!r}): port {port_text!r} is not in "
                                 f"[1, 65535]")
            port = int(port_text)
        out.append(PeerAddress(host, port))
    if len(set(out)) != len(out):
        raise ValueError(f"{text!r}: the same address twice")
    return out


class TcpMesh(SocketMesh):
    """A ``SocketMesh`` over TCP, with what the connection set-up took."""

    connect_retries: int = 0
    connect_seconds: float = 0.0

    def tcp_retransmits(self) -> int:
        """Segments TCP retransmitted on this rank's connections so far."""
        total = 0
        for s in self.sockets.values():
            try:
                info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO,
                                    _TCP_INFO_TOTAL_RETRANS + 4)
            except OSError:
                continue
            if len(info) >= _TCP_INFO_TOTAL_RETRANS + 4:
                total += struct.unpack_from("=I", info, _TCP_INFO_TOTAL_RETRANS)[0]
        return total


def connect_tcp_mesh(rank: int, peers: Sequence[PeerAddress], *,
                     timeout: float = CONNECT_TIMEOUT,
                     idle_timeout: float = IDLE_TIMEOUT) -> TcpMesh:
    """Rank ``rank``'s end of the mesh between ``peers`` (raises ``ConnectError``)."""
    n = len(peers)
    if not 0 <= rank < n:
        raise ConnectError(f"rank {rank} is not in [0, {n})")
    start = time.monotonic()
    deadline = start + timeout
    me = peers[rank]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sockets: dict[int, socket.socket] = {}
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((me.host, me.port))
        except OSError as e:
            raise ConnectError(f"rank {rank}: cannot listen on {me}: {e.strerror or e}"
                               ) from None
        listener.listen(max(n, 8))
        retries = 0
        for peer in range(rank):
            sockets[peer], tried = _connect(rank, n, peer, peers[peer], deadline)
            retries += tried
        while len(sockets) < n - 1:
            peer, sock = _accept(listener, rank, n, deadline, sockets)
            sockets[peer] = sock
    except BaseException:
        for s in sockets.values():
            s.close()
        raise
    finally:
        listener.close()
    for s in sockets.values():
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    mesh = TcpMesh(rank, n, sockets, idle_timeout=idle_timeout)
    mesh.connect_retries = retries
    mesh.connect_seconds = time.monotonic() - start
    return mesh


def _connect(rank: int, n: int, peer: int, address: PeerAddress, deadline: float
             ) -> tuple[socket.socket, int]:
    """A connection to ``peer`` that has been told who we are; and the retries."""
    retries = 0
    pause = 0.02
    while True:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(max(min(2.0, deadline - time.monotonic()), 0.01))
        try:
            sock.connect((address.host, address.port))
            sock.sendall(HELLO.pack(MAGIC, rank, n))
            sock.settimeout(None)
            return sock, retries
        except OSError as e:
            sock.close()
            retryable = isinstance(e, TimeoutError) or e.errno in _RETRY
            if not retryable or time.monotonic() + pause > deadline:
                raise ConnectError(f"rank {rank}: cannot connect to rank {peer} at "
                                   f"{address}: {e.strerror or e}") from None
        retries += 1
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


def _accept(listener: socket.socket, rank: int, n: int, deadline: float,
            have: dict[int, socket.socket]) -> tuple[int, socket.socket]:
    """The next connection from a rank above ``rank``, with its hello checked."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            missing = [p for p in range(rank + 1, n) if p not in have]
            raise ConnectError(f"rank {rank}: ranks {missing} did not connect within the "
                               f"time allowed")
        listener.settimeout(left)
        try:
            sock, addr = listener.accept()
        except TimeoutError:
            continue
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            hello = _read_exactly(sock, HELLO.size)
        except OSError:
            sock.close()
            continue
        magic, peer, ranks = HELLO.unpack(hello) if hello else (b"", -1, -1)
        if magic != MAGIC or ranks != n or not rank < peer < n or peer in have:
            sock.close()
            missing = [p for p in range(rank + 1, n) if p not in have]
            raise ConnectError(f"rank {rank}: unexpected connection from "
                               f"{addr[0]}:{addr[1]} (hello {hello.hex() or 'missing'}; "
                               f"expected one from ranks {missing} of {n})")
        sock.settimeout(None)
        return peer, sock


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return b""
        data += chunk
    return data
