"""``LeafSpineTopo(l, s, h)``: L leaf switches, each linked to every one of S spine
switches, H hosts on each leaf (``leafspine,L,S,H``; a two-tier Clos).

The leaves are s1..sL, the spines s(L+1)..s(L+S); hosts are numbered leaf by leaf
(s1 has h1..hH). On a leaf, ports 1..H are its hosts and H+1..H+S the spines in order;
on a spine, port i is leaf i.
"""

from __future__ import annotations

from topologies.addressing import MAX_HOSTS
from topologies.builder import InaTopo, LinkOptions
from topologies.family import Arg, Family


class LeafSpineTopo(InaTopo):
    def build(self, l: int = 2, s: int = 2, h: int = 2,  # type: ignore[override]
              bw: float | None = None) -> None:
        link = LinkOptions(bw)
        leaves = [self.add_switch_n(i, layer=1) for i in range(1, l + 1)]
        spines = [self.add_switch_n(l + i, layer=0) for i in range(1, s + 1)]
        for i, leaf in enumerate(leaves):
            for j in range(1, h + 1):
                self.connect(self.add_host_n(i * h + j), leaf, link, port_b=j)
        for i, leaf in enumerate(leaves):
            for j, spine in enumerate(spines):
                self.connect(leaf, spine, link, port_a=h + 1 + j, port_b=i + 1)


FAMILY = Family("leafspine", LeafSpineTopo,
                (Arg("L", "the number of leaves", 1, MAX_HOSTS),
                 Arg("S", "the number of spines", 1, MAX_HOSTS),
                 Arg("H", "hosts per leaf", 1, MAX_HOSTS)),
                "leafspine,2,2,2", "L leaves on S spines, H hosts per leaf",
                lambda l, s, h: (l * h, l + s))
