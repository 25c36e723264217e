"""Topologies as p4lang's tutorials write them (an exercise's ``topology.json``).

    {"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11",
                      "commands": ["route add default gw 10.0.1.10 dev eth0",
                                   "arp -i eth0 -s 10.0.1.10 08:00:00:00:01:00"]}},
     "switches": {"s1": {"runtime_json": "topo/s1-runtime.json"}},
     "links": [["h1", "s1-p1"], ["s1-p2", "s2-p2", "5ms", 10]]}

A host has its address with the prefix length, its MAC and shell commands run in it
once the network is up; its interface is ``eth0``. A switch may name its runtime file
(``runtime_json``, see ``controller.runtime_file``), its own compiled ``program`` and a
``cpu_port``. A link joins a host and a switch port (``sN-pP``) or two switch ports,
with an optional latency (milliseconds, or ``"5ms"``) and rate (Mbit/s). File names are
relative to the current directory (the tutorials run from the exercise's directory), or
else to the topology file's. The kernel here has no netem: a latency becomes the
built-in switch's port impairment at the link's switch end, as in the project's own
topology files (``topologies.builder``).

``read_exercise_topology`` checks the file; errors name the file, the line and the
entry (``topology.json:21: links[3]: ...``). ``ExerciseTopo`` is its Mininet topology.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mininet.topo import Topo

from topologies.builder import MAX_PORT, LinkOptions, link_impairments
from topologies.family import TopoSpecError
from topologies.file_positions import Where, read_json
from topologies.hosts import P4Host

HOST_KEYS = ("ip", "mac", "commands")
SWITCH_KEYS = ("runtime_json", "program", "cpu_port")
REFUSED_SWITCH_KEYS = {
    "cli_input": "a Thrift CLI command file needs BMv2's simple_switch_CLI; give the "
                 "switch a runtime_json (P4Runtime) instead",
    "priority_queues": "each port has one queue on the built-in switch",
}
_SWITCH_PORT = re.compile(r"^(s[0-9A-Za-z_]*)-p([0-9]+)$")
_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")
_IP = re.compile(r"^(\d{1,3}\.){3}\d{1,3}/\d{1,2}$")
_LATENCY = re.compile(r"^([0-9]*\.?[0-9]+)\s*(ms|us|s)?$")
_UNIT_MS = {"ms": 1.0, "us": 0.001, "s": 1000.0, None: 1.0}


@dataclass(frozen=True)
class ExerciseHost:
    name: str
    ip: str  # with the prefix length: 10.0.1.1/24
    mac: str
    commands: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExerciseSwitch:
    name: str
    runtime_json: Path | None = None
    program: Path | None = None
    cpu_port: int | None = None


@dataclass(frozen=True)
class ExerciseLink:
    a: str
    port_a: int | None  # None for a host
    b: str
    port_b: int
    options: LinkOptions


@dataclass(frozen=True)
class ExerciseTopology:
    path: Path
    hosts: tuple[ExerciseHost, ...]
    switches: tuple[ExerciseSwitch, ...]
    links: tuple[ExerciseLink, ...]


def is_exercise_topology(path: str | Path) -> bool:
    """A JSON file whose ``hosts`` is an object (the project's own files list them)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("hosts"), dict)


def read_exercise_topology(path: str | Path) -> ExerciseTopology:
    data, where = read_json(path, TopoSpecError, "topology file")
    if not isinstance(data, dict) or not isinstance(data.get("hosts"), dict):
        raise where.error("expected an object with hosts (an object of host names), "
                          "switches and links, as p4lang's tutorials write topology.json")
    for key in data:
        if key not in ("hosts", "switches", "links"):
            raise where.error(f"unknown key {key!r} (keys: hosts, switches, links)", key)
    hosts = tuple(_host(name, raw, where) for name, raw in data["hosts"].items())
    switches_raw = data.get("switches")
    if not isinstance(switches_raw, dict) or not switches_raw:
        raise where.error("switches: expected an object of switch names",
                          *(["switches"] if "switches" in data else []))
    base = Path(path).parent
    switches = tuple(_switch(name, raw, where, base) for name, raw in switches_raw.items())
    links_raw = data.get("links")
    if not isinstance(links_raw, list):
        raise where.error("links: expected a list of [A, B, latency, bandwidth]",
                          *(["links"] if "links" in data else []))
    names = {h.name for h in hosts}, {s.name for s in switches}
    links = tuple(_link(raw, i, names, where) for i, raw in enumerate(links_raw))
    _check_ends(links, hosts, where)
    return ExerciseTopology(Path(path), hosts, switches, links)


def _host(name: str, raw: object, where: Where) -> ExerciseHost:
    at = ("hosts", name)
    if not re.match(r"^h[0-9A-Za-z_]*$", name):
        raise where.error("a host's name starts with h (the tutorials tell hosts and "
                          "switches apart by it)", *at)
    if not isinstance(raw, dict):
        raise where.error("expected an object with ip, mac and commands", *at)
    for key in raw:
        if key not in HOST_KEYS:
            raise where.error(f"unknown key {key!r} (keys: {', '.join(HOST_KEYS)})", *at, key)
    ip, mac = raw.get("ip"), raw.get("mac")
    if not isinstance(ip, str) or not _IP.match(ip):
        raise where.error(f"ip {ip!r}: expected an address with its prefix length, "
                          "10.0.1.1/24", *at, *(["ip"] if "ip" in raw else []))
    if not isinstance(mac, str) or not _MAC.match(mac):
        raise where.error(f"mac {mac!r}: expected a MAC address, 08:00:00:00:01:11", *at,
                          *(["mac"] if "mac" in raw else []))
    commands = raw.get("commands", [])
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        raise where.error("commands: expected a list of shell commands", *at, "commands")
    return ExerciseHost(name, ip, mac.lower(), tuple(commands))


def resolve(name: str, base: Path) -> Path | None:
    """A file named in the topology: in the current directory, else beside the file."""
    for candidate in (Path(name), base / name):
        if candidate.is_file():
            return candidate
    return None


def _switch(name: str, raw: object, where: Where, base: Path) -> ExerciseSwitch:
    at = ("switches", name)
    if not name.startswith("s") or not re.match(r"^s[0-9A-Za-z_]*$", name):
        raise where.error("a switch's name starts with s", *at)
    if not isinstance(raw, dict):
        raise where.error("expected an object (runtime_json, program, cpu_port)", *at)
    for key in raw:
        if key in REFUSED_SWITCH_KEYS:
            raise where.error(f"{key} is not supported: {REFUSED_SWITCH_KEYS[key]}", *at, key)
        if key not in SWITCH_KEYS:
            raise where.error(f"unknown key {key!r} (keys: {', '.join(SWITCH_KEYS)})",
                              *at, key)
    files: dict[str, Path | None] = {}
    for key in ("runtime_json", "program"):
        value = raw.get(key)
        if value is None:
            files[key] = None
            continue
        if not isinstance(value, str):
            raise where.error("expected a file name", *at, key)
        files[key] = resolve(value, base)
        if files[key] is None:
            raise where.error(f"{value}: no such file (in the current directory or beside "
                              "the topology file)", *at, key)
    cpu_port = raw.get("cpu_port")
    if cpu_port is not None and (isinstance(cpu_port, bool) or not isinstance(cpu_port, int)
                                 or not 1 <= cpu_port <= MAX_PORT):
        raise where.error(f"cpu_port {cpu_port!r}: expected a port number in [1, {MAX_PORT}]",
                          *at, "cpu_port")
    return ExerciseSwitch(name, files["runtime_json"], files["program"], cpu_port)


def _end(text: object, names: tuple[set[str], set[str]], where: Where,
         at: tuple[Any, ...]) -> tuple[str, int | None]:
    hosts, switches = names
    if isinstance(text, str) and text in hosts:
        return text, None
    m = _SWITCH_PORT.match(text) if isinstance(text, str) else None
    if m is None:
        raise where.error(f"endpoint {text!r}: expected a host or sN-pP (port P of switch "
                          "sN)", *at)
    if m.group(1) not in switches:
        raise where.error(f"endpoint {text!r}: unknown switch {m.group(1)!r} (switches: "
                          f"{', '.join(sorted(switches))})", *at)
    port = int(m.group(2))
    if not 1 <= port <= MAX_PORT:
        raise where.error(f"endpoint {text!r}: the port must be in [1, {MAX_PORT}]", *at)
    return m.group(1), port


def _link(raw: object, i: int, names: tuple[set[str], set[str]], where: Where
          ) -> ExerciseLink:
    at = ("links", i)
    if not isinstance(raw, list) or not 2 <= len(raw) <= 4:
        raise where.error("a link is [A, B], [A, B, latency] or [A, B, latency, bandwidth]",
                          *at)
    ends = sorted(raw[:2], key=str)  # as the tutorials do: a host ("h...") comes first
    (a, port_a), (b, port_b) = (_end(e, names, where, at) for e in ends)
    if port_b is None:
        raise where.error("two hosts are linked directly; a host links to a switch port",
                          *at)
    latency_ms = _latency(raw[2], where, at) if len(raw) > 2 else 0.0
    bw = raw[3] if len(raw) > 3 else None
    if bw is not None and (isinstance(bw, bool) or not isinstance(bw, int | float) or bw <= 0):
        raise where.error(f"bandwidth {bw!r}: expected a rate in Mbit/s above 0", *at)
    return ExerciseLink(a, port_a, b, port_b, LinkOptions(bw=bw, delay_ms=latency_ms))


def _latency(raw: object, where: Where, at: tuple[Any, ...]) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw >= 0:
        return float(raw)
    m = _LATENCY.match(raw.strip()) if isinstance(raw, str) else None
    if m is None:
        raise where.error(f"latency {raw!r}: expected milliseconds or a time like \"5ms\"",
                          *at)
    return float(m.group(1)) * _UNIT_MS[m.group(2)]


def _check_ends(links: tuple[ExerciseLink, ...], hosts: tuple[ExerciseHost, ...],
                where: Where) -> None:
    used: dict[tuple[str, int | None], int] = {}
    for i, link in enumerate(links):
        for end in ((link.a, link.port_a), (link.b, link.port_b)):
            if end in used:
                what = f"host {end[0]}" if end[1] is None else f"port {end[0]}-p{end[1]}"
                raise where.error(f"{what} is linked twice (links[{used[end]}] too)",
                                  "links", i)
            used[end] = i
    for h in hosts:
        if (h.name, None) not in used:
            raise where.error(f"host {h.name} has no link", "hosts", h.name)


class ExerciseTopo(Topo):  # type: ignore[misc]
    """The Mininet topology of an ``ExerciseTopology``. Every switch gets its options
    from ``switch_opts(switch)`` (program, device id, gRPC port, ...); a link's latency
    becomes an ``impair`` spec of its switch end (``topologies.builder``)."""

    def build(self, topology: ExerciseTopology,  # type: ignore[override]
              switch_opts: Any = None) -> None:
        for h in topology.hosts:
            self.addHost(h.name, cls=P4Host, ip=h.ip, mac=h.mac)
        for s in topology.switches:
            self.addSwitch(s.name, **(switch_opts(s) if switch_opts else {}))
        for link in topology.links:
            info = link.options.link_info()
            if link.port_a is None:
                self.addLink(link.a, link.b, port1=0, port2=link.port_b, intfName1="eth0",
                             **info)
            else:
                self.addLink(link.a, link.b, port1=link.port_a, port2=link.port_b, **info)
        for switch, ports in link_impairments(self).items():
            self.nodeInfo(switch)["impair"] = [f"{port}:{spec}" for port, spec
                                               in sorted(ports.items())]
