"""Fixtures for the port-layer tests: throw-away veth pairs and a raw peer socket.

Interfaces are created in the current network namespace with unique ``inat<hex>``
names, IPv6 switched off (so the kernel sends no ND/MLD frames on them) and are always
deleted again. Nothing is ever sent anywhere but into these veth pairs.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ports_helpers import Peer, wait_operational


def _need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (raw sockets, veth pairs)")
    if shutil.which("ip") is None:
        pytest.skip("needs iproute2's ip")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@pytest.fixture
def make_veth() -> Iterator[Callable[[], tuple[str, str]]]:
    """Factory for veth pairs ``(switch side, host side)``, both up."""
    _need_root()
    created: list[str] = []

    def make() -> tuple[str, str]:
        tag = secrets.token_hex(3)
        a, b = f"inat{tag}s", f"inat{tag}h"
        _ip("link", "add", a, "type", "veth", "peer", "name", b)
        created.append(a)
        for name in (a, b):
            knob = Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6")
            if knob.exists():
                knob.write_text("1")
            _ip("link", "set", name, "up")
        wait_operational(a, b)
        return a, b

    try:
        yield make
    finally:
        for a in created:
            subprocess.run(["ip", "link", "del", a], capture_output=True)


@pytest.fixture
def veth(make_veth: Callable[[], tuple[str, str]]) -> tuple[str, str]:
    return make_veth()


@pytest.fixture
def peer_factory() -> Iterator[Callable[[str], Peer]]:
    peers: list[Peer] = []

    def make(iface: str) -> Peer:
        p = Peer(iface)
        peers.append(p)
        return p

    try:
        yield make
    finally:
        for p in peers:
            p.close()
