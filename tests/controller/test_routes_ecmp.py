"""ECMP routes (``compute_ecmp_routes``): every equal-cost first hop of a switch towards
a host is a member of the route's group, groups are shared by the routes with the same
next hops, and where there is one next hop the route is the plain one."""

from __future__ import annotations

import networkx as nx
import pytest

from controller.entities import TableEntry
from controller.routes import (
    EcmpGroup,
    EcmpRoute,
    NextHop,
    Route,
    compute_ecmp_routes,
    compute_routes,
    ecmp_groups,
    equal_cost_ports,
    next_hops,
    route_entries,
)
from controller.topology import Topology
from topologies.graph import topo_graph
from topologies.spec import parse_topo_spec

SPECS = ["star,3", "linear,4,1", "leafspine,2,2,2", "leafspine,3,2,2", "leafspine,2,3,1",
         "fattree,4", "torus,2,2", "torus,3,3", "torus,4,3", "dragonfly,4,2,1",
         "dragonfly,3,3,2"]


def mac(device: int) -> str:
    return f"02:00:00:ff:00:{device:02x}"


def topology(spec: str) -> Topology:
    return Topology.from_mininet(parse_topo_spec(spec))


def test_leafspine_2_2_2_exactly() -> None:
    """Leaves s1 (h1, h2) and s2 (h3, h4), spines s3 and s4 on the leaves' ports 3 and
    4: a leaf reaches the other leaf's hosts over either spine; a spine has one way."""
    routes = compute_ecmp_routes(topology("leafspine,2,2,2"))
    group = EcmpGroup("s1", 1, (NextHop(3, mac(3)), NextHop(4, mac(4))))
    assert routes["s1"] == [Route("s1", "10.0.0.1/32", 1, "00:00:00:00:00:01"),
                            Route("s1", "10.0.0.2/32", 2, "00:00:00:00:00:02"),
                            EcmpRoute("s1", "10.0.0.3/32", group),
                            EcmpRoute("s1", "10.0.0.4/32", group)]
    assert [r.prefix for r in routes["s2"] if isinstance(r, EcmpRoute)] == [
        "10.0.0.1/32", "10.0.0.2/32"]
    assert all(isinstance(r, Route) for r in routes["s3"] + routes["s4"])
    assert route_entries(routes["s1"]) == [
        TableEntry("ecmp_nhop", {"meta.ecmp_group": 1, "meta.ecmp_index": 0}, "forward",
                   {"port": 3, "dst_mac": mac(3)}),
        TableEntry("ecmp_nhop", {"meta.ecmp_group": 1, "meta.ecmp_index": 1}, "forward",
                   {"port": 4, "dst_mac": mac(4)}),
        TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.0.1/32"}, "forward",
                   {"port": 1, "dst_mac": "00:00:00:00:00:01"}),
        TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.0.2/32"}, "forward",
                   {"port": 2, "dst_mac": "00:00:00:00:00:02"}),
        TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.0.3/32"}, "ecmp_group",
                   {"group": 1, "size": 2}),
        TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.0.4/32"}, "ecmp_group",
                   {"group": 1, "size": 2})]


def test_fattree_4_edge_and_aggregation_switches_have_two_ways_up() -> None:
    """Pod 1 is aggregation switches s5, s6 and edge switches s7 (h1, h2), s8 (h3, h4);
    the cores s1..s4. An edge switch reaches every host beyond it over both aggregation
    switches (ports 3, 4), an aggregation switch the other pods over both its cores; a
    core has one port per pod."""
    topo = topology("fattree,4")
    routes = compute_ecmp_routes(topo)
    by_prefix = {s: {r.prefix: r for r in rs} for s, rs in routes.items()}
    edge = by_prefix["s7"]
    assert isinstance(edge["10.0.0.1/32"], Route)
    for host in (3, 5, 16):
        r = edge[f"10.0.0.{host}/32"]
        assert isinstance(r, EcmpRoute) and [m.port for m in r.group.members] == [3, 4]
        assert [m.dst_mac for m in r.group.members] == [mac(5), mac(6)]
    assert len(ecmp_groups(routes["s7"])) == 1
    aggregation = by_prefix["s5"]
    assert isinstance(aggregation["10.0.0.3/32"], Route)  # down to s8, one way
    r = aggregation["10.0.0.16/32"]
    assert isinstance(r, EcmpRoute) and [m.port for m in r.group.members] == [3, 4]
    assert [topo.ports["s5"][m.port].node for m in r.group.members] == ["s1", "s2"]
    assert all(isinstance(r, Route) for r in routes["s1"])
    assert {len(g.members) for rs in routes.values() for g in ecmp_groups(rs)} == {2}


def equal_cost_count(g: nx.MultiGraph, switch: str, host: str) -> int:
    """How many links of ``switch`` start a shortest path to ``host`` (networkx)."""
    d = nx.shortest_path_length(g, source=host)
    return sum(1 for _, peer in g.edges(switch) if d.get(peer) == d[switch] - 1)


@pytest.mark.parametrize("spec", SPECS)
def test_group_sizes_are_the_equal_cost_next_hops(spec: str) -> None:
    mininet_topo = parse_topo_spec(spec)
    topo = Topology.from_mininet(mininet_topo)
    g = topo_graph(mininet_topo)
    routes = compute_ecmp_routes(topo)
    for switch, rs in routes.items():
        assert [r.prefix for r in rs] == [r.prefix for r in compute_routes(topo)[switch]]
        for r in rs:
            host = f"h{r.prefix.split('/')[0].rsplit('.', 1)[1]}"
            size = len(r.group.members) if isinstance(r, EcmpRoute) else 1
            assert size == equal_cost_count(g, switch, host), (spec, switch, host)


@pytest.mark.parametrize("spec", SPECS)
def test_every_member_leads_on_a_shortest_path(spec: str) -> None:
    """Following any member at every switch reaches the host in the fewest hops."""
    mininet_topo = parse_topo_spec(spec)
    topo = Topology.from_mininet(mininet_topo)
    g = topo_graph(mininet_topo)
    routes = {s: {r.prefix: r for r in rs} for s, rs in compute_ecmp_routes(topo).items()}
    for dst in topo.hosts:
        prefix = f"{topo.hosts[dst].ip}/32"
        d = nx.shortest_path_length(g, source=dst)
        for switch in topo.switches:
            r = routes[switch][prefix]
            ports = ([m.port for m in r.group.members] if isinstance(r, EcmpRoute)
                     else [r.port])
            for port in ports:
                assert d[topo.ports[switch][port].node] == d[switch] - 1, (switch, dst, port)


@pytest.mark.parametrize("spec", SPECS)
def test_single_paths_are_the_first_equal_cost_port(spec: str) -> None:
    topo = topology(spec)
    ports = equal_cost_ports(topo)
    assert {s: {t: p[0] for t, p in ts.items()} for s, ts in ports.items()} == next_hops(topo)


@pytest.mark.parametrize("spec", ["star,4", "linear,4,1", "linear,3,2"])
def test_without_equal_paths_the_routes_are_the_single_ones(spec: str) -> None:
    topo = topology(spec)
    assert compute_ecmp_routes(topo) == compute_routes(topo)
    assert all(ecmp_groups(rs) == [] for rs in compute_ecmp_routes(topo).values())


def test_groups_are_shared_and_numbered_in_first_use_order() -> None:
    """torus,4,3: a switch needs several sets of next hops, each one group, numbered
    1, 2, ... as the hosts (by name) first need them; sizes 2 and 3 occur."""
    routes = compute_ecmp_routes(topology("torus,4,3"))
    sizes = set()
    for switch, rs in routes.items():
        groups = ecmp_groups(rs)
        assert [g.group for g in groups] == list(range(1, len(groups) + 1))
        assert len({g.members for g in groups}) == len(groups)  # deduplicated
        first_use = []
        for r in rs:
            if isinstance(r, EcmpRoute):
                assert r.group == groups[r.group.group - 1]
                if r.group.group not in first_use:
                    first_use.append(r.group.group)
            assert r.switch == switch
        assert first_use == sorted(first_use)
        sizes |= {len(g.members) for g in groups}
    assert sizes == {2, 3}
    assert compute_ecmp_routes(topology("torus,4,3")) == routes  # deterministic


@pytest.mark.parametrize("spec", ["fattree,8", "torus,8,8", "dragonfly,5,4,2"])
def test_the_groups_fit_the_ecmp_table(spec: str) -> None:
    """ecmp_nhop has 1024 entries and group numbers are 16 bits."""
    for rs in compute_ecmp_routes(topology(spec)).values():
        assert sum(len(g.members) for g in ecmp_groups(rs)) <= 1024
