"""Routes on every topology family, also those with cycles (fat-tree, torus, dragonfly):
every host reaches every other by following the switches' routes, on a shortest path."""

from __future__ import annotations

import networkx as nx
import pytest

from controller.routes import compute_routes
from controller.topology import Topology
from topologies.graph import topo_graph
from topologies.spec import parse_topo_spec

SPECS = ["star,3", "linear,4,1", "leafspine,3,2,2", "fattree,4", "torus,2,2", "torus,3,3",
         "torus,4,3", "dragonfly,4,2,1", "dragonfly,3,3,2"]


def walk(topo: Topology, routes: dict[str, dict[str, int]], src: str, dst: str
         ) -> list[str]:
    """The nodes a packet from ``src`` to ``dst`` passes, by the routes."""
    at = topo.attachment(src).switch
    path = [src, at]
    while True:
        port = routes[at][f"{topo.hosts[dst].ip}/32"]
        peer = topo.ports[at][port]
        path.append(peer.node)
        if peer.port is None:
            return path
        at = peer.node
        assert len(path) <= len(topo.switches) + 2, f"a loop: {path}"


@pytest.mark.parametrize("spec", SPECS)
def test_every_host_reaches_every_host_on_a_shortest_path(spec: str) -> None:
    mininet_topo = parse_topo_spec(spec)
    topo = Topology.from_mininet(mininet_topo)
    g = topo_graph(mininet_topo)
    routes = {s: {r.prefix: r.port for r in rs} for s, rs in compute_routes(topo).items()}
    assert all(len(r) == len(topo.hosts) for r in routes.values())
    for src in topo.hosts:
        for dst in topo.hosts:
            if src == dst:
                continue
            path = walk(topo, routes, src, dst)
            assert path[-1] == dst
            assert len(path) - 1 == nx.shortest_path_length(g, src, dst), (src, dst, path)


def test_equal_paths_take_the_lowest_port() -> None:
    """In a fat-tree an edge switch reaches another pod through either aggregation
    switch; it takes the lower port (no ECMP), and so does every switch on the way."""
    topo = Topology.from_mininet(parse_topo_spec("fattree,4"))
    routes = {s: {r.prefix: r.port for r in rs} for s, rs in compute_routes(topo).items()}
    assert routes["s7"]["10.0.0.5/32"] == 3  # to s5, not s6 (port 4)
    assert routes["s5"]["10.0.0.5/32"] == 3  # to core s1, not s2
    assert walk(topo, routes, "h1", "h16") == ["h1", "s7", "s5", "s1", "s17", "s20", "h16"]
