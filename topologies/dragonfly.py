"""``DragonflyTopo(g, a, h)``: G groups of A switches each, H hosts on every switch
(``dragonfly,G,A,H``; Kim et al.'s dragonfly, small).

The switches of a group are linked all to all; every two groups are joined by one
global link. Group g's global links are spread over its switches in turn: its link to
the i-th other group (in group order) leaves from its switch i mod A.

Numbering: group g (from 0) has switches s(g*A + 1)..s(g*A + A); hosts are numbered
switch by switch. Ports: 1..H are the switch's hosts, then its links as declared: the
group's own links first, then the global ones.
"""

from __future__ import annotations

from topologies.addressing import MAX_HOSTS
from topologies.builder import InaTopo, LinkOptions
from topologies.family import Arg, Family


class DragonflyTopo(InaTopo):
    def build(self, g: int = 3, a: int = 2, h: int = 1,  # type: ignore[override]
              bw: float | None = None) -> None:
        link = LinkOptions(bw)
        groups = []
        for group in range(g):
            members = []
            for r in range(a):
                n = group * a + r + 1
                switch = self.add_switch_n(n, group=group)
                members.append(switch)
                for j in range(1, h + 1):
                    self.connect(self.add_host_n((n - 1) * h + j), switch, link)
            groups.append(members)
        for members in groups:
            for i, left in enumerate(members):
                for right in members[i + 1:]:
                    self.connect(left, right, link)
        for one in range(g):
            for other in range(one + 1, g):
                out = groups[one][_rank(one, other) % a]
                into = groups[other][_rank(other, one) % a]
                self.connect(out, into, link)


def _rank(group: int, other: int) -> int:
    """The place of ``other`` among the groups other than ``group``."""
    return other if other < group else other - 1


FAMILY = Family("dragonfly", DragonflyTopo,
                (Arg("G", "the number of groups", 1, MAX_HOSTS),
                 Arg("A", "switches per group", 1, MAX_HOSTS),
                 Arg("H", "hosts per switch", 1, MAX_HOSTS)),
                "dragonfly,3,2,1", "G groups of A switches, all to all inside a group, "
                "one link between every two groups, H hosts per switch",
                lambda g, a, h: (g * a * h, g * a))
