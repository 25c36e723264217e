"""The Mininet end-to-end network: a star of three hosts around one ``ina switch``
(``topologies.star.StarTopo`` with ``topologies.nodes.InaSwitch``), started once per
module and always stopped. Port 3 loses 5% of the frames it sends (``--impair``, seeded).

The switch starts without a program (``--no-p4``); the controller client pushes
``p4/ipv4_forward.p4`` and one /32 route per host over P4Runtime, and the hosts have
static ARP entries. These tests need root and ``ina switch``; the network uses the
names s1, s1-ethN, so it holds ``topologies.netutil.mininet_lock`` while it runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import LOSS, LOSSY_PORT, StarNet

from controller import P4RuntimeClient
from controller.routes import host_routes
from topologies.addressing import host_attachments
from topologies.netutil import mininet_lock
from topologies.nodes import InaSwitch, ina_command
from topologies.star import StarTopo

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4" / "ipv4_forward.p4"


def need_ina_switch_and_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (Mininet)")
    if shutil.which("mnexec") is None:
        pytest.skip("needs Mininet's mnexec")
    help_text = subprocess.run([*ina_command(), "switch", "--help"], capture_output=True,
                               text=True)
    assert help_text.returncode == 0, f"`ina switch` is missing: {help_text.stderr}"


@pytest.fixture(scope="module")
def star(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StarNet]:
    need_ina_switch_and_root()
    from mininet.log import setLogLevel
    from mininet.net import Mininet

    setLogLevel("warning")
    log_dir = tmp_path_factory.mktemp("e2e-star")
    topo = StarTopo(n=3)
    net = Mininet(topo=topo, controller=None, build=False,
                  switch=partial(InaSwitch, log_dir=log_dir, seed=11,
                                 impair=[f"{LOSSY_PORT}:loss={LOSS}"]))
    with mininet_lock(), _stopping(net):
        net.build()
        net.start()
        net.staticArp()
        switch = net.get("s1")
        compiled = switch.compile(PROGRAM, log_dir)
        client = P4RuntimeClient(switch.grpc_address, device_id=switch.device_id, name="s1")
        client.connect()
        client.set_pipeline(compiled.p4info, compiled.device_config)
        client.insert(*host_routes(host_attachments(topo))["s1"])
        try:
            yield StarNet(net, switch, client, log_dir)
        finally:
            client.close()


@contextmanager
def _stopping(net: Any) -> Iterator[None]:
    try:
        yield
    finally:
        net.stop()
