"""Routes (``ipv4_lpm`` entries) and static ARP entries computed from a topology."""

from __future__ import annotations

from typing import Any

from controller import TableEntry
from controller.routes import ArpEntry, Route, compute_arp, compute_routes, next_hops
from controller.topology import Topology
from topologies.star import StarTopo

S1_MAC = "02:00:00:ff:00:01"


def line_of_three() -> dict[str, Any]:
    """s1 - s2 - s3, with h1 on s1 and h3 on s3 (and h2 on s2)."""
    return {
        "hosts": [{"name": f"h{i}", "ip": f"10.0.0.{i}", "mac": f"00:00:00:00:00:0{i}"}
                  for i in (1, 2, 3)],
        "switches": [{"name": f"s{i}", "device_id": i} for i in (1, 2, 3)],
        "links": [["h1", "s1:1"], ["h2", "s2:1"], ["h3", "s3:1"],
                  ["s1:2", "s2:2"], ["s2:3", "s3:2"]],
    }


def test_star4_routes_exactly() -> None:
    routes = compute_routes(Topology.from_mininet(StarTopo(n=4)))
    assert routes == {"s1": [Route("s1", f"10.0.0.{i}/32", i, f"00:00:00:00:00:0{i}")
                             for i in (1, 2, 3, 4)]}
    assert routes["s1"][1].entry() == TableEntry(
        "ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.0.2/32"}, "forward",
        {"port": 2, "dst_mac": "00:00:00:00:00:02"})


def test_star4_arp_exactly() -> None:
    arp = compute_arp(Topology.from_mininet(StarTopo(n=4)))
    assert list(arp) == ["h1", "h2", "h3", "h4"]
    assert arp["h2"] == [ArpEntry("h2", "10.0.0.1", S1_MAC, "h2-eth0"),
                         ArpEntry("h2", "10.0.0.3", S1_MAC, "h2-eth0"),
                         ArpEntry("h2", "10.0.0.4", S1_MAC, "h2-eth0"),
                         ArpEntry("h2", "10.0.0.254", S1_MAC, "h2-eth0")]
    assert arp["h2"][3].command() == ["ip", "neigh", "replace", "10.0.0.254", "lladdr",
                                      S1_MAC, "dev", "h2-eth0", "nud", "permanent"]


def test_multi_switch_routes_go_through_the_next_switch() -> None:
    topo = Topology.from_json(line_of_three())
    assert next_hops(topo) == {"s1": {"s2": 2, "s3": 2}, "s2": {"s1": 2, "s3": 3},
                               "s3": {"s2": 2, "s1": 2}}
    mac = {i: f"02:00:00:ff:00:0{i}" for i in (1, 2, 3)}
    routes = compute_routes(topo)
    assert routes["s1"] == [Route("s1", "10.0.0.1/32", 1, "00:00:00:00:00:01"),
                            Route("s1", "10.0.0.2/32", 2, mac[2]),
                            Route("s1", "10.0.0.3/32", 2, mac[2])]
    assert routes["s2"] == [Route("s2", "10.0.0.1/32", 2, mac[1]),
                            Route("s2", "10.0.0.2/32", 1, "00:00:00:00:00:02"),
                            Route("s2", "10.0.0.3/32", 3, mac[3])]
    # every host resolves everything to its own switch, incl. all aggregator addresses
    arp = compute_arp(topo)
    assert [(e.ip, e.mac) for e in arp["h3"]] == [
        ("10.0.0.1", mac[3]), ("10.0.0.2", mac[3]), ("10.0.0.254", mac[3]),
        ("10.0.0.253", mac[3]), ("10.0.0.252", mac[3])]


def test_shortest_path_prefers_fewer_hops_then_lower_port() -> None:
    data = line_of_three()
    data["links"].append(["s1:3", "s3:3"])  # a ring: s1 reaches s3 directly
    data["links"].append(["s1:4", "s2:4"])  # a second, higher-numbered s1-s2 link
    hops = next_hops(Topology.from_json(data))
    assert hops["s1"] == {"s2": 2, "s3": 3}
    assert hops["s3"] == {"s2": 2, "s1": 3}


def test_disconnected_switches_get_no_route_to_each_other() -> None:
    data = line_of_three()
    data["links"] = data["links"][:3] + [["s1:2", "s2:2"]]  # s3 is alone with h3
    routes = compute_routes(Topology.from_json(data))
    assert [r.prefix for r in routes["s3"]] == ["10.0.0.3/32"]
    assert [r.prefix for r in routes["s1"]] == ["10.0.0.1/32", "10.0.0.2/32"]


def test_install_static_arp_runs_the_commands_on_the_hosts() -> None:
    from controller.controller import install_static_arp

    ran: dict[str, list[str]] = {}

    class Host:
        def __init__(self, name: str) -> None:
            self.name = name

        def cmd(self, line: str) -> str:
            ran.setdefault(self.name, []).append(line)
            return ""

    class Net:
        def get(self, name: str) -> Host:
            return Host(name)

    assert install_static_arp(Net(), Topology.from_mininet(StarTopo(n=2))) == 4
    assert ran == {
        "h1": [f"ip neigh replace {ip} lladdr {S1_MAC} dev h1-eth0 nud permanent 2>&1"
               for ip in ("10.0.0.2", "10.0.0.254")],
        "h2": [f"ip neigh replace {ip} lladdr {S1_MAC} dev h2-eth0 nud permanent 2>&1"
               for ip in ("10.0.0.1", "10.0.0.254")]}
