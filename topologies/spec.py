"""Topology spec strings, as on Mininet's command line: ``"star,4"``, ``"star,4,bw=100"``.

A spec is the topology's name, then its positional arguments, then ``key=value``
options, separated by commas. ``parse_topo_spec`` returns the declared (not started)
``Topo``; a bad spec raises ``TopoSpecError`` saying what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from topologies.addressing import MAX_HOSTS
from topologies.star import StarTopo


class TopoSpecError(ValueError):
    pass


def _int(text: str, what: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise TopoSpecError(f"{what} must be an integer, got {text!r}") from None
    if not low <= value <= high:
        raise TopoSpecError(f"{what} must be in [{low}, {high}], got {value}")
    return value


def _float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TopoSpecError(f"{what} must be a number, got {text!r}") from None
    if value <= 0:
        raise TopoSpecError(f"{what} must be positive, got {text}")
    return value


def _star(args: list[str], options: dict[str, str]) -> Any:
    if len(args) != 1:
        raise TopoSpecError("star takes one argument, the number of hosts (e.g. star,4)")
    unknown = set(options) - {"bw"}
    if unknown:
        raise TopoSpecError(f"star has no option {sorted(unknown)[0]!r} (options: bw)")
    n = _int(args[0], "star's number of hosts", 1, MAX_HOSTS)
    bw = _float(options["bw"], "star's bw (Mbit/s)") if "bw" in options else None
    return StarTopo(n=n, bw=bw)


TOPOLOGIES: dict[str, Callable[[list[str], dict[str, str]], Any]] = {"star": _star}


def parse_topo_spec(spec: str) -> Any:
    """The ``Topo`` a spec string names (see the module docstring)."""
    parts = [p.strip() for p in spec.split(",")]
    name = parts[0]
    if not name:
        raise TopoSpecError(f"topology spec {spec!r}: empty topology name")
    build = TOPOLOGIES.get(name)
    if build is None:
        raise TopoSpecError(f"topology spec {spec!r}: unknown topology {name!r} "
                            f"(known: {', '.join(sorted(TOPOLOGIES))})")
    args: list[str] = []
    options: dict[str, str] = {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        if not part or (eq and not (key and value)):
            raise TopoSpecError(f"topology spec {spec!r}: malformed element {part!r}")
        if eq:
            if key in options:
                raise TopoSpecError(f"topology spec {spec!r}: option {key!r} given twice")
            options[key] = value
        elif options:
            raise TopoSpecError(f"topology spec {spec!r}: argument {part!r} after options")
        else:
            args.append(part)
    try:
        return build(args, options)
    except TopoSpecError as e:
        raise TopoSpecError(f"topology spec {spec!r}: {e}") from None
