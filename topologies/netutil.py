"""Small helpers for starting switch processes: free TCP ports, readiness polling and
the lock that keeps Mininet networks from running at the same time."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


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


def lock_holder(path: Path) -> str:
    """Who holds the Mininet lock, as its holder wrote it: ``process PID (COMMAND)``."""
    try:
        pid, _, command = path.read_text().strip().partition(" ")
    except OSError:
        pid, command = "", ""
    if not pid.isdigit():
        return "process unknown"
    return f"process {pid} ({command})" if command else f"process {pid}"


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextmanager
def mininet_lock(timeout: float = 600.0, path: Path = MININET_LOCK,
                 waiting: Callable[[str], None] = _to_stderr) -> Iterator[TextIO]:
    """Hold the machine-wide lock for Mininet networks while the block runs.

    Mininet names switch interfaces after the switch (``s1-eth1``) and deletes a
    same-named interface before creating its own, so two networks with an ``s1`` would
    break each other. Code that starts a network takes this lock; a second one waits,
    and ``waiting`` (by default a line on stderr) is told once whose network it waits for:
    the holder writes its PID and command line into the lock file. The block gets the
    open lock file: a process that inherits it holds the lock too, until it exits.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        deadline = time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StartError(f"another Mininet network ({lock_holder(path)}) held "
                                     f"{path} for more than {timeout:g} s") from None
                if not told:
                    told = True
                    waiting(f"waiting for another Mininet network on this machine to end "
                            f"({lock_holder(path)}; lock {path})")
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()} {' '.join(sys.argv)}\n")
        handle.flush()
        try:
            yield handle
        finally:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)
