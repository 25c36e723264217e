"""Every topology family as a graph (no root): counts, degrees, ports, structure, and
the spec strings that build them."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from controller.topology import sorted_names
from topologies.builder import link_impairments
from topologies.graph import hosts_of, switch_graph, switches_of, topo_graph, validate
from topologies.spec import FAMILIES, TopoSpecError, parse_topo_spec


def graph(spec: str) -> nx.MultiGraph:
    return validate(parse_topo_spec(spec))


def degree(g: nx.MultiGraph, node: str) -> int:
    return int(g.degree(node))


def peers(spec: str, switch: str) -> dict[int, str]:
    """port -> the node behind it."""
    topo = parse_topo_spec(spec)
    return {port: peer for port, (peer, _) in sorted(topo.ports[switch].items())}


def counts(g: nx.MultiGraph) -> tuple[int, int, int]:
    return len(hosts_of(g)), len(switches_of(g)), g.number_of_edges()


def test_every_family_is_registered_with_an_example_that_builds() -> None:
    assert list(FAMILIES) == ["star", "linear", "leafspine", "fattree", "torus", "dragonfly"]
    for family in FAMILIES.values():
        g = graph(family.example)
        hosts, switches = family.counts(*family.read_args(family.example.split(",")[1:]))
        assert counts(g)[:2] == (hosts, switches), family.name
    assert FAMILIES["torus"].usage == "torus,X,Y[,H]"


def test_every_host_is_hn_with_its_address_on_port_0() -> None:
    topo = parse_topo_spec("dragonfly,3,2,2")
    for n in range(1, 13):
        info = topo.nodeInfo(f"h{n}")
        assert info["ip"] == f"10.0.0.{n}/24"
        assert info["mac"] == f"00:00:00:00:00:{n:02x}"
        [(port, _)] = topo.ports[f"h{n}"].items()
        assert port == 0


def test_star() -> None:
    g = graph("star,5")
    assert counts(g) == (5, 1, 5)
    assert peers("star,5", "s1") == {i: f"h{i}" for i in range(1, 6)}


def test_linear_chain() -> None:
    g = graph("linear,3,2")
    assert counts(g) == (6, 3, 8)
    assert [degree(g, s) for s in ("s1", "s2", "s3")] == [3, 4, 3]
    assert peers("linear,3,2", "s2") == {1: "h3", 2: "h4", 3: "s1", 4: "s3"}
    assert peers("linear,3,2", "s1") == {1: "h1", 2: "h2", 3: "s2"}
    assert nx.shortest_path_length(g, "h1", "h6") == 4


def test_leafspine_every_leaf_on_every_spine() -> None:
    g = graph("leafspine,3,2,4")
    assert counts(g) == (12, 5, 12 + 6)
    leaves, spines = ["s1", "s2", "s3"], ["s4", "s5"]
    for leaf, spine in itertools.product(leaves, spines):
        assert g.number_of_edges(leaf, spine) == 1
    assert all(degree(g, leaf) == 4 + 2 for leaf in leaves)
    assert all(degree(g, spine) == 3 for spine in spines)
    assert peers("leafspine,3,2,4", "s2") == {1: "h5", 2: "h6", 3: "h7", 4: "h8",
                                              5: "s4", 6: "s5"}
    assert peers("leafspine,3,2,4", "s5") == {1: "s1", 2: "s2", 3: "s3"}
    assert g.nodes["s4"]["layer"] == 0 and g.nodes["s1"]["layer"] == 1


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fattree_counts_and_degrees(k: int) -> None:
    g = graph(f"fattree,{k}")
    assert counts(g) == (k ** 3 // 4, 5 * k * k // 4, 3 * k ** 3 // 4)
    assert all(degree(g, s) == k for s in switches_of(g))  # every switch has k ports


def test_fattree_4_pods() -> None:
    g = graph("fattree,4")
    cores = [f"s{i}" for i in range(1, 5)]
    assert [g.nodes[c]["layer"] for c in cores] == [0, 0, 0, 0]
    for pod in range(4):
        aggs = [f"s{5 + 4 * pod}", f"s{6 + 4 * pod}"]
        edges = [f"s{7 + 4 * pod}", f"s{8 + 4 * pod}"]
        assert {g.nodes[s]["group"] for s in aggs + edges} == {pod}
        assert [g.nodes[s]["layer"] for s in aggs + edges] == [1, 1, 2, 2]
        for agg, edge in itertools.product(aggs, edges):  # a complete bipartite pod
            assert g.number_of_edges(agg, edge) == 1
        # aggregation switch i reaches cores 2i and 2i+1 (from 0), no other
        for i, agg in enumerate(aggs):
            assert sorted(n for n in g[agg] if n in cores) == cores[2 * i:2 * i + 2]
        # the pod's hosts: two per edge switch, numbered edge by edge
        assert [sorted_names(n for n in g[e] if n.startswith("h")) for e in edges] == [
            [f"h{4 * pod + 1}", f"h{4 * pod + 2}"], [f"h{4 * pod + 3}", f"h{4 * pod + 4}"]]
    for core in cores:  # one link to every pod
        assert sorted(g.nodes[n]["group"] for n in g[core]) == [0, 1, 2, 3]
    without_cores = switch_graph(g).subgraph(set(switches_of(g)) - set(cores))
    assert nx.number_connected_components(without_cores) == 4
    # host to host: same edge 2 hops, same pod 4, other pods 6
    assert [nx.shortest_path_length(g, "h1", h) for h in ("h2", "h3", "h5")] == [2, 4, 6]
    assert peers("fattree,4", "s7") == {1: "h1", 2: "h2", 3: "s5", 4: "s6"}
    assert peers("fattree,4", "s5") == {1: "s7", 2: "s8", 3: "s1", 4: "s2"}
    assert peers("fattree,4", "s3") == {1: "s6", 2: "s10", 3: "s14", 4: "s18"}


def test_torus_rings() -> None:
    g = graph("torus,2,2")  # a ring of two is one link: a ring of four switches
    assert counts(g) == (4, 4, 8)
    sg = switch_graph(g)
    assert sorted(dict(sg.degree()).values()) == [2, 2, 2, 2]
    assert [sorted(c) for c in nx.cycle_basis(nx.Graph(sg))] == [["s1", "s2", "s3", "s4"]]
    g = graph("torus,3,3,2")
    assert counts(g) == (18, 9, 18 + 18)
    assert all(d == 4 for _, d in switch_graph(g).degree())
    assert nx.diameter(switch_graph(g)) == 2
    assert peers("torus,3,3,2", "s5") == {1: "h9", 2: "h10", 3: "s4", 4: "s6", 5: "s2",
                                          6: "s8"}
    g = graph("torus,4,1")  # one row: a ring of four
    assert all(d == 2 for _, d in switch_graph(g).degree())
    assert counts(graph("torus,1,1,3")) == (3, 1, 3)


def test_dragonfly_groups() -> None:
    g = graph("dragonfly,4,3,1")
    assert counts(g) == (12, 12, 12 + 4 * 3 + 6)
    groups = {s: g.nodes[s]["group"] for s in switches_of(g)}
    assert groups == {f"s{i}": (i - 1) // 3 for i in range(1, 13)}
    sg = switch_graph(g)
    for group in range(4):
        members = [s for s, gr in groups.items() if gr == group]
        assert all(sg.number_of_edges(a, b) == 1 for a, b in itertools.combinations(members, 2))
    between = [(groups[a], groups[b]) for a, b in sg.edges() if groups[a] != groups[b]]
    assert sorted(tuple(sorted(p)) for p in between) == list(itertools.combinations(range(4), 2))
    # three global links per group, one on each of its three switches
    assert all(sum(1 for n in sg[s] if groups[n] != groups[s]) == 1 for s in sg)


def test_bw_shapes_every_link() -> None:
    from mininet.link import TCLink

    topo = parse_topo_spec("leafspine,2,2,2,bw=25")
    assert {(info["cls"], info["bw"]) for _, _, info in topo.links(withInfo=True)} == {
        (TCLink, 25.0)}
    assert all("cls" not in info for _, _, info in parse_topo_spec("torus,2,2").links(
        withInfo=True))
    assert link_impairments(parse_topo_spec("fattree,4")) == {}


@pytest.mark.parametrize(("spec", "message"), [
    ("fattree", r"fattree takes 1 argument: K \(ports per switch\) \(e.g. fattree,4\)"),
    ("fattree,3", r"fattree's K \(ports per switch\) must be even, got 3"),
    ("fattree,10", r"fattree's K \(ports per switch\) must be in \[2, 8\], got 10"),
    ("torus,2", r"torus takes 2 or 3 arguments: X \(switches per row\), Y \(switches per "
                r"column\), H \(hosts per switch\) \(e.g. torus,3,3\)"),
    ("torus,2,2,1,1", "torus takes 2 or 3 arguments: .*"),
    ("leafspine,2,2", r"leafspine takes 3 arguments: L \(the number of leaves\), .*"),
    ("linear,0,1", r"linear's S \(the number of switches\) must be in \[1, 253\], got 0"),
    ("dragonfly,3,2,x", r"dragonfly's H \(hosts per switch\) must be an integer, got 'x'"),
    ("torus,10,10,2", r"torus,10,10,2 has 200 hosts and 100 switches: at most 253 fit in "
                      r"10.0.0.0/24 \(an address per host, and an aggregator address per "
                      r"switch\)"),
    ("leafspine,2,2,2,loss=0.1", r"leafspine has no option 'loss' \(options: bw\)"),
    ("fattree,4,bw=0", r"fattree's bw \(Mbit/s\) must be positive, got 0"),
])
def test_bad_family_specs(spec: str, message: str) -> None:
    with pytest.raises(TopoSpecError, match=f"^topology spec '{spec}': {message}$"):
        parse_topo_spec(spec)


def test_validate_finds_what_mininet_would_trip_over() -> None:
    from mininet.topo import Topo

    from topologies.builder import InaTopo

    class Broken(InaTopo):
        def build(self, case: str = "") -> None:  # type: ignore[override]
            s1 = self.add_switch_n(1)
            h1 = self.add_host_n(1)
            if case == "island":
                self.connect(h1, s1)
                self.connect(self.add_host_n(2), self.add_switch_n(2))
            elif case == "lonely":
                self.add_host_n(2)
                self.connect(h1, s1)
            elif case == "long":
                long = self.add_switch_n(3, name="spine12345678")
                self.connect(h1, s1)
                self.connect(s1, long)

    with pytest.raises(TopoSpecError, match="^the network is in 2 pieces: h1, s1 cannot "
                                            "reach h2$"):
        validate(Broken("island"))
    with pytest.raises(TopoSpecError, match="^host h2 has 0 links; a host has exactly one"):
        validate(Broken("lonely"))
    with pytest.raises(TopoSpecError, match="interface spine12345678-eth1 of the link .*: "
                                            "longer than 15 characters"):
        validate(Broken("long"))
    plain = Topo()
    plain.addSwitch("core")
    with pytest.raises(TopoSpecError, match="switch core: the name needs a number"):
        validate(plain)
    assert topo_graph(parse_topo_spec("star,2")).nodes["h1"]["kind"] == "host"
