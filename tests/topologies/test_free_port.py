"""``free_tcp_port`` never hands out a port twice in one process: a switch given a
port listens on it only a moment later, and the kernel may offer it again meanwhile."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from topologies import netutil


def test_a_port_the_kernel_offers_again_is_not_handed_out_twice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    offers = iter([41001, 41001, 41001, 41002])

    class Offering(socket.socket):
        def getsockname(self) -> Any:
            return ("127.0.0.1", next(offers))

    monkeypatch.setattr(netutil.socket, "socket", Offering)
    monkeypatch.setattr(netutil, "_GIVEN", set())
    assert [netutil.free_tcp_port(), netutil.free_tcp_port()] == [41001, 41002]


def test_ports_are_free_and_distinct() -> None:
    ports = [netutil.free_tcp_port() for _ in range(50)]
    assert len(set(ports)) == 50
    for port in ports[:5]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))  # nobody holds it
