"""Start-up checks of ``ina switch`` that fail fast, before the slow work (compiling).

Each failure is a :class:`StartupError` with a message for the user; the process prints
it and exits with status 1.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from switch.process.options import parse_grpc_address


class StartupError(Exception):
    """The switch cannot start; the message says what and where. ``verbatim`` messages
    (compiler diagnostics) are printed as they are, without the ``ina switch:`` prefix."""

    def __init__(self, message: str, verbatim: bool = False):
        super().__init__(message)
        self.verbatim = verbatim


def check_address_free(address: str) -> None:
    """Fail when something already listens on the gRPC address.

    gRPC binds with SO_REUSEPORT, so a second switch on a taken port would start and
    share (steal) the first one's connections; a plain bind without SO_REUSEPORT
    notices the listener. SO_REUSEADDR keeps old TIME_WAIT connections from counting.
    """
    host, port = parse_grpc_address(address)
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise StartupError(f"gRPC address {address}: cannot resolve {host!r}: {e.strerror}"
                           ) from None
    for family, kind, proto, _, sockaddr in infos:
        probe = socket.socket(family, kind, proto)
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(sockaddr)
        except OSError as e:
            if e.errno == 98:  # EADDRINUSE
                raise StartupError(f"gRPC address {address} is already in use (another "
                                   "switch? choose another --grpc-server-addr)") from None
            raise StartupError(f"cannot listen on gRPC address {address}: "
                               f"{e.strerror or e}") from None
        finally:
            probe.close()


def is_artifact(path: Path) -> bool:
    """A compiled program (``ina p4c -o``, JSON) rather than P4 source."""
    if path.suffix.lower() == ".json":
        return True
    try:
        with path.open("rb") as f:
            return f.read(64).lstrip().startswith(b"{")
    except OSError:
        return False


def load_program(path: str, include_dirs: Sequence[str],
                 defines: dict[str, str | None]) -> Any:
    """Compile P4 source or load a compiled program; StartupError with p4c-style text."""
    from switch.frontend import CompileError, compile_file
    from switch.frontend.artifact import load_artifact

    p = Path(path)
    if not p.is_file():
        raise StartupError(f"program {path}: no such file" if not p.exists()
                           else f"program {path} is not a file")
    try:
        if is_artifact(p):
            try:
                data = p.read_bytes()
            except OSError as e:
                raise StartupError(f"cannot read program {path}: {e.strerror}") from None
            return load_artifact(data, path)
        return compile_file(p, include_dirs, defines)
    except CompileError as e:
        raise StartupError(str(e), verbatim=True) from None
