"""``LinearTopo(s, h)``: a chain of switches s1 - s2 - ... - sS, H hosts on each
(``linear,S,H``).

Hosts are numbered switch by switch (s1 has h1..hH). On every switch, ports 1..H are
its hosts, then come the chain's links: H+1 towards the previous switch (towards the
next one on s1) and H+2 towards the next.
"""

from __future__ import annotations

from topologies.addressing import MAX_HOSTS
from topologies.builder import InaTopo, LinkOptions
from topologies.family import Arg, Family


class LinearTopo(InaTopo):
    def build(self, s: int = 2, h: int = 1,  # type: ignore[override]
              bw: float | None = None) -> None:
        link = LinkOptions(bw)
        switches = [self.add_switch_n(i, layer=0) for i in range(1, s + 1)]
        for i, switch in enumerate(switches):
            for j in range(1, h + 1):
                self.connect(self.add_host_n(i * h + j), switch, link)
        for left, right in zip(switches, switches[1:], strict=False):
            self.connect(left, right, link)


FAMILY = Family("linear", LinearTopo,
                (Arg("S", "the number of switches", 1, MAX_HOSTS),
                 Arg("H", "hosts per switch", 1, MAX_HOSTS)),
                "linear,3,2", "a chain of S switches, H hosts on each",
                lambda s, h: (s * h, s))
