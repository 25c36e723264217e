"""How a worker's datagrams reach the switch: a UDP socket, or memory (tests).

A transport moves UDP *payloads* (aggregation header + values) in batches:
``wait(timeout)`` waits up to ``timeout`` seconds for a datagram to arrive, ``recv()``
then returns every one already queued as one ``hosts.batch.Datagrams`` (valid until
the next ``recv``), and ``send`` sends the rows of a ``hosts.batch.Packets`` array. So
the worker handles what has queued up as one batch and answers with one ``send``.
"""

from __future__ import annotations

import errno
import select
import socket
import threading
from collections import deque
from collections.abc import Callable
from typing import Protocol

from hosts.batch import Datagrams, Packets
from hosts.mmsg import MmsgSocket, MmsgUnavailable
from hosts.wire import INA_UDP_PORT

MAX_BATCH = 1024
_LINK_DOWN = (errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH)
"""Send errors of a host whose own link is down: its datagrams are lost, as on a cut
wire, and the worker goes on (its timers, or the controller, decide what next)."""
_DATAGRAM_MAX = 2048


class Transport(Protocol):
    def send(self, packets: Packets) -> None: ...

    def wait(self, timeout: float) -> bool: ...

    def recv(self) -> Datagrams: ...

    def close(self) -> None: ...


class TransportError(OSError):
    """The socket could not be set up or used, with what and where."""


class UdpTransport:
    """A non-blocking UDP socket bound to the aggregation port (by default on every
    address), sending to the job's aggregator address on the same port; batches go
    through ``recvmmsg``/``sendmmsg`` (``hosts.mmsg``)."""

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
        try:
            self._io = MmsgSocket(sock, self.destination, rows=MAX_BATCH,
                                  stride=_DATAGRAM_MAX)
        except MmsgUnavailable as e:
            sock.close()
            raise TransportError(f"UDP transport: {e}") from None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.sock.getsockname()
        return host, port

    def send(self, packets: Packets) -> None:
        try:
            self._io.send(packets)
        except OSError as e:
            if e.errno in _LINK_DOWN:
                return  # the host's own link is down: the datagrams are lost
            dest = self.destination
            raise TransportError(f"UDP transport: send to {dest[0]}:{dest[1]}: "
                                 f"{e.strerror or e}") from None

    def wait(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.sock], [], [], max(timeout, 0.0))
        return bool(ready)

    def recv(self) -> Datagrams:
        try:
            return self._io.recv()
        except OSError as e:
            raise TransportError(f"UDP transport: receive on {self.address[0]}:"
                                 f"{self.address[1]}: {e.strerror or e}") from None

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
        self._inbox: deque[bytes] = deque()
        self._arrived = threading.Condition()
        self.closed = False

    def put(self, payload: bytes) -> None:
        with self._arrived:
            self._inbox.append(payload)
            self._arrived.notify()

    def send(self, packets: Packets) -> None:
        if self.closed:
            raise TransportError("in-memory transport: send after close")
        for row in packets:
            self._deliver(row.tobytes())

    def wait(self, timeout: float) -> bool:
        with self._arrived:
            return self._arrived.wait_for(lambda: bool(self._inbox), max(timeout, 0.0))

    def recv(self) -> Datagrams:
        with self._arrived:
            out = [self._inbox.popleft() for _ in range(min(len(self._inbox), MAX_BATCH))]
        return Datagrams.of(out)

    def close(self) -> None:
        self.closed = True
