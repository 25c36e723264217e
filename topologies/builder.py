"""``InaTopo``: the Mininet ``Topo`` every topology family builds on, so that all of them
name, address and number things the same way.

- Host ``hN`` has the address 10.0.0.N/24 and the MAC of N (``topologies.addressing``);
  its one interface is ``hN-eth0``.
- Switch ``sN`` has device id N. Its ports count from 1 in the order its links are
  declared (a family may give a port explicitly); port P is the interface ``sN-ethP``.
- A link has ``LinkOptions``: a rate in Mbit/s (the link becomes a ``TCLink``, shaped by
  htb), and a delay and a loss rate. The kernel here has no netem, so delay and loss are
  not link parameters Mininet would apply: they are kept in the link's info as
  ``impair`` (an ``ina switch --impair`` spec) and become the port impairment of the
  link's switch end (the first end when both are switches), in both directions, so each
  direction of the link sees them once (``link_impairments``).
- A switch's info may carry ``layer`` (0 at the top; hosts are below the last layer)
  and ``group`` (a pod or a dragonfly group): drawing hints, nothing else reads them.

Everything is declared in ``build``; nothing runs, so a topology is a plain graph that
``topologies.graph`` can check without root.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mininet.link import TCLink
from mininet.topo import Topo

from topologies.addressing import MAX_HOSTS, SUBNET, host_ip, host_mac
from topologies.hosts import P4Host

MAX_PORT = 510  # bit<9> egress_spec; 511 is the drop port


@dataclass(frozen=True)
class LinkOptions:
    """What a link is like: ``bw`` in Mbit/s (None: unshaped), one-way ``delay_ms`` and
    the ``loss`` probability per direction."""

    bw: float | None = None
    delay_ms: float = 0.0
    loss: float = 0.0

    def impairment(self) -> str | None:
        """The ``ina switch --impair`` spec (without the port) of the delay and loss."""
        parts = []
        if self.loss:
            parts.append(f"loss={self.loss:g}")
        if self.delay_ms:
            parts.append(f"delay={self.delay_ms:g}ms")
        return ",".join([*parts, "direction=both"]) if parts else None

    def link_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {}
        if self.bw is not None:
            info.update(cls=TCLink, bw=self.bw)
        impair = self.impairment()
        if impair is not None:
            info["impair"] = impair
        return info


class InaTopo(Topo):  # type: ignore[misc]
    """The base of the topology families (see the module docstring). ``spec`` is the
    spec string that builds the topology again (set by ``topologies.spec``)."""

    spec = ""

    def add_host_n(self, n: int) -> str:
        if not 1 <= n <= MAX_HOSTS:
            raise ValueError(f"host number {n} is not in [1, {MAX_HOSTS}]")
        return str(self.addHost(f"h{n}", cls=P4Host, ip=f"{host_ip(n)}/{SUBNET.prefixlen}",
                                mac=host_mac(n)))

    def add_switch_n(self, n: int, layer: int | None = None, group: int | None = None,
                     name: str | None = None) -> str:
        info: dict[str, Any] = {}
        if layer is not None:
            info["layer"] = layer
        if group is not None:
            info["group"] = group
        return str(self.addSwitch(name or f"s{n}", **info))

    def connect(self, a: str, b: str, options: LinkOptions | None = None,
                port_a: int | None = None, port_b: int | None = None) -> None:
        """Link ``a`` and ``b``: a host end is port 0, a switch end the given port or
        its lowest free one."""
        info = (options or LinkOptions()).link_info()
        self.addLink(a, b, port1=self._port(a, port_a), port2=self._port(b, port_b), **info)

    def _port(self, node: str, port: int | None) -> int:
        used = self.ports.get(node, {})
        if not self.isSwitch(node):
            if used:
                raise ValueError(f"host {node} has a link already; a host has one")
            return 0
        if port is None:
            port = 1
            while port in used:
                port += 1
        if port in used:
            peer, peer_port = used[port]
            raise ValueError(f"port {node}:{port} is linked to {peer} already")
        if not 1 <= port <= MAX_PORT:
            raise ValueError(f"port {node}:{port} is not in [1, {MAX_PORT}]")
        return port


def link_impairments(topo: Any) -> dict[str, dict[int, str]]:
    """switch -> port -> impairment spec, for every link that has a delay or a loss."""
    switches = set(topo.switches())
    out: dict[str, dict[int, str]] = {}
    for a, b, info in topo.links(sort=True, withInfo=True):
        spec = info.get("impair")
        if not spec:
            continue
        if info["node1"] in switches:
            node, port = info["node1"], info["port1"]
        else:
            node, port = info["node2"], info["port2"]
        assert node in switches, f"link {a} - {b} joins no switch"
        out.setdefault(node, {})[int(port)] = spec
    return out


def combine_impairments(link: str, extra: str | None) -> str:
    """The impairment of a port whose link has ``link`` (both directions) when ``extra``
    (an ``ina switch-cli impair`` spec for every port, or None) applies on top: the
    losses compound, the delays add up, ``extra``'s duplication and reordering stay."""
    from switch.ports.spec import parse_impairment_spec

    _, base = parse_impairment_spec(f"all:{link}")
    if extra is None or extra.strip().lower() == "none":
        return _unseeded(base.to_spec())
    _, more = parse_impairment_spec(f"all:{extra}")
    if more.direction != "both":
        raise ValueError(f"impairment {extra!r} applies to one direction; a link's own "
                         f"({link}) applies to both: give direction=both")
    combined = replace(more, loss=round(1 - (1 - base.loss) * (1 - more.loss), 12),
                       delay_ms=base.delay_ms + more.delay_ms)
    return _unseeded(combined.to_spec()) if "seed=" not in extra else combined.to_spec()


def _unseeded(spec: str) -> str:
    """The spec without its seed: the switch picks it (its ``--seed``)."""
    return ",".join(p for p in spec.split(",") if not p.startswith("seed="))
