"""A declared topology as a networkx graph, and the checks every topology must pass
before Mininet starts it (no root needed).

``topo_graph`` turns a Mininet ``Topo`` into a ``networkx.MultiGraph``: nodes carry
``kind`` ("host" or "switch") and the node's info (``ip``, ``mac``, ``layer``, ...),
edges carry ``ports`` (node -> port), ``bw`` and ``impair`` (see
``topologies.builder``). ``validate`` raises ``TopoSpecError`` naming the first problem:
a network in pieces, a host with no link or several, two hosts linked directly, an
interface name Linux cannot take, a switch name without its device id, or more hosts
and switches than the 10.0.0.0/24 addresses (hosts, and one aggregator address per
switch) can hold.
"""

from __future__ import annotations

import re
from typing import Any

import networkx as nx

from topologies.addressing import MAX_HOSTS
from topologies.family import TopoSpecError

IFNAME_MAX = 15  # Linux interface names: IFNAMSIZ - 1


def topo_graph(topo: Any) -> nx.MultiGraph:
    g = nx.MultiGraph()
    switches = set(topo.switches())
    for name in topo.nodes(sort=True):
        kind = "switch" if name in switches else "host"
        g.add_node(name, kind=kind, **{k: v for k, v in topo.nodeInfo(name).items()
                                       if k != "cls"})
    for a, b, info in topo.links(sort=True, withInfo=True):
        g.add_edge(a, b, ports={info["node1"]: info["port1"], info["node2"]: info["port2"]},
                   bw=info.get("bw"), impair=info.get("impair"))
    return g


def hosts_of(g: nx.MultiGraph) -> list[str]:
    return [n for n, kind in g.nodes(data="kind") if kind == "host"]


def switches_of(g: nx.MultiGraph) -> list[str]:
    return [n for n, kind in g.nodes(data="kind") if kind == "switch"]


def switch_graph(g: nx.MultiGraph) -> nx.MultiGraph:
    """The switches and the links between them."""
    return g.subgraph(switches_of(g)).copy()


def validate(topo: Any) -> nx.MultiGraph:
    """The graph of ``topo`` once every check passed (see the module docstring)."""
    g = topo_graph(topo)
    hosts, switches = hosts_of(g), switches_of(g)
    if not switches:
        raise TopoSpecError("the topology has no switch")
    if len(hosts) + len(switches) > MAX_HOSTS:
        raise TopoSpecError(f"{len(hosts)} hosts and {len(switches)} switches: at most "
                            f"{MAX_HOSTS} fit in 10.0.0.0/24 (an address per host, and an "
                            "aggregator address per switch)")
    ids: dict[int, str] = {}
    for s in switches:
        digits = re.findall(r"\d+", s)
        if not digits:
            raise TopoSpecError(f"switch {s}: the name needs a number, its device id "
                                "(e.g. s1)")
        device_id = int(digits[-1])
        if device_id in ids:
            raise TopoSpecError(f"switches {ids[device_id]} and {s} have the same device "
                                f"id {device_id} (the last number in the name)")
        ids[device_id] = s
    for h in hosts:
        peers = [b for _, b in g.edges(h)]
        if len(peers) != 1:
            raise TopoSpecError(f"host {h} has {len(peers)} links; a host has exactly one, "
                                "to a switch")
        if g.nodes[peers[0]]["kind"] != "switch":
            raise TopoSpecError(f"hosts {h} and {peers[0]} are linked directly; a host "
                                "links to a switch")
    for a, b, data in g.edges(data=True):
        if a == b:
            raise TopoSpecError(f"switch {a} is linked to itself")
        for node, port in data["ports"].items():
            intf = f"{node}-eth{port}"
            if len(intf) > IFNAME_MAX:
                raise TopoSpecError(f"interface {intf} of the link {a} - {b}: longer than "
                                    f"{IFNAME_MAX} characters (shorten the name {node})")
    if not nx.is_connected(g):
        parts = sorted((sorted(c) for c in nx.connected_components(g)), key=len)
        raise TopoSpecError(f"the network is in {len(parts)} pieces: "
                            f"{', '.join(parts[0][:5])}{' ...' if len(parts[0]) > 5 else ''}"
                            f" cannot reach {parts[-1][0]}")
    return g
