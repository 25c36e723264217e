"""``StarTopo(n)``: hosts h1..hN around one switch s1 (``star,N``).

All hosts share the subnet 10.0.0.0/24 (see ``topologies.addressing``): ``hN`` is
10.0.0.N with MAC 00:00:00:00:00:0N and hangs off port N of s1 (interface ``s1-ethN``).
Hosts reach each other through the switch with static ARP entries and /32 routes in the
switch. Links are ``TCLink`` when a bandwidth is given (the kernel has htb; no netem,
so delay and loss belong to the switch's ``--impair``).
"""

from __future__ import annotations

from topologies.addressing import MAX_HOSTS
from topologies.builder import InaTopo, LinkOptions
from topologies.family import Arg, Family


class StarTopo(InaTopo):
    """``n`` hosts on one switch; ``bw`` is each link's rate in Mbit/s (None: unshaped)."""

    def build(self, n: int = 2, bw: float | None = None) -> None:  # type: ignore[override]
        if not 1 <= n <= MAX_HOSTS:
            raise ValueError(f"a star has 1 to {MAX_HOSTS} hosts, not {n}")
        switch = self.add_switch_n(1, layer=0)
        for i in range(1, n + 1):
            self.connect(self.add_host_n(i), switch, LinkOptions(bw), port_b=i)


FAMILY = Family("star", StarTopo, (Arg("N", "the number of hosts", 1, MAX_HOSTS),),
                "star,4", "N hosts on one switch", lambda n: (n, 1))
