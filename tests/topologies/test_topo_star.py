"""Topologies as graphs (no root needed) and the spec-string parser."""

from __future__ import annotations

import os
import sys

import pytest

from controller import TableEntry
from controller.routes import host_routes
from topologies.addressing import HostAttachment, host_attachments, host_ip, host_mac
from topologies.spec import TopoSpecError, parse_topo_spec
from topologies.star import StarTopo


def test_star_declares_hosts_switch_and_numbered_ports() -> None:
    topo = StarTopo(n=3)
    assert topo.hosts() == ["h1", "h2", "h3"]
    assert topo.switches() == ["s1"]
    for i in (1, 2, 3):
        info = topo.nodeInfo(f"h{i}")
        assert info["ip"] == f"10.0.0.{i}/24"
        assert info["mac"] == f"00:00:00:00:00:0{i}"
        assert topo.port(f"h{i}", "s1") == (0, i)  # s1-ethI is switch port I
    links = topo.links(sort=True, withInfo=True)
    assert len(links) == 3
    assert all("cls" not in info for _, _, info in links)  # unshaped by default


def test_star_with_bandwidth_uses_tclink() -> None:
    from mininet.link import TCLink

    topo = StarTopo(n=2, bw=100)
    for _, _, info in topo.links(withInfo=True):
        assert info["cls"] is TCLink and info["bw"] == 100


def test_host_numbering() -> None:
    assert host_ip(7) == "10.0.0.7"
    assert host_mac(7) == "00:00:00:00:00:07"
    assert host_mac(200) == "00:00:00:00:00:c8"


def test_star_bounds() -> None:
    assert len(StarTopo(n=253).hosts()) == 253
    with pytest.raises(ValueError, match="a star has 1 to 253 hosts, not 0"):
        StarTopo(n=0)


def test_host_attachments_and_routes() -> None:
    attachments = host_attachments(StarTopo(n=2))
    assert attachments == [
        HostAttachment("h1", "10.0.0.1", 24, "00:00:00:00:00:01", "s1", 1),
        HostAttachment("h2", "10.0.0.2", 24, "00:00:00:00:00:02", "s1", 2),
    ]
    assert host_routes(attachments) == {"s1": [
        TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.0.1/32"}, "forward",
                   {"port": 1, "dst_mac": "00:00:00:00:00:01"}),
        TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.0.2/32"}, "forward",
                   {"port": 2, "dst_mac": "00:00:00:00:00:02"}),
    ]}


def test_spec_strings() -> None:
    topo = parse_topo_spec("star,4")
    assert isinstance(topo, StarTopo) and len(topo.hosts()) == 4
    topo = parse_topo_spec(" star , 2 , bw=50 ")
    assert [info["bw"] for _, _, info in topo.links(withInfo=True)] == [50.0, 50.0]


@pytest.mark.parametrize(("spec", "message"), [
    ("", "topology spec '': empty topology name"),
    ("ring,3", r"topology spec 'ring,3': unknown topology 'ring' \(known: star, linear, "
               r"leafspine, fattree, torus, dragonfly, or a .json/.yaml file\)"),
    ("star", r"topology spec 'star': star takes 1 argument: N \(the number of hosts\) "
             r"\(e.g. star,4\)"),
    ("star,2,3", "star takes 1 argument"),
    ("star,x", r"topology spec 'star,x': star's N \(the number of hosts\) must be an "
               "integer, got 'x'"),
    ("star,0", r"star's N \(the number of hosts\) must be in \[1, 253\], got 0"),
    ("star,2,bw=fast", "star's bw .Mbit/s. must be a number, got 'fast'"),
    ("star,2,bw=-1", "star's bw .Mbit/s. must be positive, got -1"),
    ("star,2,delay=5ms", "star has no option 'delay' .options: bw."),
    ("star,2,bw=1,bw=2", "option 'bw' given twice"),
    ("star,bw=1,2", "argument '2' after options"),
    ("star,,2", "malformed element ''"),
    ("star,2,bw=", "malformed element 'bw='"),
])
def test_bad_spec_strings(spec: str, message: str) -> None:
    with pytest.raises(TopoSpecError, match=message):
        parse_topo_spec(spec)


def test_mininet_lock_makes_a_second_network_wait(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from topologies.netutil import StartError, mininet_lock

    lock = tmp_path / "mininet.lock"
    told: list[str] = []
    with mininet_lock(path=lock, tidy=False):
        holder = f"process {os.getpid()} ({' '.join(sys.argv)})"
        with pytest.raises(StartError) as raised:
            with mininet_lock(timeout=0.5, path=lock, waiting=told.append, tidy=False):
                pass
        assert str(raised.value) == (f"another Mininet network ({holder}) held {lock} for "
                                     "more than 0.5 s")
        assert told == [f"waiting for another Mininet network on this machine to end "
                        f"({holder}; lock {lock})"]  # once
    assert lock.read_text() == ""  # no holder
    with mininet_lock(timeout=0.3, path=lock, waiting=told.append, tidy=False):
        pass  # free again, without waiting
    assert len(told) == 1
