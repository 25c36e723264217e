"""``P4Host``: a Mininet host set up for a software P4 switch.

The switch forwards frames through raw sockets, so the hosts must hand it finished
frames: checksum offload off (else UDP/TCP checksums are left for hardware that never
computes them and the receiver drops the packets), TSO/GSO/GRO off (else frames larger
than the MTU reach the switch). IPv6 is switched off so that neighbour discovery and
router solicitations do not add traffic the experiments did not send.
"""

from __future__ import annotations

from typing import Any

from mininet.node import Host


class P4Host(Host):  # type: ignore[misc]
    def config(self, **params: Any) -> Any:
        result = super().config(**params)
        for intf in self.intfList():
            if intf.name == "lo":
                continue
            self.cmd(f"ethtool --offload {intf.name} rx off tx off sg off tso off gso off "
                     "gro off >/dev/null 2>&1")
        self.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                 "net.ipv6.conf.default.disable_ipv6=1")
        return result
