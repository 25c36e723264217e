"""Helpers for the node-class tests: a tiny topology with names no other test uses, and
a stand-in switch executable that behaves like a P4Runtime switch process (it only
listens on its gRPC address)."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from mininet.topo import Topo

# unique names: interfaces are q4s1-eth1, q4s1-eth2 (the E2E tests use s1-ethN)
SWITCH = "q4s1"

FAKE_SWITCH = textwrap.dedent('''
    import signal, socket, sys, time
    args = sys.argv[1:]
    print("fake switch", " ".join(args), flush=True)
    mode = args[args.index("--mode") + 1] if "--mode" in args else "listen"
    if mode == "fail":
        print("error: interface q4s1-eth9 does not exist", flush=True)
        sys.exit(3)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if mode == "listen":
        host, port = args[args.index("--grpc-server-addr") + 1].rsplit(":", 1)
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, int(port)))
        server.listen()
    while True:
        time.sleep(1)
''')


class PairTopo(Topo):  # type: ignore[misc]
    def build(self) -> None:  # type: ignore[override]
        switch = self.addSwitch(SWITCH)
        for i in (1, 2):
            host = self.addHost(f"q4h{i}", ip=f"10.9.0.{i}/24")
            self.addLink(host, switch, port1=0, port2=i)


TWO_SWITCHES = ("q4s1", "q4s2")


class TwoSwitchTopo(Topo):  # type: ignore[misc]
    """Two switches in a line, a host on each."""

    def build(self) -> None:  # type: ignore[override]
        left, right = (self.addSwitch(name) for name in TWO_SWITCHES)
        for i, switch in enumerate((left, right), start=1):
            host = self.addHost(f"q4h{i}", ip=f"10.9.0.{i}/24")
            self.addLink(host, switch, port1=0, port2=1)
        self.addLink(left, right, port1=2, port2=2)


def need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (Mininet)")
    if shutil.which("mnexec") is None:
        pytest.skip("needs Mininet's mnexec")


def write_fake_switch(directory: Path) -> list[str]:
    script = directory / "fake_switch.py"
    script.write_text(FAKE_SWITCH)
    return [sys.executable, str(script)]
