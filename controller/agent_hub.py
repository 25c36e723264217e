"""The controller's end of the agents' control channel (``hosts.control``).

A Unix stream socket at ``path``: every in-network agent started with ``--control
PATH`` connects and introduces itself (``hello``: job and rank); from then on the
controller can pause, resume, fall back or abort its job, and the agent reports its
progress. ``AgentHub`` accepts the connections and hands every message to
``on_message(link, message)`` and every closed connection to ``on_close(link)``, from
its reader threads. Filesystem sockets cross Mininet's network namespaces, so the
channel works whatever happens to the emulated links.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hosts.control import HELLO, LineReader, encode


class AgentLink:
    """One agent's connection; ``job`` and ``rank`` once it said hello."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.job: int | None = None
        self.rank: int | None = None
        self.pid: int | None = None
        self.state = "running"
        self._lock = threading.Lock()
        self.closed = False

    def send(self, message: dict[str, Any]) -> bool:
        with self._lock:
            if self.closed:
                return False
            try:
                self.sock.sendall(encode(message))
            except OSError:
                return False
        return True

    def close(self) -> None:
        with self._lock:
            self.closed = True
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)

    def __repr__(self) -> str:
        return f"AgentLink(job {self.job}, rank {self.rank}, pid {self.pid})"


class AgentHub:
    def __init__(self, path: str | Path,
                 on_message: Callable[[AgentLink, dict[str, Any]], None],
                 on_close: Callable[[AgentLink], None]) -> None:
        self.path = str(path)
        self.on_message = on_message
        self.on_close = on_close
        self.links: list[AgentLink] = []
        self._server: socket.socket | None = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()

    def start(self) -> AgentHub:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # left by a controller that died
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.path)
        os.chmod(self.path, 0o666)
        server.listen(256)
        self._server = server
        threading.Thread(target=self._accept, name="agent-hub", daemon=True).start()
        return self

    def _accept(self) -> None:
        assert self._server is not None
        while not self._stopped.is_set():
            try:
                sock, _ = self._server.accept()
            except OSError:
                return
            link = AgentLink(sock)
            with self._lock:
                self.links.append(link)
            threading.Thread(target=self._read, args=(link,), name="agent-link",
                             daemon=True).start()

    def _read(self, link: AgentLink) -> None:
        reader = LineReader()
        try:
            while True:
                data = link.sock.recv(65536)
                if not data:
                    break
                for msg in reader.feed(data):
                    if msg["op"] == HELLO:
                        link.job, link.rank = int(msg["job"]), int(msg["rank"])
                        link.pid = msg.get("pid")
                        link.state = str(msg.get("state", "running"))
                    if not self._stopped.is_set():
                        self.on_message(link, msg)
        except (OSError, ValueError, KeyError, TypeError):
            pass
        link.close()
        with self._lock:
            if link in self.links:
                self.links.remove(link)
        if not self._stopped.is_set():
            self.on_close(link)

    def close(self) -> None:
        """Stop listening and close every connection (the agents see the controller
        go away)."""
        self._stopped.set()
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        with self._lock:
            links = list(self.links)
        for link in links:
            link.close()
