"""A topology as a picture (PNG, SVG, PDF: by the file's suffix): switches as squares,
hosts as circles, links as lines (dashed when they have a delay or a loss), and
optionally an aggregation tree drawn over it, its root marked.

Switches go where their drawing hints put them (``topologies.builder``): in rows by
``layer`` (top to bottom, in declaration order within a row), or in a circle of
``group`` clusters; otherwise where a spring layout puts them. Hosts sit below (or
outside) their switch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from topologies.graph import hosts_of, switch_graph, switches_of

Position = tuple[float, float]


@dataclass(frozen=True)
class Highlight:
    """A tree to draw over the topology: its links (parent, child), its root, and a
    caption."""

    edges: list[tuple[str, str]] = field(default_factory=list)
    root: str | None = None
    caption: str = ""


def layout(g: nx.MultiGraph) -> dict[str, Position]:
    switches = switches_of(g)
    if all("layer" in g.nodes[s] for s in switches):
        pos = _rows(g, switches)
    elif all("group" in g.nodes[s] for s in switches):
        pos = _clusters(g, switches)
    else:
        pos = {n: (float(x), float(y)) for n, (x, y) in nx.spring_layout(
            nx.Graph(switch_graph(g)), seed=1, scale=max(2.0, len(switches) / 2)).items()}
    _place_hosts(g, pos)
    return pos


def _rows(g: nx.MultiGraph, switches: list[str]) -> dict[str, Position]:
    rows: dict[int, list[str]] = {}
    for s in switches:
        rows.setdefault(int(g.nodes[s]["layer"]), []).append(s)
    width = max(len(r) for r in rows.values())
    pos = {}
    for layer, row in rows.items():
        step = width / len(row)
        for i, s in enumerate(row):
            pos[s] = ((i + 0.5) * step, -1.5 * layer)
    return pos


def _clusters(g: nx.MultiGraph, switches: list[str]) -> dict[str, Position]:
    groups: dict[int, list[str]] = {}
    for s in switches:
        groups.setdefault(int(g.nodes[s]["group"]), []).append(s)
    radius = max(3.0, len(groups) * 1.2)
    pos = {}
    for i, members in enumerate(groups.values()):
        angle = 2 * math.pi * i / len(groups)
        cx, cy = radius * math.cos(angle), radius * math.sin(angle)
        r = 0.5 + 0.15 * len(members) if len(members) > 1 else 0.0
        for j, s in enumerate(members):  # a small ring, its first pair across the radius
            inner = angle + math.pi / 2 + 2 * math.pi * j / len(members)
            pos[s] = (cx + r * math.cos(inner), cy + r * math.sin(inner))
    return pos


def _place_hosts(g: nx.MultiGraph, pos: dict[str, Position]) -> None:
    """Each switch's hosts in a short row just below it (layered layouts) or outside it,
    away from the centre of the picture."""
    layered = all("layer" in g.nodes[s] for s in switches_of(g))
    xs = sorted({x for x, _ in pos.values()})
    gap = min((b - a for a, b in zip(xs, xs[1:], strict=False)), default=1.0)
    centres: dict[object, list[Position]] = {}  # of each group (None: the whole picture)
    for s, p in pos.items():
        centres.setdefault(g.nodes[s].get("group"), []).append(p)
        centres.setdefault(None, []).append(p)
    by_switch: dict[str, list[str]] = {}
    for h in hosts_of(g):
        by_switch.setdefault(next(iter(g[h])), []).append(h)
    for s, hosts in by_switch.items():
        x, y = pos[s]
        if layered:
            step = min(gap, 1.0) * 0.9 / max(len(hosts), 1)
            for j, h in enumerate(hosts):
                pos[h] = (x + (j - (len(hosts) - 1) / 2) * step, y - 0.9)
        else:
            around = centres[g.nodes[s].get("group")]
            cx = sum(p[0] for p in around) / len(around)
            cy = sum(p[1] for p in around) / len(around)
            angle = math.atan2(y - cy, x - cx) if (x, y) != (cx, cy) else -math.pi / 2
            for j, h in enumerate(hosts):
                a = angle + (j - (len(hosts) - 1) / 2) * 0.35
                pos[h] = (x + 0.8 * math.cos(a), y + 0.8 * math.sin(a))


def draw_topology(g: nx.MultiGraph, path: str | Path, title: str,
                  highlight: Highlight | None = None) -> Path:
    """Draw ``g`` (``topologies.graph.topo_graph``) into ``path``; the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pos = layout(g)
    xs = [x for x, _ in pos.values()]
    ys = [y for _, y in pos.values()]
    width = min(max(6.0, (max(xs) - min(xs)) * 1.3 + 2), 30.0)
    height = min(max(4.0, (max(ys) - min(ys)) * 1.3 + 2), 20.0)
    fig, ax = plt.subplots(figsize=(width, height))
    simple = nx.Graph(g)
    impaired = [(a, b) for a, b, d in g.edges(data=True) if d.get("impair")]
    plain = [e for e in simple.edges() if e not in impaired and e[::-1] not in impaired]
    nx.draw_networkx_edges(simple, pos, edgelist=plain, ax=ax, edge_color="#b0b0b0",
                           width=1.0)
    nx.draw_networkx_edges(simple, pos, edgelist=impaired, ax=ax, edge_color="#b0b0b0",
                           width=1.0, style="dashed")
    hosts, switches = hosts_of(g), switches_of(g)
    in_tree: set[str] = set()
    if highlight is not None and highlight.edges:
        nx.draw_networkx_edges(simple, pos, edgelist=highlight.edges, ax=ax,
                               edge_color="#e6550d", width=3.0)
        in_tree = {n for edge in highlight.edges for n in edge}
    _nodes(ax, simple, pos, switches, "s", 420, in_tree, "#3182bd", "#9ecae1")
    _nodes(ax, simple, pos, hosts, "o", 160, in_tree, "#636363", "#d9d9d9")
    if highlight is not None and highlight.root is not None:
        nx.draw_networkx_nodes(simple, pos, nodelist=[highlight.root], ax=ax, node_shape="s",
                               node_size=700, node_color="#e6550d")
    nx.draw_networkx_labels(simple, pos, labels={s: s for s in switches}, ax=ax,
                            font_size=7, font_color="white")
    nx.draw_networkx_labels(simple, pos, labels={h: h for h in hosts}, ax=ax, font_size=6)
    caption = title if highlight is None or not highlight.caption else (
        f"{title}\n{highlight.caption}")
    ax.set_title(caption, fontsize=10)
    ax.set_axis_off()
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _nodes(ax: object, g: nx.Graph, pos: dict[str, Position], nodes: Iterable[str],
           shape: str, size: int, in_tree: set[str], strong: str, light: str) -> None:
    nodes = list(nodes)
    colors = [strong if not in_tree or n in in_tree else light for n in nodes]
    nx.draw_networkx_nodes(g, pos, nodelist=nodes, ax=ax, node_shape=shape, node_size=size,
                           node_color=colors)
