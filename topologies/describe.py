"""A declared topology as text, for ``ina topo show``: the counts, every switch with
what sits behind each of its ports, every host with its address, and the links that
have a rate, a delay or a loss."""

from __future__ import annotations

import re
from typing import Any

from topologies.graph import hosts_of, switches_of, topo_graph


def _natural(name: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def describe(topo: Any) -> list[str]:
    g = topo_graph(topo)
    hosts = sorted(hosts_of(g), key=_natural)
    switches = sorted(switches_of(g), key=_natural)
    host_links = sum(1 for a, b in g.edges() if "host" in (g.nodes[a]["kind"],
                                                          g.nodes[b]["kind"]))
    total = g.number_of_edges()
    lines = [f"{topo.spec or type(topo).__name__}: {len(switches)} switches, {len(hosts)} "
             f"hosts, {total} links ({host_links} to hosts, {total - host_links} between "
             "switches)"]
    for s in switches:
        hints = ", ".join(f"{k} {g.nodes[s][k]}" for k in ("layer", "group")
                          if k in g.nodes[s])
        ports = []
        for port, (peer, peer_port) in sorted(topo.ports[s].items()):
            where = peer if g.nodes[peer]["kind"] == "host" else f"{peer}:{peer_port}"
            ports.append(f"{port} {where}")
        lines.append(f"{s}{f' ({hints})' if hints else ''}: ports {', '.join(ports)}")
    for h in hosts:
        info = g.nodes[h]
        [(peer, port)] = [(p, pp) for _, (p, pp) in topo.ports[h].items()]
        lines.append(f"{h}: {info['ip']} {info['mac']} on {peer} port {port}")
    settings = []
    for a, b, data in sorted(g.edges(data=True), key=lambda e: (_natural(e[0]),
                                                                 _natural(e[1]))):
        parts = []
        if data.get("bw") is not None:
            parts.append(f"{data['bw']:g} Mbit/s")
        if data.get("impair"):
            parts.append(data["impair"].removesuffix(",direction=both").replace(",", ", "))
        if parts:
            ends = " - ".join(f"{n}:{data['ports'][n]}" if g.nodes[n]["kind"] == "switch"
                              else n for n in (a, b))
            settings.append((ends, ", ".join(parts)))
    if settings and len({s for _, s in settings}) == 1 and len(settings) == total:
        lines.append(f"every link: {settings[0][1]}")
    elif settings:
        lines.append("links with settings (delay and loss per direction):")
        lines += [f"  {ends}: {text}" for ends, text in settings]
    return lines
