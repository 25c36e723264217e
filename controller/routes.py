"""IPv4 routes for every switch and the static ARP entries of every host.

The switches act as IPv4 gateways with the MAC address the topology gives them: a host
resolves every other host's address, and every aggregator address, to the MAC of its
own switch (static ARP entries: the switches drop ARP). A switch routes each host by a
/32 entry of ``ipv4_lpm`` to ``forward(port, dst_mac)``: on the host's own switch the
port the host hangs off and the host's MAC, elsewhere the port of the next switch on a
shortest path (fewest switch hops, ties broken by the lower port) and that switch's
MAC. ``forward`` puts the incoming destination MAC (the switch's own) in the source.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from controller.entities import TableEntry
from controller.topology import Topology, sorted_names

ROUTE_TABLE = "ipv4_lpm"
ROUTE_ACTION = "forward"
ROUTE_MATCH = "hdr.ipv4.dst_addr"


@dataclass(frozen=True)
class Route:
    switch: str
    prefix: str  # "10.0.0.1/32"
    port: int
    dst_mac: str

    def entry(self) -> TableEntry:
        return TableEntry(ROUTE_TABLE, {ROUTE_MATCH: self.prefix}, ROUTE_ACTION,
                          {"port": self.port, "dst_mac": self.dst_mac})


@dataclass(frozen=True)
class ArpEntry:
    host: str
    ip: str
    mac: str
    iface: str

    def command(self) -> list[str]:
        """The command that installs it, run on the host."""
        return ["ip", "neigh", "replace", self.ip, "lladdr", self.mac, "dev", self.iface,
                "nud", "permanent"]


def next_hops(topo: Topology) -> dict[str, dict[str, int]]:
    """``hops[s][t]``: the port of switch ``s`` on a shortest path to switch ``t``
    (fewest hops; among equal paths the lowest first port). Unreachable ``t`` are
    absent."""
    hops: dict[str, dict[str, int]] = {}
    for source in topo.switches:
        first: dict[str, int] = {}
        seen = {source}
        queue: deque[tuple[str, int | None]] = deque([(source, None)])
        while queue:
            node, port = queue.popleft()
            for local, peer in topo.switch_neighbours(node):
                if peer in seen:
                    continue
                seen.add(peer)
                out = local if port is None else port
                first[peer] = out
                queue.append((peer, out))
        hops[source] = first
    return hops


def compute_routes(topo: Topology) -> dict[str, list[Route]]:
    """The ``ipv4_lpm`` routes of every switch, hosts in natural name order."""
    hops = next_hops(topo)
    routes: dict[str, list[Route]] = {name: [] for name in topo.switches}
    for switch in topo.switches:
        for host_name in sorted_names(topo.hosts):
            host = topo.hosts[host_name]
            where = topo.attachments[host_name]
            if where.switch == switch:
                port, mac = where.port, host.mac
            elif where.switch in hops[switch]:
                port = hops[switch][where.switch]
                mac = topo.switches[topo.ports[switch][port].node].mac  # the next hop
            else:
                continue  # another island of the network
            routes[switch].append(Route(switch, f"{host.ip}/32", port, mac))
    return routes


def compute_arp(topo: Topology) -> dict[str, list[ArpEntry]]:
    """The static ARP entries of every host: all other hosts and all aggregator
    addresses map to the MAC of the host's switch."""
    out: dict[str, list[ArpEntry]] = {}
    for name in sorted_names(topo.hosts):
        host = topo.hosts[name]
        gateway = topo.switches[topo.attachments[name].switch].mac
        entries = [ArpEntry(name, topo.hosts[other].ip, gateway, host.interface)
                   for other in sorted_names(topo.hosts) if other != name]
        entries += [ArpEntry(name, topo.switches[s].aggregator_ip, gateway, host.interface)
                    for s in sorted_names(topo.switches)]
        out[name] = entries
    return out


class _Attached(Protocol):
    ip: str
    mac: str
    switch: str
    port: int


def host_routes(attachments: Iterable[_Attached]) -> dict[str, list[TableEntry]]:
    """The /32 ``ipv4_lpm`` entries for hosts on their own switches only (one switch, or
    hosts that reach each other through one switch): ``forward`` to the host's port and
    MAC. Takes ``topologies.addressing.host_attachments``; ``compute_routes`` handles
    multi-switch topologies."""
    out: dict[str, list[TableEntry]] = {}
    for a in attachments:
        out.setdefault(a.switch, []).append(Route(a.switch, f"{a.ip}/32", a.port, a.mac).entry())
    return out
