"""Topology spec strings, as on Mininet's command line: ``"fattree,4"``,
``"star,4,bw=100"``, ``"net.yaml"``.

A spec is a family's name, then its positional arguments, then ``key=value`` options,
separated by commas; or the path of a topology file (``.json``, ``.yaml``, ``.yml``;
see ``topologies.topofile``), then options. The one option is ``bw=MBPS``, the rate of
every link (of a file's links that set none). The families (``FAMILIES``, one module
each):

    star,N              N hosts on one switch
    linear,S,H          a chain of S switches, H hosts on each
    leafspine,L,S,H     L leaves on S spines, H hosts per leaf
    fattree,K           the k-ary fat-tree (K even: K = 4 is 20 switches, 16 hosts)
    torus,X,Y[,H]       an X by Y 2-D torus of switches, H hosts on each (1)
    dragonfly,G,A,H     G groups of A switches, H hosts per switch

``parse_topo_spec`` returns the declared (not started) ``Topo``, checked as a graph
(``topologies.graph.validate``); a bad spec raises ``TopoSpecError`` saying what is
wrong.
"""

from __future__ import annotations

from typing import Any

from topologies import dragonfly, fattree, leafspine, linear, star, torus
from topologies.family import Family, TopoSpecError, read_rate
from topologies.graph import validate
from topologies.topofile import is_topo_file, load_topo_file

__all__ = ["FAMILIES", "TopoSpecError", "parse_topo_spec", "split_spec"]

FAMILIES: dict[str, Family] = {f.name: f for f in (
    star.FAMILY, linear.FAMILY, leafspine.FAMILY, fattree.FAMILY, torus.FAMILY,
    dragonfly.FAMILY)}
OPTIONS = ("bw",)


def split_spec(spec: str) -> tuple[str, list[str], dict[str, str]]:
    """(name, positional arguments, options) of a spec string."""
    parts = [p.strip() for p in spec.split(",")]
    name = parts[0]
    if not name:
        raise TopoSpecError("empty topology name")
    args: list[str] = []
    options: dict[str, str] = {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        if not part or (eq and not (key and value)):
            raise TopoSpecError(f"malformed element {part!r}")
        if eq:
            if key in options:
                raise TopoSpecError(f"option {key!r} given twice")
            options[key] = value
        elif options:
            raise TopoSpecError(f"argument {part!r} after options")
        else:
            args.append(part)
    return name, args, options


def parse_topo_spec(spec: str) -> Any:
    """The ``Topo`` a spec string names (see the module docstring)."""
    try:
        topo = _build(spec)
        validate(topo)
    except TopoSpecError as e:
        raise TopoSpecError(f"topology spec {spec!r}: {e}") from None
    topo.spec = spec.strip()
    return topo


def _build(spec: str) -> Any:
    name, args, options = split_spec(spec)
    file = is_topo_file(name)
    family = FAMILIES.get(name)
    if family is None and not file:
        raise TopoSpecError(f"unknown topology {name!r} (known: {', '.join(FAMILIES)}, "
                            "or a .json/.yaml file)")
    what = "a topology file" if file else name
    for key in options:
        if key not in OPTIONS:
            raise TopoSpecError(f"{what} has no option {key!r} (options: "
                                f"{', '.join(OPTIONS)})")
    bw = read_rate(options["bw"], what) if "bw" in options else None
    if file:
        if args:
            raise TopoSpecError(f"a topology file takes no arguments, got {args[0]!r}")
        return load_topo_file(name, bw=bw)
    assert family is not None
    values = family.read_args(args)
    hosts, switches = family.counts(*values)
    if hosts + switches > 253:
        raise TopoSpecError(f"{name},{','.join(map(str, values))} has {hosts} hosts and "
                            f"{switches} switches: at most 253 fit in 10.0.0.0/24 (an "
                            "address per host, and an aggregator address per switch)")
    return family.topo(*values, bw=bw)
