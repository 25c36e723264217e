"""Topologies described in a file (JSON, or YAML: ``.json``, ``.yaml``, ``.yml``).

    # two racks under one spine; the spine links are slower and lossy
    defaults: {bw: 100}              # optional, for every link that sets nothing else
    hosts: [h1, h2, h3, h4]
    switches: [s1, s2, {name: s3, layer: 0}]
    links:
      - [h1, s1]
      - [h2, s1]
      - [h3, s2]
      - [h4, s2]
      - [s1, s3, {bw: 50, delay: 2ms, loss: 0.01}]
      - [s2:5, s3]

Hosts are named hN (1 <= N <= 253) and get 10.0.0.N; switches are named sN, N their
device id. A switch may carry ``layer`` (0 at the top), a drawing hint. A link is two
endpoints and optional settings: an endpoint is a node, or ``sN:P`` for port P of a
switch (otherwise the switch's lowest free port); ``bw`` is the rate in Mbit/s, ``delay``
a one-way delay (``2ms``, ``500us``, or a number of milliseconds) and ``loss`` the
probability that a frame is lost, per direction (delay and loss are the switch port's
impairments, see ``topologies.builder``). ``defaults`` gives ``bw``, ``delay`` and
``loss`` for every link.

``load_topo_file`` returns the ``FileTopo``; a bad file raises ``TopoSpecError`` with
the file, the line where known, and the entry: ``net.yaml:12: links[4]: unknown node
's9' (switches: s1, s2, s3)``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from topologies.addressing import MAX_HOSTS
from topologies.builder import MAX_PORT, InaTopo, LinkOptions
from topologies.family import TopoSpecError
from topologies.file_positions import Where, line_numbers

SUFFIXES = (".json", ".yaml", ".yml")
KEYS = ("description", "defaults", "hosts", "switches", "links")
LINK_KEYS = ("bw", "delay", "loss")

_HOST = re.compile(r"^h([1-9][0-9]*)$")
_SWITCH = re.compile(r"^s([1-9][0-9]*)$")
_DELAY = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ms|us|s)?$")
_DELAY_MS = {"ms": 1.0, "us": 0.001, "s": 1000.0, None: 1.0}


def is_topo_file(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


@dataclass(frozen=True)
class FileLink:
    a: str
    b: str
    port_a: int | None
    port_b: int | None
    options: LinkOptions
    explicit_bw: bool  # the link (or the defaults) set bw: a spec's bw= does not change it


@dataclass(frozen=True)
class TopoDescription:
    hosts: tuple[int, ...]  # N of hN, in file order
    switches: tuple[tuple[int, int | None], ...]  # (N of sN, layer)
    links: tuple[FileLink, ...]


class FileTopo(InaTopo):
    """The topology of a ``TopoDescription`` (``load_topo_file``)."""

    def build(self, description: TopoDescription,  # type: ignore[override]
              bw: float | None = None) -> None:
        for n in description.hosts:
            self.add_host_n(n)
        for n, layer in description.switches:
            self.add_switch_n(n, layer=layer)
        taken = {(end, port) for link in description.links
                 for end, port in ((link.a, link.port_a), (link.b, link.port_b))
                 if port is not None}
        for link in description.links:
            options = link.options
            if bw is not None and not link.explicit_bw:
                options = replace(options, bw=bw)
            port_a = link.port_a or self._free_port(link.a, taken)
            port_b = link.port_b or self._free_port(link.b, taken)
            self.connect(link.a, link.b, options, port_a, port_b)

    def _free_port(self, node: str, taken: set[tuple[str, int]]) -> int | None:
        """A switch's lowest port that no link names and none has taken yet (None for
        a host)."""
        if not self.isSwitch(node):
            return None
        port = 1
        while (node, port) in taken:
            port += 1
        taken.add((node, port))
        return port


def load_topo_file(path: str | Path, bw: float | None = None) -> FileTopo:
    """The topology in ``path``; ``bw`` is the rate of links whose file sets none."""
    description = read_topo_file(path)
    return FileTopo(description, bw=bw)


# ------------------------------------------------------------------- reading


def read_topo_file(path: str | Path) -> TopoDescription:
    name = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise TopoSpecError(f"{name}: cannot read the topology file: "
                            f"{e.strerror or e}") from None
    if name.lower().endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise TopoSpecError(f"{name}:{e.lineno}: not valid JSON: {e.msg}") from None
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            at = f"{name}:{mark.line + 1}" if mark is not None else name
            problem = getattr(e, "problem", None) or str(e)
            raise TopoSpecError(f"{at}: not valid YAML: {problem}") from None
    return _describe(data, Where(name, line_numbers(text), TopoSpecError))


def _describe(data: object, where: Where) -> TopoDescription:
    if not isinstance(data, dict):
        raise where.error("expected a mapping with hosts, switches and links")
    if isinstance(data.get("hosts"), dict) and isinstance(data.get("switches"), dict):
        raise where.error("this is a topology.json as p4lang's tutorials write it (hosts "
                          "and switches are objects): ina net --topo FILE starts it")
    for key in data:
        if key not in KEYS:
            raise where.error(f"unknown key {key!r} (keys: {', '.join(KEYS)})", key)
    for key in ("hosts", "switches", "links"):
        if key not in data:
            raise where.error(f"missing {key!r}")
        if not isinstance(data[key], list):
            raise where.error(f"expected a list, got {_show(data[key])}", key)
    defaults = _link_options(data.get("defaults") or {}, where, ("defaults",))
    hosts: dict[str, int] = {}
    for i, item in enumerate(data["hosts"]):
        n = _numbered(item, _HOST, "host", "hosts are named hN (h1 .. h253)", where,
                      "hosts", i)
        if n > MAX_HOSTS:
            raise where.error(f"host h{n}: N must be at most {MAX_HOSTS} (hN gets "
                              f"10.0.0.N)", "hosts", i)
        if f"h{n}" in hosts:
            raise where.error(f"host h{n} is listed twice", "hosts", i)
        hosts[f"h{n}"] = n
    if not hosts:
        raise where.error("no hosts", "hosts")
    switches: dict[str, tuple[int, int | None]] = {}
    for i, item in enumerate(data["switches"]):
        layer = None
        if isinstance(item, dict):
            for key in item:
                if key not in ("name", "layer"):
                    raise where.error(f"unknown key {key!r} (keys: name, layer)",
                                      "switches", i, key)
            raw_layer = item.get("layer")
            if raw_layer is not None:
                if isinstance(raw_layer, bool) or not isinstance(raw_layer, int) \
                        or raw_layer < 0:
                    raise where.error(f"layer {_show(raw_layer)}: expected a whole number "
                                      ">= 0", "switches", i, "layer")
                layer = raw_layer
            item = item.get("name")
        n = _numbered(item, _SWITCH, "switch", "switches are named sN, N its device id",
                      where, "switches", i)
        if f"s{n}" in switches:
            raise where.error(f"switch s{n} is listed twice", "switches", i)
        switches[f"s{n}"] = (n, layer)
    if not switches:
        raise where.error("no switches", "switches")
    links = [_link(item, i, defaults, hosts, switches, where)
             for i, item in enumerate(data["links"])]
    _check_ports(links, where)
    return TopoDescription(tuple(hosts.values()), tuple(switches.values()), tuple(links))


def _show(value: object) -> str:
    return json.dumps(value) if isinstance(value, str | int | float | bool | None) \
        else type(value).__name__


def _numbered(item: object, pattern: re.Pattern[str], kind: str, form: str,
              where: Where, *at: Any) -> int:
    match = pattern.match(item) if isinstance(item, str) else None
    if match is None:
        raise where.error(f"{_show(item)} is not a {kind} name: {form}", *at)
    return int(match.group(1))


def _link_options(raw: object, where: Where, at: tuple[Any, ...],
                  base: LinkOptions | None = None) -> tuple[LinkOptions, bool]:
    base = base or LinkOptions()
    if not isinstance(raw, dict):
        raise where.error(f"expected a mapping of {', '.join(LINK_KEYS)}, got {_show(raw)}",
                          *at)
    for key in raw:
        if key not in LINK_KEYS:
            raise where.error(f"unknown setting {key!r} (settings: {', '.join(LINK_KEYS)})",
                              *at, key)
    bw, delay, loss = base.bw, base.delay_ms, base.loss
    if "bw" in raw:
        bw = raw["bw"]
        if isinstance(bw, bool) or not isinstance(bw, int | float) or not bw > 0:
            raise where.error(f"bw {_show(bw)}: expected a rate in Mbit/s above 0",
                              *at, "bw")
        bw = float(bw)
    if "delay" in raw:
        delay = _delay(raw["delay"], where, (*at, "delay"))
    if "loss" in raw:
        loss = raw["loss"]
        if isinstance(loss, bool) or not isinstance(loss, int | float) \
                or not 0 <= loss < 1:
            raise where.error(f"loss {_show(loss)}: expected a probability in [0, 1)",
                              *at, "loss")
        loss = float(loss)
    return LinkOptions(bw, delay, loss), "bw" in raw


def _delay(raw: object, where: Where, at: tuple[Any, ...]) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        ms = float(raw)
    else:
        match = _DELAY.match(raw.strip()) if isinstance(raw, str) else None
        if match is None:
            raise where.error(f"delay {_show(raw)}: expected a time like 2ms, 500us or "
                              "0.1s (a bare number is milliseconds)", *at)
        ms = float(match.group(1)) * _DELAY_MS[match.group(2)]
    if not 0 <= ms <= 60_000:
        raise where.error(f"delay {_show(raw)}: must be between 0 and 60 s", *at)
    return ms


def _link(item: object, i: int, defaults: tuple[LinkOptions, bool], hosts: dict[str, int],
          switches: dict[str, tuple[int, int | None]], where: Where) -> FileLink:
    at = ("links", i)
    if not isinstance(item, list) or len(item) not in (2, 3):
        raise where.error(f"a link is [A, B] or [A, B, {{bw: .., delay: .., loss: ..}}], "
                          f"got {_show(item) if not isinstance(item, list) else item}", *at)
    ends = []
    for end in item[:2]:
        if not isinstance(end, str):
            raise where.error(f"endpoint {_show(end)}: expected a node name, or sN:PORT",
                              *at)
        node, sep, port_text = end.partition(":")
        port: int | None = None
        if node in hosts:
            if sep:
                raise where.error(f"endpoint {end!r}: a host has one interface, no port",
                                  *at)
        elif node in switches:
            if sep:
                if not port_text.isdigit() or not 1 <= int(port_text) <= MAX_PORT:
                    raise where.error(f"endpoint {end!r}: the port must be a number in "
                                      f"[1, {MAX_PORT}]", *at)
                port = int(port_text)
        else:
            raise where.error(f"unknown node {node!r} (hosts: {_names(hosts)}; switches: "
                              f"{_names(switches)})", *at)
        ends.append((node, port))
    (a, port_a), (b, port_b) = ends
    if a == b:
        raise where.error(f"{a} is linked to itself", *at)
    if a in hosts and b in hosts:
        raise where.error(f"hosts {a} and {b} are linked directly; a host links to a "
                          "switch", *at)
    options, explicit = defaults
    if len(item) == 3:
        options, own = _link_options(item[2], where, (*at, 2), options)
        explicit = explicit or own
    return FileLink(a, b, port_a, port_b, options, explicit)


def _names(nodes: dict[str, Any]) -> str:
    names = list(nodes)
    return ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")


def _check_ports(links: list[FileLink], where: Where) -> None:
    """Every host has one link; no switch port is used twice (explicit ports first, the
    others take the lowest free one when the topology is built)."""
    host_link: dict[str, int] = {}
    ports: dict[tuple[str, int], int] = {}
    for i, link in enumerate(links):
        for node, port in ((link.a, link.port_a), (link.b, link.port_b)):
            if _HOST.match(node):
                if node in host_link:
                    raise where.error(f"host {node} has a link already (links"
                                      f"[{host_link[node]}]); a host has one", "links", i)
                host_link[node] = i
            elif port is not None:
                if (node, port) in ports:
                    raise where.error(f"port {node}:{port} is used by links"
                                      f"[{ports[node, port]}] already", "links", i)
                ports[node, port] = i
