"""How a worker's datagrams reach the switch: a UDP socket, or memory (tests).

A transport moves UDP *payloads* (aggregation header + values). ``recv`` waits up to
``timeout`` seconds for the first datagram and then returns every one already queued,
so the worker handles them as a batch and answers with one batched ``send``.
"""

from __future__ import annotations

import errno
import queue
import select
import socket
from collections.abc import Callable, Sequence
from typing import Protocol

from hosts.wire import INA_UDP_PORT

MAX_BATCH = 1024
_DATAGRAM_MAX = 2048


class Transport(Protocol):
    def send(self, payloads: Sequence[bytes]) -> None: ...

    def recv(self, timeout: float) -> list[bytes]: ...

    def close(self) -> None: ...


class TransportError(OSError):
    """The socket could not be set up or used, with what and where."""


class UdpTransport:
    """A non-blocking UDP socket bound to the aggregation port (by default on every
    address), sending to the job's aggregator address on the same port."""

    def __init__(self, aggregator: str, *, port: int = INA_UDP_PORT,
                 bind: tuple[str, int] = ("0.0.0.0", INA_UDP_PORT),
                 buffer_bytes: int = 4 << 20) -> None:
        self.destination = (aggregator, port)
        try:
            socket.inet_aton(aggregator)
        except OSError:
            raise TransportError(f"UDP transport: aggregator address {aggregator!r} is not "
                                 f"an IPv4 address") from None
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer_bytes)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, buffer_bytes)
            sock.bind(bind)
        except OSError as e:
            sock.close()
            raise TransportError(f"UDP transport: cannot bind {bind[0]}:{bind[1]}: "
                                 f"{e.strerror or e}") from None
        sock.setblocking(False)
        self.sock = sock

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()
        return host, port

    def send(self, payloads: Sequence[bytes]) -> None:
        sendto, dest = self.sock.sendto, self.destination
        for p in payloads:
            while True:
                try:
                    sendto(p, dest)
                    break
                except BlockingIOError:
                    select.select([], [self.sock], [], 0.05)
                except ConnectionRefusedError:
                    break  # an ICMP error from an earlier datagram: UDP is best effort
                except OSError as e:
                    if e.errno in (errno.ENOBUFS, errno.EAGAIN):
                        select.select([], [self.sock], [], 0.05)
                        continue
                    raise TransportError(f"UDP transport: send to {dest[0]}:{dest[1]}: "
                                         f"{e.strerror or e}") from None

    def recv(self, timeout: float) -> list[bytes]:
        ready, _, _ = select.select([self.sock], [], [], max(timeout, 0.0))
        if not ready:
            return []
        out: list[bytes] = []
        recv = self.sock.recv
        while len(out) < MAX_BATCH:
            try:
                out.append(recv(_DATAGRAM_MAX))
            except (BlockingIOError, ConnectionRefusedError):
                break
        return out

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> UdpTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InMemoryTransport:
    """One worker's end of an in-process network: ``send`` hands each payload to
    ``deliver`` (the network), and the network calls ``put`` to queue a datagram for
    the worker. Thread-safe."""

    def __init__(self, deliver: Callable[[bytes], None]) -> None:
        self._deliver = deliver
        self._inbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self.closed = False

    def put(self, payload: bytes) -> None:
        self._inbox.put(payload)

    def send(self, payloads: Sequence[bytes]) -> None:
        if self.closed:
            raise TransportError("in-memory transport: send after close")
        for p in payloads:
            self._deliver(p)

    def recv(self, timeout: float) -> list[bytes]:
        try:
            out = [self._inbox.get(timeout=max(timeout, 0.0))]
        except queue.Empty:
            return []
        while len(out) < MAX_BATCH:
            try:
                out.append(self._inbox.get_nowait())
            except queue.Empty:
                break
        return out

    def close(self) -> None:
        self.closed = True
