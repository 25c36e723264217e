"""The run-time control socket of ``ina switch``: JSON lines over a Unix socket.

The switch listens on ``/tmp/ina-switch-<device id>.sock`` (or ``--control-socket``).
A client writes one JSON object per line and reads one JSON object per line back, in
order; a connection may carry any number of requests. Requests::

    {"cmd": "ports"}                                  ports, interfaces, impairments,
                                                      device id, gRPC address, program
    {"cmd": "counters"}                               per-port counters (see below)
    {"cmd": "impair", "port": 2, "spec": "loss=0.05,delay=10ms"}
    {"cmd": "impair", "port": "all", "spec": "none"}  replace (not merge) impairments
    {"cmd": "impair-show"}                            every port's impairments

Every reply has ``"ok": true`` and the command's fields, or ``"ok": false`` and an
``"error"`` text saying what was wrong. ``spec`` takes the keys of ``--impair``
(``loss``, ``delay``, ``reorder``, ``duplicate``, ``seed``, ``direction``); ``none``
removes all impairments. The ``counters`` reply holds, for each port, ``rx_packets``,
``rx_bytes``, ``tx_packets``, ``tx_bytes``, ``drops`` (reason -> packets: the port
layer's reasons plus the data path's ``p4_drop``, ``no_pipeline`` and
``pipeline_error`` for packets that came in on the port), ``impaired`` and
``errors``; ``cpu`` has the PacketIn/PacketOut counts and ``no_port`` the packets
sent to ports that have no interface.

The server is driven by the switch's main loop (a selector), like the data path, so a
command never races with packets; requests are small and handled at once. Lines are
limited to :data:`MAX_LINE` bytes.
"""

from __future__ import annotations

import errno
import json
import os
import selectors
import socket
import stat
from collections.abc import Callable
from functools import partial
from typing import Any

MAX_LINE = 64 * 1024
Handler = Callable[[dict[str, Any]], dict[str, Any]]


class ControlError(Exception):
    """The control socket cannot be used; the message says why."""


class ControlServer:
    """Listens on a Unix socket and answers JSON-line requests with ``handler``."""

    def __init__(self, path: str, handler: Handler):
        self.path = path
        self._handler = handler
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._conns: dict[socket.socket, bytearray] = {}
        self._selector: selectors.BaseSelector | None = None

    def open(self) -> None:
        """Bind the socket; a stale socket file is replaced, a live one is an error."""
        _claim(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(self.path)
            sock.listen(16)
        except OSError as e:
            sock.close()
            raise ControlError(f"cannot listen on control socket {self.path}: "
                               f"{e.strerror or e}") from None
        sock.setblocking(False)
        self._sock = sock
        self._inode = os.stat(self.path).st_ino

    def attach(self, selector: selectors.BaseSelector) -> None:
        """Let ``selector``'s events call back into the server (``key.data()``)."""
        assert self._sock is not None
        self._selector = selector
        selector.register(self._sock, selectors.EVENT_READ, self._accept)

    def _accept(self) -> None:
        assert self._sock is not None and self._selector is not None
        try:
            conn, _ = self._sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        conn.settimeout(2.0)  # replies are written with a bounded wait
        self._conns[conn] = bytearray()
        self._selector.register(conn, selectors.EVENT_READ, partial(self._on_readable, conn))

    def _on_readable(self, conn: socket.socket) -> None:
        try:
            data = conn.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            return
        buf = self._conns[conn]
        buf += data
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line = bytes(buf[:nl])
            del buf[:nl + 1]
            if line.strip() and not self._reply(conn, self.answer(line)):
                return
        if len(buf) > MAX_LINE:
            self._reply(conn, {"ok": False, "error": f"request longer than {MAX_LINE} bytes"})
            self._drop(conn)

    def answer(self, line: bytes) -> dict[str, Any]:
        """The reply to one request line."""
        try:
            request = json.loads(line)
        except (ValueError, UnicodeDecodeError) as e:
            return {"ok": False, "error": f"the request is not JSON: {e}"}
        if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
            return {"ok": False, "error": 'a request is a JSON object with a "cmd" string'}
        try:
            return self._handler(request)
        except Exception as e:  # noqa: BLE001 - a bad request must not stop the switch
            return {"ok": False, "error": f"{request['cmd']}: {type(e).__name__}: {e}"}

    def _reply(self, conn: socket.socket, reply: dict[str, Any]) -> bool:
        try:
            conn.sendall(json.dumps(reply).encode() + b"\n")
            return True
        except OSError:
            self._drop(conn)
            return False

    def _drop(self, conn: socket.socket) -> None:
        if self._selector is not None:
            try:
                self._selector.unregister(conn)
            except (KeyError, ValueError):
                pass
        self._conns.pop(conn, None)
        conn.close()

    def close(self) -> None:
        for conn in list(self._conns):
            self._drop(conn)
        if self._sock is not None:
            if self._selector is not None:
                try:
                    self._selector.unregister(self._sock)
                except (KeyError, ValueError):
                    pass
            self._sock.close()
            self._sock = None
            try:  # remove the file only if it is still ours
                if os.stat(self.path).st_ino == self._inode:
                    os.unlink(self.path)
            except OSError:
                pass


def _claim(path: str) -> None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise ControlError(f"control socket {path}: {e.strerror}") from None
    if not stat.S_ISSOCK(st.st_mode):
        raise ControlError(f"control socket {path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)  # stale: its switch is gone
        return
    finally:
        probe.close()
    raise ControlError(f"control socket {path} is in use by another running switch "
                       "(give each switch its own --device-id or --control-socket)")


def control_request(path: str, request: dict[str, Any], timeout: float = 10.0
                    ) -> dict[str, Any]:
    """Send one request to the switch at ``path`` and return its reply."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            raise ControlError(f"no switch is listening on {path} (is 'ina switch' running "
                               "with this --device-id or --control-socket?)") from None
        except OSError as e:
            if e.errno == errno.EACCES:
                raise ControlError(f"permission denied on {path}") from None
            raise ControlError(f"cannot connect to {path}: {e.strerror or e}") from None
        try:
            sock.sendall(json.dumps(request).encode() + b"\n")
            buf = bytearray()
            while not buf.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    raise ControlError(f"the switch at {path} closed the connection")
                buf += chunk
        except TimeoutError:
            raise ControlError(f"the switch at {path} did not answer in {timeout:g} s") from None
        except OSError as e:
            raise ControlError(f"talking to {path}: {e.strerror or e}") from None
    finally:
        sock.close()
    reply = json.loads(buf)
    if not isinstance(reply, dict):
        raise ControlError(f"the switch at {path} sent a malformed reply")
    return reply
