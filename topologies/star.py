"""``StarTopo(n)``: hosts h1..hN around one switch s1.

All hosts share the subnet 10.0.0.0/24 (see ``topologies.addressing``): ``hN`` is
10.0.0.N with MAC 00:00:00:00:00:0N and hangs off port N of s1 (interface ``s1-ethN``).
Hosts reach each other through the switch with static ARP entries (``net.staticArp()``)
and /32 routes in the switch. Links are ``TCLink`` when a bandwidth is given (the kernel
has htb; no netem, so delay and loss belong to the switch's ``--impair``).
"""

from __future__ import annotations

from typing import Any

from mininet.link import TCLink
from mininet.topo import Topo

from topologies.addressing import MAX_HOSTS, SUBNET, host_ip, host_mac
from topologies.hosts import P4Host


class StarTopo(Topo):  # type: ignore[misc]
    """``n`` hosts on one switch; ``bw`` is each link's rate in Mbit/s (None: unshaped)."""

    def build(self, n: int = 2, bw: float | None = None) -> None:  # type: ignore[override]
        if not 1 <= n <= MAX_HOSTS:
            raise ValueError(f"a star has 1 to {MAX_HOSTS} hosts, not {n}")
        switch = self.addSwitch("s1")
        link_opts: dict[str, Any] = {"cls": TCLink, "bw": bw} if bw is not None else {}
        for i in range(1, n + 1):
            host = self.addHost(f"h{i}", cls=P4Host, ip=f"{host_ip(i)}/{SUBNET.prefixlen}",
                                mac=host_mac(i))
            self.addLink(host, switch, port1=0, port2=i, **link_opts)
