"""Small helpers for starting switch processes: free TCP ports, readiness polling and
the lock that keeps Mininet networks from running at the same time."""

from __future__ import annotations

import fcntl
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_tcp_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the kernel's choice of an ephemeral one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def is_listening(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def address_listening(address: str) -> bool:
    """Whether something accepts TCP connections on ``host:port`` (a wildcard host is
    asked on the loopback address)."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return is_listening(host, int(port))


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    tail = text.strip().splitlines()[-lines:]
    return "\n".join(f"    {line}" for line in tail) or "    (empty log)"


class StartError(RuntimeError):
    """A switch process did not come up; the message quotes its log."""


def wait_listening(proc: subprocess.Popen[bytes], host: str, port: int, timeout: float,
                   what: str, log: Path) -> None:
    """Poll until ``host:port`` accepts connections; fail if ``proc`` exits first."""
    deadline = time.monotonic() + timeout
    while True:
        code = proc.poll()
        if code is not None:
            raise StartError(f"{what} exited with status {code} before listening on "
                             f"{host}:{port}; the end of its log {log}:\n{log_tail(log)}")
        if is_listening(host, port):
            return
        if time.monotonic() > deadline:
            raise StartError(f"{what} did not listen on {host}:{port} within {timeout:g} s; "
                             f"the end of its log {log}:\n{log_tail(log)}")
        time.sleep(0.05)


MININET_LOCK = Path("/tmp/ina-mininet/mininet.lock")


@contextmanager
def mininet_lock(timeout: float = 600.0, path: Path = MININET_LOCK) -> Iterator[None]:
    """Hold the machine-wide lock for Mininet networks while the block runs.

    Mininet names switch interfaces after the switch (``s1-eth1``) and deletes a
    same-named interface before creating its own, so two networks with an ``s1`` would
    break each other. Code that starts a network takes this lock; a second one waits.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StartError(f"another Mininet network held {path} for more than "
                                     f"{timeout:g} s") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
