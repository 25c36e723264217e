"""What the model needs of a topology, for any size: ``shape_of("fattree,16")``.

A topology is reduced to a graph: every host on its switch, the links between
switches. ``star,N``, ``leafspine,L,S,H`` and ``fattree,K`` are built here directly, so
that they scale past what one machine emulates (up to ``MAX_HOSTS`` hosts: ``fattree,16``
has 1,024); any other spec (or a topology file) comes from ``topologies.spec`` within
the emulator's limits. Hosts are the ranks in their natural order (h1 is rank 0), as
``ina run`` gives them.

``TopoShape`` holds, per algorithm, what its steps meet in the network:

- ``tree_depth``: the links from the farthest worker to the root of the in-network
  job's tree, the root chosen as the controller chooses it (the switch that makes the
  tree shallowest, then the one with the shortest paths in sum, then the first by
  name); 1 on a star.
- ``hops[algo]``: the switches on the longest path one of the algorithm's steps takes
  (1 on a star).
- ``load[algo]``: how much more the busiest link carries than the busiest host link
  in the algorithm's steps (1 when the host links are the bottleneck: always on a
  star). Every flow takes one of its equal-cost paths at random, as ECMP's hash of its
  5-tuple does, so two flows may share a link that could have carried them apart: the
  load is the expected busiest link over random draws (with a fixed seed), or the even
  spread over the paths where the flows are too many to draw (an all-to-all among more
  than 32 hosts; it approaches the mean). For ``hd``, the rounds' loads weighted by
  the bytes each round moves.
"""

from __future__ import annotations

import random
import re
import zlib
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

MAX_HOSTS = 4096
HASH_BUDGET = 50_000  # link crossings drawn per load estimate
MESH_DRAWN = 32  # all-to-all among more hosts than this: the even spread
MAX_SAMPLES, MIN_SAMPLES = 64, 8
ALGOS = ("ina", "ring", "ps", "ps-sharded", "hd")


class ShapeError(ValueError):
    """A topology the model cannot read; the message says why."""


@dataclass
class Graph:
    """Hosts (in rank order) on their switches, and the links between switches (a
    multigraph: ``links[a][b]`` is how many links join a and b)."""

    spec: str
    host_switch: list[str] = field(default_factory=list)
    links: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(dict))
    switches: list[str] = field(default_factory=list)

    def add_switch(self, name: str) -> str:
        self.switches.append(name)
        self.links.setdefault(name, {})
        return name

    def link(self, a: str, b: str) -> None:
        self.links[a][b] = self.links[a].get(b, 0) + 1
        self.links[b][a] = self.links[b].get(a, 0) + 1


class TopoShape:
    """A topology as the model sees it (see the module docstring); ``hops`` and ``load``
    are worked out for an algorithm when it is first asked about."""

    def __init__(self, g: Graph) -> None:
        n = len(g.host_switch)
        if n < 1:
            raise ShapeError(f"topology {g.spec!r}: no host")
        self.graph = g
        self.paths = Paths(g)
        self.spec = g.spec
        self.hosts = n
        self.switches = len(g.switches)
        self.tree_depth = tree_of(g, self.paths)[1]
        self._hops: dict[str, int] = {}
        self._load: dict[str, float] = {}

    def hops(self, algo: str) -> int:
        if algo not in self._hops:
            self._hops[algo] = _hops(self, algo)
        return self._hops[algo]

    def load(self, algo: str) -> float:
        if algo not in self._load:
            self._load[algo] = _load(self, algo)
        return self._load[algo]

    def to_json(self) -> dict[str, object]:
        return {"spec": self.spec, "hosts": self.hosts, "switches": self.switches,
                "tree_depth": self.tree_depth, "hops": {a: self.hops(a) for a in ALGOS},
                "load": {a: self.load(a) for a in ALGOS}}


# ------------------------------------------------------------------ graphs


def _star(n: int) -> Graph:
    g = Graph(f"star,{n}")
    g.add_switch("s1")
    g.host_switch = ["s1"] * n
    return g


def _leafspine(leaves: int, spines: int, hosts: int) -> Graph:
    g = Graph(f"leafspine,{leaves},{spines},{hosts}")
    ls = [g.add_switch(f"s{i}") for i in range(1, leaves + 1)]
    ss = [g.add_switch(f"s{leaves + i}") for i in range(1, spines + 1)]
    for leaf in ls:
        g.host_switch += [leaf] * hosts
        for spine in ss:
            g.link(leaf, spine)
    return g


def _fattree(k: int) -> Graph:
    """As ``topologies.fattree``: cores s1..s(k/2)^2, then each pod's aggregation and
    edge switches; edge switch i of a pod links to every aggregation switch of its pod,
    aggregation switch i to the cores i*k/2 .. i*k/2 + k/2 - 1."""
    g = Graph(f"fattree,{k}")
    half = k // 2
    cores = [g.add_switch(f"s{i + 1}") for i in range(half * half)]
    number = len(cores)
    for _pod in range(k):
        aggs = [g.add_switch(f"s{number + i + 1}") for i in range(half)]
        edges = [g.add_switch(f"s{number + half + i + 1}") for i in range(half)]
        number += k
        for edge in edges:
            g.host_switch += [edge] * half
            for agg in aggs:
                g.link(edge, agg)
        for i, agg in enumerate(aggs):
            for j in range(half):
                g.link(agg, cores[i * half + j])
    return g


BUILDERS: dict[str, tuple[Callable[..., Graph], int, str]] = {
    "star": (_star, 1, "N"),
    "leafspine": (_leafspine, 3, "L,S,H"),
    "fattree": (_fattree, 1, "K"),
}


def _from_spec(spec: str) -> Graph:
    """Any spec the emulator takes (``topologies.spec``), within its limits."""
    from controller.topology import sorted_names
    from topologies.spec import TopoSpecError, parse_topo_spec

    try:
        topo = parse_topo_spec(spec)
    except TopoSpecError as e:
        raise ShapeError(str(e)) from None
    g = Graph(spec)
    for s in sorted_names(topo.switches()):
        g.add_switch(s)
    attached: dict[str, str] = {}
    for a, b in topo.links(sort=True):
        if topo.isSwitch(a) and topo.isSwitch(b):
            g.link(a, b)
        else:
            host, switch = (a, b) if topo.isSwitch(b) else (b, a)
            attached[host] = switch
    g.host_switch = [attached[h] for h in sorted_names(topo.hosts()) if h in attached]
    return g


def graph_of(spec: str) -> Graph:
    """The graph of ``spec`` (``ShapeError`` for a bad one)."""
    text = spec.strip()
    name, _, rest = text.partition(",")
    if name in BUILDERS and "=" not in rest:
        build, count, usage = BUILDERS[name]
        args = [a.strip() for a in rest.split(",")] if rest else []
        if len(args) != count or not all(re.fullmatch(r"[0-9]+", a) for a in args):
            raise ShapeError(f"topology {spec!r}: {name} takes {usage} (whole numbers)")
        values = [int(a) for a in args]
        if min(values) < 1:
            raise ShapeError(f"topology {spec!r}: every number must be at least 1")
        if name == "fattree" and (values[0] < 2 or values[0] % 2):
            raise ShapeError(f"topology {spec!r}: a fat-tree's K is even, at least 2")
        hosts = (values[0] if name == "star" else values[0] * values[2]
                 if name == "leafspine" else values[0] ** 3 // 4)
        if hosts > MAX_HOSTS:
            raise ShapeError(f"topology {spec!r}: {hosts} hosts; the model takes at most "
                             f"{MAX_HOSTS}")
        return build(*values)
    return _from_spec(text)


# -------------------------------------------------------------------- paths


def _distances(g: Graph, source: str) -> dict[str, int]:
    dist = {source: 0}
    todo = deque([source])
    while todo:
        u = todo.popleft()
        for v in g.links[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                todo.append(v)
    return dist


class Paths:
    """Switch distances, from the switches that have hosts, computed once each."""

    def __init__(self, g: Graph) -> None:
        self.g = g
        self._dist: dict[str, dict[str, int]] = {}
        self._lanes: dict[tuple[str, str], list[tuple[str, int]]] = {}

    def dist(self, target: str) -> dict[str, int]:
        if target not in self._dist:
            self._dist[target] = _distances(self.g, target)
        return self._dist[target]

    def hops(self, a: int, b: int) -> int:
        """Switches on the path from rank a's host to rank b's."""
        sa, sb = self.g.host_switch[a], self.g.host_switch[b]
        d = self.dist(sb).get(sa)
        if d is None:
            raise ShapeError(f"topology {self.g.spec!r}: h{a + 1} cannot reach h{b + 1}")
        return d + 1

    def max_link_load(self, flows: Iterable[tuple[int, int, float]]) -> float:
        """The most any direction of a link between switches carries when every flow
        (rank, rank, amount) spreads evenly over the shortest paths of its switches."""
        demand: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for a, b, amount in flows:
            sa, sb = self.g.host_switch[a], self.g.host_switch[b]
            if sa != sb:
                demand[sb][sa] += amount
        return self.max_switch_load(demand)

    def max_switch_load(self, demand: dict[str, dict[str, float]]) -> float:
        """``max_link_load`` of traffic given between switches: ``demand[to][from]``."""
        worst = 0.0
        for target, sources in demand.items():
            dist = self.dist(target)
            at: dict[str, float] = defaultdict(float, sources)
            order = sorted((s for s in dist if dist[s] > 0), key=lambda s: -dist[s])
            for u in order:
                flow = at.get(u, 0.0)
                if not flow:
                    continue
                nexts = [(v, n) for v, n in self.g.links[u].items() if dist.get(v) ==
                         dist[u] - 1]
                count = sum(n for _, n in nexts)
                for v, n in nexts:
                    share = flow * n / count
                    worst = max(worst, share / n)  # one direction of each parallel link
                    at[v] += share
        return worst

    def hashed_link_load(self, flows: list[tuple[int, int]], floor: float = 1.0,
                         seed: int = 0) -> float:
        """The busiest link's expected load (at least ``floor``, the host links') when
        every unit flow (rank, rank) takes one of its equal-cost paths at random, as the
        switches' hash of its 5-tuple does: the mean over ``samples`` random draws (a
        fixed seed: the same answer every time). Too many flows to draw: the even spread
        (``max_link_load``), which many flows approach."""
        pairs = [(self.g.host_switch[a], self.g.host_switch[b]) for a, b in flows]
        pairs = [(sa, sb) for sa, sb in pairs if sa != sb]
        if not pairs:
            return floor
        steps = sum(self.dist(sb)[sa] for sa, sb in pairs)
        samples = min(MAX_SAMPLES, HASH_BUDGET // steps)
        if samples < MIN_SAMPLES:
            return max(floor, self.max_link_load((a, b, 1.0) for a, b in flows))
        rng = random.Random(seed)
        total = 0.0
        for _ in range(samples):
            load: dict[tuple[str, str, int], int] = defaultdict(int)
            for sa, sb in pairs:
                u = sa
                while u != sb:
                    v, lane = self._pick(u, sb, rng)
                    load[(u, v, lane)] += 1
                    u = v
            total += max(floor, max(load.values()))
        return total / samples

    def _pick(self, u: str, target: str, rng: random.Random) -> tuple[str, int]:
        """A random next hop from ``u`` towards ``target`` (and which of its parallel
        links), each link of the equal-cost ones as likely."""
        key = (u, target)
        lanes = self._lanes.get(key)
        if lanes is None:
            dist = self.dist(target)
            lanes = [(v, i) for v, n in self.g.links[u].items() if dist.get(v) == dist[u] - 1
                     for i in range(n)]
            self._lanes[key] = lanes
        return lanes[rng.randrange(len(lanes))]


# -------------------------------------------------------------- algorithms


def tree_of(g: Graph, paths: Paths) -> tuple[str, int]:
    """The in-network job's root (every host a worker) and the tree's depth in links."""
    from controller.topology import sorted_names

    workers = sorted(set(g.host_switch))
    best: tuple[int, int, int] | None = None
    root = ""
    order = {s: i for i, s in enumerate(sorted_names(g.switches))}
    for s in g.switches:
        found = [paths.dist(w).get(s) for w in workers]
        ds = [d for d in found if d is not None]
        if len(ds) < len(found):
            continue
        key = (max(ds), sum(ds), order[s])
        if best is None or key < best:
            best, root = key, s
    if best is None:
        raise ShapeError(f"topology {g.spec!r}: no switch reaches every host")
    return root, best[0] + 1


def _hd_rounds(n: int) -> tuple[list[tuple[list[tuple[int, int]], float]],
                                list[tuple[int, int]]]:
    """Halving-doubling's rounds as ``hosts.baselines.hd`` runs them: (the pairs, the
    share of the tensor each sends) per round, and the extra step's pairs."""
    p = 1 << (n.bit_length() - 1)
    rem = n - p

    def real(v: int) -> int:
        return 2 * v + 1 if v < rem else v + rem

    rounds = []
    d, share = p // 2, 0.5
    while d >= 1:
        rounds.append(([(real(v), real(v ^ d)) for v in range(p)], share))
        d //= 2
        share /= 2
    rounds += [(pairs, s) for pairs, s in reversed(rounds)]
    return rounds, [(2 * i, 2 * i + 1) for i in range(rem)]


def _ring(n: int) -> list[tuple[int, int]]:
    return [(i, (i + 1) % n) for i in range(n)] if n > 1 else []


def _hops(shape: TopoShape, algo: str) -> int:
    n, paths = shape.hosts, shape.paths
    if algo == "ina":
        return shape.tree_depth
    if algo == "ring":
        return max((paths.hops(a, b) for a, b in _ring(n)), default=1)
    if algo == "ps":
        return max((paths.hops(a, 0) for a in range(1, n)), default=1)
    if algo == "ps-sharded":
        return _diameter(shape.graph, paths) if n > 1 else 1
    if algo == "hd":
        rounds, extra = _hd_rounds(n)
        return max((paths.hops(a, b) for pairs, _ in rounds for a, b in pairs + extra),
                   default=1)
    raise ValueError(f"no algorithm {algo!r}")


def _load(shape: TopoShape, algo: str) -> float:
    n, paths, g = shape.hosts, shape.paths, shape.graph
    seed = zlib.crc32(g.spec.encode())
    if algo in ("ina", "ps"):  # a tree's links carry one stream; the server's link binds
        return 1.0
    if algo == "ring":
        return paths.hashed_link_load(_ring(n), seed=seed)
    if algo == "ps-sharded":
        if n <= MESH_DRAWN:
            mesh = [(a, b) for a in range(n) for b in range(n) if a != b]
            busiest = paths.hashed_link_load(mesh, floor=n - 1, seed=seed)
        else:
            busiest = max(n - 1, paths.max_switch_load(_all_to_all(g)))
        return busiest / max(n - 1, 1)
    if algo == "hd":
        rounds, _ = _hd_rounds(n)
        moved = sum(s for _, s in rounds)
        return sum(s * paths.hashed_link_load(pairs, seed=seed)
                   for pairs, s in rounds) / moved if moved else 1.0
    raise ValueError(f"no algorithm {algo!r}")


def _all_to_all(g: Graph) -> dict[str, dict[str, float]]:
    """Between switches: a unit from every host to every other host."""
    count: dict[str, int] = defaultdict(int)
    for s in g.host_switch:
        count[s] += 1
    return {b: {a: float(na * nb) for a, na in count.items() if a != b}
            for b, nb in count.items()}


def _diameter(g: Graph, paths: Paths) -> int:
    attached = sorted(set(g.host_switch))
    return 1 + max(paths.dist(a).get(b, 0) for a in attached for b in attached)


@lru_cache(maxsize=64)
def shape_of(spec: str) -> TopoShape:
    """The ``TopoShape`` of a topology spec (``ShapeError`` for a bad one)."""
    return TopoShape(graph_of(spec))
