"""Kernel impairments (nftables) for switches without their own: the rules, the specs
they refuse, and real frames dropped and duplicated between two network namespaces."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from topologies.kernel_impair import (
    HostLink,
    KernelImpairError,
    host_rules,
    impair_host_links,
    parse_spec,
    switch_rules,
)
from topologies.netutil import mininet_lock

SO_RCVBUFFORCE = 33  # Linux; not in Python's socket module


def test_rules_of_a_spec() -> None:
    config = parse_spec("loss=0.01,duplicate=5%,direction=both,seed=3")
    assert config is not None
    assert host_rules(config, "h1-eth0") == (
        'table netdev ina_impair {\n'
        '  chain sent { type filter hook egress device "h1-eth0" priority 0; '
        'policy accept;\n'
        '    numgen random mod 1000000 < 10000 drop\n'
        '    numgen random mod 1000000 < 50000 dup to "h1-eth0"\n'
        '  }\n'
        '  chain received { type filter hook ingress device "h1-eth0" priority 0; '
        'policy accept;\n'
        '    numgen random mod 1000000 < 10000 drop\n'
        '  }\n'
        '}\n')
    assert switch_rules(config, "s1-eth1") == (
        'table netdev ina_impair_s1_eth1 {\n'
        '  chain egress { type filter hook egress device "s1-eth1" priority 0; '
        'policy accept;\n'
        '    numgen random mod 1000000 < 50000 dup to "s1-eth1"\n'
        '  }\n'
        '}\n')


def test_directions_are_seen_from_the_switch_port() -> None:
    ingress = parse_spec("loss=0.1,direction=ingress")
    egress = parse_spec("loss=0.1,direction=egress")
    assert ingress is not None and egress is not None
    assert "hook egress" in host_rules(ingress, "h") and "hook ingress" not in host_rules(
        ingress, "h")
    assert "hook ingress" in host_rules(egress, "h") and "hook egress" not in host_rules(
        egress, "h")
    assert switch_rules(parse_spec("duplicate=0.1,direction=ingress"), "s") is None  # type: ignore[arg-type]
    assert parse_spec("none") is None


@pytest.mark.parametrize(("spec", "message"), [
    ("delay=10ms", "delay needs the built-in switch: the kernel here has no netem"),
    ("reorder=0.1,loss=0.1", "reorder needs the built-in switch"),
    ("loss=2", "bad impairment spec 'all:loss=2': loss must be between 0 and 1"),
    ("speed=3", "unknown key 'speed'"),
])
def test_specs_the_kernel_cannot_do(spec: str, message: str) -> None:
    with pytest.raises(KernelImpairError, match=message):
        parse_spec(spec)


def test_loss_between_switches_is_refused() -> None:
    with pytest.raises(KernelImpairError, match="loss on links between two switches needs "
                       "the built-in switch"):
        impair_host_links([], "loss=0.01", has_switch_links=True)


# ------------------------------------------------------------ real frames


@dataclass
class FakeHost:
    """What ``impair_host_links`` needs of a Mininet host: its name and a PID in its
    namespace."""

    name: str
    pid: int


@pytest.fixture
def pair() -> Iterator[tuple[FakeHost, str]]:
    """A namespace ``kiq-a`` (a host, its interface ``kiq-ha``) linked by a veth pair to
    ``kiq-sw`` in the root namespace (the switch's side, address 10.79.0.2)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    for tool in ("nft", "mnexec"):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool}")
    with mininet_lock():  # the names and the subnet are fixed: one test run at a time
        yield from _pair()


def _pair() -> Iterator[tuple[FakeHost, str]]:
    subprocess.run(["ip", "netns", "del", "kiq-a"], capture_output=True)
    subprocess.run(["ip", "link", "del", "kiq-sw"], capture_output=True)

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True)

    ip("netns", "add", "kiq-a")
    sleeper = None
    try:
        ip("link", "add", "kiq-sw", "type", "veth", "peer", "name", "kiq-ha")
        ip("link", "set", "kiq-ha", "netns", "kiq-a")
        ip("-n", "kiq-a", "addr", "add", "10.79.0.1/24", "dev", "kiq-ha")
        ip("-n", "kiq-a", "link", "set", "kiq-ha", "up")
        ip("addr", "add", "10.79.0.2/24", "dev", "kiq-sw")
        ip("link", "set", "kiq-sw", "up")
        sleeper = subprocess.Popen(["ip", "netns", "exec", "kiq-a", "sleep", "300"])
        # mnexec -a joins the namespace of a process in it
        for _ in range(100):
            out = subprocess.run(["ip", "netns", "pids", "kiq-a"], capture_output=True,
                                 text=True).stdout.split()
            if out:
                break
        yield FakeHost("kiq-a", int(out[0])), "kiq-sw"
    finally:
        if sleeper is not None:
            sleeper.kill()
            sleeper.wait()
        subprocess.run(["ip", "link", "del", "kiq-sw"], capture_output=True)
        subprocess.run(["ip", "netns", "del", "kiq-a"], capture_output=True)


def _host_to_switch(count: int) -> int:
    """Send ``count`` datagrams from the host namespace to the root namespace; how many
    arrived. A dropped frame must not fail the sender's send call."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx:
        rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)  # room for every one
        rx.bind(("10.79.0.2", 0))
        rx.settimeout(0.5)
        port = rx.getsockname()[1]
        send = (f"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                f"for i in range({count}): s.sendto(b'x' * 64, ('10.79.0.2', {port}))\n")
        subprocess.run(["ip", "netns", "exec", "kiq-a", "python3", "-c", send], check=True)
        got = 0
        try:
            while True:
                rx.recv(100)
                got += 1
        except TimeoutError:
            return got


def test_loss_and_duplication_on_real_frames(pair: tuple[FakeHost, str]) -> None:
    host, switch_intf = pair
    links = [HostLink(host, "kiq-ha", switch_intf)]
    assert _host_to_switch(400) == 400
    impair_host_links(links, "loss=0.5,direction=ingress")
    got = _host_to_switch(2000)
    assert 700 < got < 1300, got  # 1000 expected; the bounds are 14 standard deviations
    impair_host_links(links, "duplicate=0.5,direction=ingress")
    got = _host_to_switch(1000)
    assert 1600 < got < 2400, got  # each frame has 1 / (1 - 0.5) copies on average: 2000
    impair_host_links(links, "none")
    assert _host_to_switch(400) == 400
