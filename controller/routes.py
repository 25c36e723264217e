"""IPv4 routes for every switch and the static ARP entries of every host.

The switches act as IPv4 gateways with the MAC address the topology gives them: a host
resolves every other host's address, and every aggregator address, to the MAC of its
own switch (static ARP entries: the switches drop ARP). A switch routes each host by a
/32 entry of ``ipv4_lpm`` to ``forward(port, dst_mac)``: on the host's own switch the
port the host hangs off and the host's MAC, elsewhere the port of the next switch on a
shortest path (fewest switch hops, ties broken by the lower port) and that switch's
MAC. ``forward`` puts the incoming destination MAC (the switch's own) in the source.

With ECMP (``compute_ecmp_routes``, for programs with the ``ecmp_nhop`` table), a
switch with several first hops on shortest paths towards a host routes it instead to
``ecmp_group(group, size)``; the switch hashes each packet's 5-tuple to one of the
group's ``size`` members, which are ``ecmp_nhop`` entries ``(group, index) ->
forward(port, dst_mac)``, by port. A switch has one group per set of next hops,
numbered from 1 in the order its hosts (by name) first need them; a host with one next
hop keeps its plain ``forward`` route.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from controller.entities import TableEntry
from controller.topology import Topology, sorted_names

ROUTE_TABLE = "ipv4_lpm"
ROUTE_ACTION = "forward"
ROUTE_MATCH = "hdr.ipv4.dst_addr"
ECMP_ACTION = "ecmp_group"  # on ROUTE_TABLE: (group, size)
ECMP_TABLE = "ecmp_nhop"
ECMP_GROUP_FIELD = "meta.ecmp_group"
ECMP_INDEX_FIELD = "meta.ecmp_index"


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
class NextHop:
    port: int
    dst_mac: str


@dataclass(frozen=True)
class EcmpGroup:
    """Equal-cost next hops of one switch, by port; member i is ``ecmp_nhop`` entry
    (group, i)."""

    switch: str
    group: int
    members: tuple[NextHop, ...]

    def entries(self) -> list[TableEntry]:
        return [TableEntry(ECMP_TABLE, {ECMP_GROUP_FIELD: self.group, ECMP_INDEX_FIELD: i},
                           ROUTE_ACTION, {"port": m.port, "dst_mac": m.dst_mac})
                for i, m in enumerate(self.members)]


@dataclass(frozen=True)
class EcmpRoute:
    switch: str
    prefix: str
    group: EcmpGroup

    def entry(self) -> TableEntry:
        return TableEntry(ROUTE_TABLE, {ROUTE_MATCH: self.prefix}, ECMP_ACTION,
                          {"group": self.group.group, "size": len(self.group.members)})


AnyRoute = Route | EcmpRoute


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
    (fewest hops; among equal paths the lowest first port, the first of
    ``equal_cost_ports``). Unreachable ``t`` are absent."""
    return {s: {t: ports[0] for t, ports in towards.items()}
            for s, towards in equal_cost_ports(topo).items()}


def switch_distances(topo: Topology, source: str) -> dict[str, int]:
    """Switch hops from ``source`` to every switch it reaches."""
    dist = {source: 0}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for _, peer in topo.switch_neighbours(node):
            if peer not in dist:
                dist[peer] = dist[node] + 1
                queue.append(peer)
    return dist


def equal_cost_ports(topo: Topology) -> dict[str, dict[str, tuple[int, ...]]]:
    """``ports[s][t]``: every port of switch ``s`` that starts a shortest path to switch
    ``t`` (fewest hops), ascending. Unreachable ``t`` are absent."""
    dist = {s: switch_distances(topo, s) for s in topo.switches}
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for s in topo.switches:
        out[s] = {t: tuple(port for port, peer in topo.switch_neighbours(s)
                           if dist[peer].get(t) == d - 1)
                  for t, d in dist[s].items() if t != s}
    return out


def compute_routes(topo: Topology) -> dict[str, list[Route]]:
    """The ``ipv4_lpm`` routes of every switch, hosts in natural name order: one next
    hop each."""
    hops = next_hops(topo)
    routes: dict[str, list[Route]] = {name: [] for name in topo.switches}
    for switch, prefix, (hop, *_) in _hops_to_hosts(
            topo, lambda s, t: (hops[s][t],) if t in hops[s] else ()):
        routes[switch].append(Route(switch, prefix, hop.port, hop.dst_mac))
    return routes


def compute_ecmp_routes(topo: Topology) -> dict[str, list[AnyRoute]]:
    """The routes of every switch with ECMP (see the module docstring), hosts in natural
    name order."""
    ports = equal_cost_ports(topo)
    routes: dict[str, list[AnyRoute]] = {name: [] for name in topo.switches}
    groups: dict[str, dict[tuple[NextHop, ...], EcmpGroup]] = {s: {} for s in topo.switches}
    for switch, prefix, hops in _hops_to_hosts(topo, lambda s, t: ports[s].get(t, ())):
        if len(hops) == 1:
            routes[switch].append(Route(switch, prefix, hops[0].port, hops[0].dst_mac))
            continue
        mine = groups[switch]
        if hops not in mine:
            mine[hops] = EcmpGroup(switch, len(mine) + 1, hops)
        routes[switch].append(EcmpRoute(switch, prefix, mine[hops]))
    return routes


def _hops_to_hosts(topo: Topology, first_ports: Callable[[str, str], tuple[int, ...]]
                   ) -> Iterator[tuple[str, str, tuple[NextHop, ...]]]:
    """(switch, host /32 prefix, next hops) for every switch and every host it reaches,
    hosts in natural name order. ``first_ports(s, t)``: the ports of switch ``s``
    towards switch ``t`` (none: unreachable); the next hop is the switch behind one,
    and on the host's own switch the host."""
    for switch in topo.switches:
        for host_name in sorted_names(topo.hosts):
            host = topo.hosts[host_name]
            where = topo.attachments[host_name]
            prefix = f"{host.ip}/32"
            if where.switch == switch:
                yield switch, prefix, (NextHop(where.port, host.mac),)
                continue
            hops = tuple(NextHop(port, topo.switches[topo.ports[switch][port].node].mac)
                         for port in first_ports(switch, where.switch))
            if hops:  # else another island of the network
                yield switch, prefix, hops


def ecmp_groups(routes: Iterable[AnyRoute]) -> list[EcmpGroup]:
    """The groups the routes use, each once, by group number."""
    found = {r.group.group: r.group for r in routes if isinstance(r, EcmpRoute)}
    return [found[g] for g in sorted(found)]


def route_entries(routes: Iterable[AnyRoute]) -> list[TableEntry]:
    """The table entries of one switch's routes: every group's members first (so no
    route names a group before it exists), then the ``ipv4_lpm`` entries."""
    routes = list(routes)
    members = [e for g in ecmp_groups(routes) for e in g.entries()]
    return members + [r.entry() for r in routes]


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
