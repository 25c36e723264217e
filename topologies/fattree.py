"""``FatTreeTopo(k)``: the k-ary fat-tree of Al-Fares et al. (``fattree,K``, K even).

(K/2)^2 core switches, and K pods of K/2 aggregation and K/2 edge switches each; every
edge switch has K/2 hosts (K^3/4 in all: 16 for K = 4, on 20 switches). Edge switch i of
a pod links to every aggregation switch of its pod; aggregation switch i of every pod
links to the cores i*K/2 .. i*K/2 + K/2 - 1.

Numbering: the cores are s1..s(K/2)^2; then pod by pod its aggregation switches, then
its edge switches (for K = 4: pod 0 is s5, s6 (aggregation) and s7, s8 (edge)). Hosts
are numbered edge switch by edge switch (s7 has h1, h2). Ports: on an edge switch 1..K/2
are its hosts and K/2+1..K the pod's aggregation switches; on an aggregation switch
1..K/2 the pod's edge switches and K/2+1..K its cores; on a core, port p+1 is pod p.
"""

from __future__ import annotations

from topologies.builder import InaTopo, LinkOptions
from topologies.family import Arg, Family

CORE, AGGREGATION, EDGE = 0, 1, 2  # the layers


class FatTreeTopo(InaTopo):
    def build(self, k: int = 4, bw: float | None = None) -> None:  # type: ignore[override]
        if k < 2 or k % 2:
            raise ValueError(f"a fat-tree's k is even and at least 2, not {k}")
        link = LinkOptions(bw)
        half = k // 2
        cores = [self.add_switch_n(i + 1, layer=CORE) for i in range(half * half)]
        number = len(cores)
        host = 0
        for pod in range(k):
            aggs = [self.add_switch_n(number + i + 1, layer=AGGREGATION, group=pod)
                    for i in range(half)]
            edges = [self.add_switch_n(number + half + i + 1, layer=EDGE, group=pod)
                     for i in range(half)]
            number += k
            for edge in edges:
                for j in range(half):
                    host += 1
                    self.connect(self.add_host_n(host), edge, link, port_b=j + 1)
            for i, edge in enumerate(edges):
                for j, agg in enumerate(aggs):
                    self.connect(edge, agg, link, port_a=half + 1 + j, port_b=i + 1)
            for i, agg in enumerate(aggs):
                for j in range(half):
                    self.connect(agg, cores[i * half + j], link, port_a=half + 1 + j,
                                 port_b=pod + 1)


FAMILY = Family("fattree", FatTreeTopo, (Arg("K", "ports per switch", 2, 8, even=True),),
                "fattree,4", "the k-ary fat-tree: K pods, (K/2)^2 cores, K^3/4 hosts",
                lambda k: (k ** 3 // 4, 5 * k * k // 4))
