"""``TorusTopo(x, y, h)``: an X by Y grid of switches whose rows and columns close into
rings, H hosts on each switch (``torus,X,Y[,H]``, H = 1 by default).

The switch in column c and row r (from 0) is s(r*X + c + 1); hosts are numbered switch
by switch. Each row is a ring of X switches and each column a ring of Y; a ring of two
is one link, a ring of one none (so torus,2,2 is a ring of four switches). Ports: 1..H
are the switch's hosts, then its ring links as declared: the rows' links first (each
switch to the next in its row), then the columns'.
"""

from __future__ import annotations

from topologies.addressing import MAX_HOSTS
from topologies.builder import InaTopo, LinkOptions
from topologies.family import Arg, Family


def ring_pairs(n: int) -> list[tuple[int, int]]:
    """The links of a ring of ``n`` positions, as (i, next) pairs."""
    if n < 2:
        return []
    if n == 2:
        return [(0, 1)]
    return [(i, (i + 1) % n) for i in range(n)]


class TorusTopo(InaTopo):
    def build(self, x: int = 2, y: int = 2, h: int = 1,  # type: ignore[override]
              bw: float | None = None) -> None:
        link = LinkOptions(bw)
        grid = {}
        for r in range(y):
            for c in range(x):
                n = r * x + c + 1
                grid[c, r] = self.add_switch_n(n, layer=r)
                for j in range(1, h + 1):
                    self.connect(self.add_host_n((n - 1) * h + j), grid[c, r], link)
        for r in range(y):
            for a, b in ring_pairs(x):
                self.connect(grid[a, r], grid[b, r], link)
        for c in range(x):
            for a, b in ring_pairs(y):
                self.connect(grid[c, a], grid[c, b], link)


FAMILY = Family("torus", TorusTopo,
                (Arg("X", "switches per row", 1, MAX_HOSTS),
                 Arg("Y", "switches per column", 1, MAX_HOSTS),
                 Arg("H", "hosts per switch", 1, MAX_HOSTS, default=1)),
                "torus,3,3", "an X by Y 2-D torus of switches, H hosts on each",
                lambda x, y, h: (x * y * h, x * y))
