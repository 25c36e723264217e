"""The transport under the host-based all-reduce algorithms: ordered byte streams
between every pair of ranks, driven by non-blocking sends and receives.

An algorithm posts sends (``isend``) and receives (``irecv``) of whole buffers to and
from peer ranks and waits for the ones it needs (``wait``). Between two ranks the
messages arrive in the order they were posted (each pair is one stream socket), so the
receiver's posted buffers are filled in posting order: the two sides agree on the
order and sizes of their messages from the schedule alone, without tags. Every
``wait`` moves every posted message along, not only the awaited ones, so a schedule
in which two ranks send to each other at once cannot deadlock on full socket buffers.

``SocketMesh`` implements it over connected stream sockets: TCP between hosts
(``hosts.baselines.tcp``) or socket pairs between threads (``hosts.baselines.local``).
It counts the payload bytes that went through its sockets (``traffic``); the bytes of
``barrier`` are counted apart, as control bytes.

A posted buffer is read (send) or written (receive) in place until its request is
done, so a schedule must not change a buffer whose send may be in flight. Where the
algorithms receive into memory they sent from (the ring's all-gather, a parameter
server's clients), what arrives was computed from what was sent, so that send is done.
"""

from __future__ import annotations

import select
import socket
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

IDLE_TIMEOUT = 120.0
"""Seconds without a byte moving, while a rank waits, before it gives up (a peer died
or the schedules disagree). TCP's own retransmission backoff stays far below it."""


class MeshError(RuntimeError):
    """A peer closed or broke its connection, or nothing moved for too long."""


@dataclass
class Traffic:
    """What went through the sockets of one rank."""

    bytes_sent: int = 0  # payload bytes of the algorithm
    bytes_received: int = 0
    messages_sent: int = 0
    messages_received: int = 0
    control_bytes_sent: int = 0  # barrier bytes
    control_bytes_received: int = 0


class Request:
    """One posted send or receive of a whole buffer."""

    __slots__ = ("peer", "view", "pos", "control")

    def __init__(self, peer: int, view: memoryview, control: bool = False) -> None:
        self.peer = peer
        self.view = view
        self.pos = 0
        self.control = control

    @property
    def done(self) -> bool:
        return self.pos >= len(self.view)


Buffer = npt.NDArray[np.float32] | bytes | bytearray | memoryview


class PeerTransport(Protocol):
    """What an all-reduce algorithm may do: rank ``rank`` of ``size`` ranks."""

    rank: int
    size: int

    def isend(self, peer: int, data: Buffer) -> Request: ...

    def irecv(self, peer: int, into: Buffer) -> Request: ...

    def wait(self, requests: Iterable[Request]) -> None: ...

    def barrier(self) -> None: ...


def _bytes_view(data: Buffer) -> memoryview:
    if isinstance(data, np.ndarray):
        if not data.flags.c_contiguous:
            raise ValueError("mesh: a message buffer must be contiguous")
        return data.data.cast("B")
    return memoryview(data).cast("B")


class SocketMesh:
    """Rank ``rank`` of ``size``, with a connected stream socket to every peer it talks
    to (``sockets[peer]``). The mesh owns the sockets: ``close`` closes them."""

    def __init__(self, rank: int, size: int, sockets: Mapping[int, socket.socket], *,
                 idle_timeout: float = IDLE_TIMEOUT) -> None:
        if not 0 <= rank < size:
            raise ValueError(f"mesh: rank {rank} is not in [0, {size})")
        self.rank = rank
        self.size = size
        self.sockets = dict(sockets)
        self.idle_timeout = idle_timeout
        self.traffic = Traffic()
        self._sends: dict[int, deque[Request]] = {p: deque() for p in self.sockets}
        self._recvs: dict[int, deque[Request]] = {p: deque() for p in self.sockets}
        self._fileno = {s.fileno(): p for p, s in self.sockets.items()}
        for s in self.sockets.values():
            s.setblocking(False)

    # ----------------------------------------------------------------- posting

    def _queue(self, queues: dict[int, deque[Request]], peer: int) -> deque[Request]:
        try:
            return queues[peer]
        except KeyError:
            raise MeshError(f"rank {self.rank}: no connection to rank {peer}") from None

    def isend(self, peer: int, data: Buffer, *, control: bool = False) -> Request:
        """Post ``data`` to ``peer``; it goes out during this and later waits."""
        req = Request(peer, _bytes_view(data), control)
        if not req.done:
            self._queue(self._sends, peer).append(req)
            if not control:
                self.traffic.messages_sent += 1
        return req

    def irecv(self, peer: int, into: Buffer, *, control: bool = False) -> Request:
        """Post ``into`` for the next message from ``peer`` of exactly its size."""
        req = Request(peer, _bytes_view(into), control)
        if req.view.readonly:
            raise ValueError("mesh: cannot receive into a read-only buffer")
        if not req.done:
            self._queue(self._recvs, peer).append(req)
            if not control:
                self.traffic.messages_received += 1
        return req

    # ---------------------------------------------------------------- progress

    def wait(self, requests: Iterable[Request]) -> None:
        """Move data until every request in ``requests`` is done."""
        pending = [r for r in requests if not r.done]
        last_move = time.monotonic()
        while pending:
            if self._move():
                last_move = time.monotonic()
            else:
                idle = time.monotonic() - last_move
                if idle > self.idle_timeout:
                    peers = sorted({r.peer for r in pending})
                    raise MeshError(f"rank {self.rank}: nothing moved for {idle:.0f} s "
                                    f"while waiting for ranks {peers}")
                self._select(min(1.0, self.idle_timeout - idle))
            pending = [r for r in pending if not r.done]

    def _move(self) -> bool:
        """Send and receive what the sockets take without blocking; whether any byte
        moved."""
        moved = False
        traffic = self.traffic
        for peer, queue in self._sends.items():
            sock = self.sockets[peer]
            while queue:
                req = queue[0]
                try:
                    n = sock.send(req.view[req.pos:])
                except (BlockingIOError, InterruptedError):
                    break
                except OSError as e:
                    raise MeshError(f"rank {self.rank}: send to rank {peer}: "
                                    f"{e.strerror or e}") from None
                req.pos += n
                moved = True
                if req.control:
                    traffic.control_bytes_sent += n
                else:
                    traffic.bytes_sent += n
                if not req.done:
                    break
                queue.popleft()
        for peer, queue in self._recvs.items():
            sock = self.sockets[peer]
            while queue:
                req = queue[0]
                try:
                    n = sock.recv_into(req.view[req.pos:])
                except (BlockingIOError, InterruptedError):
                    break
                except OSError as e:
                    raise MeshError(f"rank {self.rank}: receive from rank {peer}: "
                                    f"{e.strerror or e}") from None
                if n == 0:
                    raise MeshError(f"rank {self.rank}: rank {peer} closed the connection "
                                    f"with {len(req.view) - req.pos} bytes of a message "
                                    f"still to come")
                req.pos += n
                moved = True
                if req.control:
                    traffic.control_bytes_received += n
                else:
                    traffic.bytes_received += n
                if not req.done:
                    break
                queue.popleft()
        return moved

    def _select(self, timeout: float) -> None:
        readers = [self.sockets[p] for p, q in self._recvs.items() if q]
        writers = [self.sockets[p] for p, q in self._sends.items() if q]
        if readers or writers:
            select.select(readers, writers, [], max(timeout, 0.0))

    # ----------------------------------------------------------------- helpers

    def barrier(self) -> None:
        """Return once every rank has entered the barrier (one byte to and from every
        peer: each rank must have a connection to every other)."""
        token = bytearray(1)
        inbox = {p: bytearray(1) for p in self.sockets}
        reqs = [self.isend(p, token, control=True) for p in self.sockets]
        reqs += [self.irecv(p, inbox[p], control=True) for p in self.sockets]
        self.wait(reqs)

    def close(self) -> None:
        for s in self.sockets.values():
            s.close()

    def __enter__(self) -> SocketMesh:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
