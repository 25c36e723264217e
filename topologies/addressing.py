"""How topologies number hosts, and what a controller needs to know about them.

Host ``hN`` gets the IPv4 address ``10.0.0.N`` and the MAC address ``00:00:00:00:0X:XX``
where ``X:XX`` is N in hexadecimal (``h1`` -> ``00:00:00:00:00:01``); N may be up to
253 on the shared /24. ``host_attachments`` reads them back from a declared topology, so
a controller can compute routes from the graph without starting anything.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

SUBNET = ipaddress.IPv4Network("10.0.0.0/24")
MAX_HOSTS = 253


def host_ip(index: int) -> str:
    return str(SUBNET.network_address + index)


def host_mac(index: int) -> str:
    return "00:00:00:00:" + ":".join(f"{b:02x}" for b in index.to_bytes(2, "big"))


@dataclass(frozen=True)
class HostAttachment:
    """A host and the switch port it hangs off."""

    host: str
    ip: str  # without the prefix length
    prefix_len: int
    mac: str
    switch: str
    port: int  # the switch's port number (the N of sX-ethN)


def host_attachments(topo: Any) -> list[HostAttachment]:
    """Every host of a Mininet ``Topo`` with its first switch link, in host order."""
    switches = set(topo.switches())
    uplinks: dict[str, tuple[str, int]] = {}
    for a, b, info in topo.links(sort=True, withInfo=True):
        for host, switch, port in ((a, b, info["port2"]), (b, a, info["port1"])):
            if switch in switches and host not in switches and host not in uplinks:
                uplinks[host] = (switch, port)
    out = []
    for host in topo.hosts(sort=True):
        if host not in uplinks:
            continue
        info = topo.nodeInfo(host)
        ip, _, plen = str(info["ip"]).partition("/")
        switch, port = uplinks[host]
        out.append(HostAttachment(host, ip, int(plen or 32), info["mac"], switch, port))
    return out
