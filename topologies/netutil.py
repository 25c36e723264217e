"""Small helpers for starting switch processes: free TCP ports, readiness polling and
the lock that keeps Mininet networks from running at the same time (and clears what a
network that was killed left behind)."""

from __future__ import annotations

import fcntl
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

_GIVEN: set[int] = set()  # the ports free_tcp_port has handed out in this process


def free_tcp_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the kernel's choice of an ephemeral one)
    and that this process has not handed out before: a switch given a port may take a
    second or two to listen on it, and the kernel may offer the same port again
    meanwhile; a second switch on it would be taken for ready while the first one
    answers there."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = int(s.getsockname()[1])
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port


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

# Mininet names a node's interfaces after the node: s1-eth1, leaf2-eth3.
MININET_PORT_NAME = re.compile(r"[a-z][a-z0-9]*\d-eth\d+")


def interfaces(kind: str | None = None) -> list[str]:
    """The names of this namespace's network interfaces (only of ``ip link`` type
    ``kind``, such as ``veth``, when given); none without iproute2."""
    try:
        shown = subprocess.run(["ip", "-o", "link", "show", *(["type", kind] if kind else [])],
                               capture_output=True, text=True, check=False).stdout
    except OSError:
        return []
    names = []
    for line in shown.splitlines():
        fields = line.split(":", 2)
        if len(fields) == 3:
            names.append(fields[1].strip().partition("@")[0])
    return names


def delete_interfaces(names: list[str]) -> list[str]:
    """Delete the interfaces (a veth pair goes with either end); those deleted."""
    return [name for name in names
            if subprocess.run(["ip", "link", "del", name], capture_output=True,
                              check=False).returncode == 0]


def leftover_ports() -> list[str]:
    """The veth interfaces in this namespace named as Mininet names a node's ports.

    A switch's ports live in the root namespace; when the process that built a network
    is killed, nothing deletes them, and the next network with that switch fails with
    "RTNETLINK answers: File exists". While the Mininet lock is held no network of the
    project runs, so any such interface is a leftover.
    """
    return [name for name in interfaces("veth") if MININET_PORT_NAME.fullmatch(name)]


def remove_leftover_ports(told: Callable[[str], None]) -> list[str]:
    """Delete :func:`leftover_ports` and say which."""
    removed = delete_interfaces(leftover_ports())
    if removed:
        told(f"removed {len(removed)} interface(s) left by a Mininet network that did not "
             f"end: {', '.join(removed)}")
    return removed


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
                 waiting: Callable[[str], None] = _to_stderr,
                 tidy: bool = True) -> Iterator[TextIO]:
    """Hold the machine-wide lock for Mininet networks while the block runs.

    Mininet names switch interfaces after the switch (``s1-eth1``) and deletes a
    same-named interface before creating its own, so two networks with an ``s1`` would
    break each other. Code that starts a network takes this lock; a second one waits,
    and ``waiting`` (by default a line on stderr) is told once whose network it waits for:
    the holder writes its PID and command line into the lock file. The block gets the
    open lock file: a process that inherits it holds the lock too, until it exits.
    With ``tidy`` (and as root), the holder first removes the switch ports an earlier
    network left behind when it was killed (:func:`remove_leftover_ports`): a Mininet
    network started outside the project at the same time would lose its ports too, as it
    would clash with the project's names anyway.
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
        if tidy and os.geteuid() == 0:
            remove_leftover_ports(waiting)
        try:
            yield handle
        finally:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)
