"""The controller's model of the network: hosts, switches and the links between them.

The model is plain data: routes (``controller.routes``) and aggregation trees
(``controller.jobs``) are computed from it without starting anything. It is loaded
from a Mininet ``Topo`` (plus, optionally, the running ``Mininet`` net, which knows the
gRPC address of each switch) or from a JSON file, and saved to that JSON::

    {
      "hosts": [{"name": "h1", "ip": "10.0.0.1", "prefix_len": 24,
                 "mac": "00:00:00:00:00:01", "iface": "h1-eth0"}],
      "switches": [{"name": "s1", "device_id": 1, "grpc_address": "127.0.0.1:9559",
                    "cpu_port": 255, "mac": "02:00:00:ff:00:01",
                    "aggregator_ip": "10.0.0.254"}],
      "links": [["h1", "s1:1"], ["s1:5", "s2:1"]]
    }

A link joins two endpoints: a host (``"h1"``) or a switch port (``"s1:1"``). Every host
hangs off exactly one switch port. Optional fields: a host's ``prefix_len`` (24) and
``iface`` (``<name>-eth0``); a switch's ``grpc_address`` (``127.0.0.1:<9558 + device
id>``), ``cpu_port`` (none), ``mac`` and ``aggregator_ip`` (see below).

Each switch has a MAC address and an *aggregator address*, both chosen by the
controller: hosts address their frames to their switch's MAC (the switch acts as the
IPv4 gateway, see ``controller.routes``) and send aggregation traffic to an aggregator
address. By default the MAC is ``02:00:00:ff:XX:XX`` (XX:XX the device id) and the
aggregator addresses are the top addresses of the hosts' subnet (10.0.0.254, .253, ...
in device id order), skipping addresses that hosts use.

Invalid input raises ``TopologyError`` naming the file, the entry and the field.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_GRPC_BASE = 9558  # device 1 -> 9559, simple_switch_grpc's default port
DEFAULT_PREFIX_LEN = 24
MAX_PORT = 510  # bit<9>, 511 is the drop port

_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


class TopologyError(ValueError):
    """An invalid topology; the message says what and where."""


@dataclass(frozen=True)
class Host:
    name: str
    ip: str  # without prefix length
    mac: str  # lower case, colon separated
    prefix_len: int = DEFAULT_PREFIX_LEN
    iface: str = ""  # the host's interface towards its switch; "" means <name>-eth0

    @property
    def interface(self) -> str:
        return self.iface or f"{self.name}-eth0"


@dataclass(frozen=True)
class Switch:
    name: str
    device_id: int
    grpc_address: str
    mac: str
    aggregator_ip: str
    cpu_port: int | None = None


@dataclass(frozen=True)
class Endpoint:
    """A host (``port`` None) or a switch port."""

    node: str
    port: int | None = None

    def __str__(self) -> str:
        return self.node if self.port is None else f"{self.node}:{self.port}"


@dataclass(frozen=True)
class Link:
    a: Endpoint
    b: Endpoint


@dataclass(frozen=True)
class Attachment:
    """Where a host hangs off the network."""

    switch: str
    port: int


@dataclass
class Topology:
    """Hosts, switches and links (see the module docstring); build it with
    ``Topology.build`` (or the loaders), which validates it."""

    hosts: dict[str, Host] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    # derived by build(): host -> attachment, switch -> {port: peer endpoint}
    attachments: dict[str, Attachment] = field(default_factory=dict, repr=False)
    ports: dict[str, dict[int, Endpoint]] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ building

    @classmethod
    def build(cls, hosts: Iterable[Host], switches: Iterable[Switch],
              links: Iterable[Link], where: str = "topology") -> Topology:
        topo = cls()
        for h in hosts:
            if h.name in topo.hosts:
                raise TopologyError(f"{where}: host {h.name!r} is declared twice")
            topo.hosts[h.name] = h
        for s in switches:
            if s.name in topo.switches or s.name in topo.hosts:
                raise TopologyError(f"{where}: node {s.name!r} is declared twice")
            topo.switches[s.name] = s
        topo.links = list(links)
        topo._index(where)
        topo._check_unique(where)
        return topo

    def _index(self, where: str) -> None:
        self.ports = {name: {} for name in self.switches}
        self.attachments = {}
        for i, link in enumerate(self.links):
            at = f"{where}: links[{i}] ({link.a} - {link.b})"
            for end in (link.a, link.b):
                if end.node in self.hosts:
                    if end.port is not None:
                        raise TopologyError(f"{at}: a host endpoint has no port: "
                                            f"write {end.node!r}")
                elif end.node in self.switches:
                    if end.port is None:
                        raise TopologyError(f"{at}: switch endpoint {end.node!r} needs a "
                                            f"port, e.g. '{end.node}:1'")
                    if not 0 <= end.port <= MAX_PORT:
                        raise TopologyError(f"{at}: port {end.port} of {end.node} is not "
                                            f"in [0, {MAX_PORT}]")
                else:
                    raise TopologyError(f"{at}: unknown node {end.node!r}")
            for end, peer in ((link.a, link.b), (link.b, link.a)):
                if end.port is None:
                    if peer.port is None:
                        raise TopologyError(f"{at}: a host must link to a switch port, "
                                            "not to another host")
                    if end.node in self.attachments:
                        raise TopologyError(f"{at}: host {end.node} already hangs off "
                                            f"{self._attachment_text(end.node)}; a host "
                                            "has one link")
                    self.attachments[end.node] = Attachment(peer.node, peer.port)
                else:
                    used = self.ports[end.node]
                    if end.port in used:
                        raise TopologyError(f"{at}: port {end} is already linked to "
                                            f"{used[end.port]}")
                    used[end.port] = peer
        for name in self.hosts:
            if name not in self.attachments:
                raise TopologyError(f"{where}: host {name} has no link to a switch")

    def _attachment_text(self, host: str) -> str:
        a = self.attachments[host]
        return f"{a.switch}:{a.port}"

    def _check_unique(self, where: str) -> None:
        ids: dict[int, str] = {}
        for s in self.switches.values():
            if s.device_id in ids:
                raise TopologyError(f"{where}: switches {ids[s.device_id]} and {s.name} "
                                    f"have the same device_id {s.device_id}")
            ids[s.device_id] = s.name
        addresses: list[tuple[str, str, str]] = []  # (what, value, node)
        for h in self.hosts.values():
            addresses += [("IPv4 address", h.ip, h.name), ("MAC address", h.mac, h.name)]
        for s in self.switches.values():
            addresses += [("IPv4 address", s.aggregator_ip, s.name),
                          ("MAC address", s.mac, s.name)]
        seen: dict[tuple[str, str], str] = {}
        for what, value, node in addresses:
            if (what, value) in seen:
                raise TopologyError(f"{where}: {node} and {seen[what, value]} have the "
                                    f"same {what} {value}")
            seen[what, value] = node

    # ------------------------------------------------------------------- queries

    def host(self, name: str) -> Host:
        if name not in self.hosts:
            raise TopologyError(f"unknown host {name!r}; hosts: "
                                f"{', '.join(sorted_names(self.hosts)) or 'none'}")
        return self.hosts[name]

    def switch(self, name: str) -> Switch:
        if name not in self.switches:
            raise TopologyError(f"unknown switch {name!r}; switches: "
                                f"{', '.join(sorted_names(self.switches)) or 'none'}")
        return self.switches[name]

    def attachment(self, host: str) -> Attachment:
        self.host(host)
        return self.attachments[host]

    def switch_neighbours(self, switch: str) -> list[tuple[int, str]]:
        """(local port, neighbour switch) for every switch-to-switch link, by port."""
        return sorted((port, peer.node) for port, peer in self.ports[switch].items()
                      if peer.node in self.switches)

    def host_ports(self, switch: str) -> list[tuple[int, str]]:
        """(port, host) for every host on this switch, by port."""
        return sorted((port, peer.node) for port, peer in self.ports[switch].items()
                      if peer.node in self.hosts)

    # ---------------------------------------------------------------------- JSON

    def to_json(self) -> dict[str, Any]:
        hosts = []
        for h in self.hosts.values():
            item: dict[str, Any] = {"name": h.name, "ip": h.ip, "prefix_len": h.prefix_len,
                                    "mac": h.mac}
            if h.iface:
                item["iface"] = h.iface
            hosts.append(item)
        switches = []
        for s in self.switches.values():
            sw: dict[str, Any] = {"name": s.name, "device_id": s.device_id,
                                  "grpc_address": s.grpc_address, "mac": s.mac,
                                  "aggregator_ip": s.aggregator_ip}
            if s.cpu_port is not None:
                sw["cpu_port"] = s.cpu_port
            switches.append(sw)
        links = [[str(link.a), str(link.b)] for link in self.links]
        return {"hosts": hosts, "switches": switches, "links": links}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n")

    @classmethod
    def from_json(cls, data: object, where: str = "topology") -> Topology:
        return _parse_json(data, where)

    @classmethod
    def load(cls, path: str | Path) -> Topology:
        where = str(path)
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise TopologyError(f"{where}: cannot read the topology file: "
                                f"{e.strerror or e}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise TopologyError(f"{where}({e.lineno}): not valid JSON: {e.msg}") from None
        return _parse_json(data, where)

    # ------------------------------------------------------------------- Mininet

    @classmethod
    def from_mininet(cls, topo: Any, net: Any = None) -> Topology:
        """The model of a Mininet ``Topo``; with the running ``net``, each switch's
        device id, gRPC address and CPU port come from its node (``InaSwitch`` and
        ``BMv2Switch`` have them) and the hosts' addresses from the hosts."""
        return _from_mininet(topo, net)


def sorted_names(names: Iterable[str]) -> list[str]:
    """Names in natural order: h2 before h10."""
    return sorted(names, key=lambda n: [int(t) if t.isdigit() else t
                                        for t in re.split(r"(\d+)", n)])


# ---------------------------------------------------------------------- defaults


def default_switch_mac(device_id: int) -> str:
    return "02:00:00:ff:" + ":".join(f"{b:02x}" for b in (device_id & 0xFFFF).to_bytes(2, "big"))


def default_grpc_address(device_id: int) -> str:
    return f"127.0.0.1:{DEFAULT_GRPC_BASE + device_id}"


def default_aggregator_ips(hosts: Iterable[Host], device_ids: Iterable[int],
                           taken: Iterable[str] = ()) -> list[str]:
    """One address per device id (in the given order): the top host addresses of the
    first host's subnet (10.0.0.0/24 if there is no host), skipping ``taken`` ones and
    the hosts' addresses."""
    hosts = list(hosts)
    net = (ipaddress.IPv4Network(f"{hosts[0].ip}/{hosts[0].prefix_len}", strict=False)
           if hosts else ipaddress.IPv4Network("10.0.0.0/24"))
    used = {h.ip for h in hosts} | set(taken)
    out: list[str] = []
    candidate = int(net.broadcast_address) - 1
    for device_id in device_ids:
        while candidate > int(net.network_address) and str(
                ipaddress.IPv4Address(candidate)) in used:
            candidate -= 1
        if candidate <= int(net.network_address):
            raise TopologyError(f"no free address left in {net} for the aggregator address "
                                f"of switch device {device_id}; give aggregator_ip")
        out.append(str(ipaddress.IPv4Address(candidate)))
        candidate -= 1
    return out


# -------------------------------------------------------------------- JSON input


def _parse_json(data: object, where: str) -> Topology:
    if not isinstance(data, dict):
        raise TopologyError(f"{where}: expected a JSON object with hosts, switches and links")
    unknown = set(data) - {"hosts", "switches", "links"}
    if unknown:
        raise TopologyError(f"{where}: unknown key {sorted(unknown)[0]!r} (keys: hosts, "
                            "switches, links)")
    hosts = [_parse_host(x, f"{where}: hosts[{i}]")
             for i, x in enumerate(_list(data, "hosts", where))]
    raw_switches = _list(data, "switches", where)
    partial = [_parse_switch(x, f"{where}: switches[{i}]")
               for i, x in enumerate(raw_switches)]
    switches = _fill_switch_defaults(partial, hosts)
    links = [_parse_link(x, f"{where}: links[{i}]")
             for i, x in enumerate(_list(data, "links", where))]
    return Topology.build(hosts, switches, links, where)


def _list(data: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise TopologyError(f"{where}: {key} must be a list, not {type(value).__name__}")
    return value


def _fields(x: object, at: str, required: set[str], optional: set[str]) -> dict[str, Any]:
    if not isinstance(x, dict):
        raise TopologyError(f"{at}: expected an object, got {json.dumps(x)}")
    for key in sorted(required):
        if key not in x:
            raise TopologyError(f"{at}: missing field {key!r}")
    extra = set(x) - required - optional
    if extra:
        raise TopologyError(f"{at}: unknown field {sorted(extra)[0]!r} (fields: "
                            f"{', '.join(sorted(required | optional))})")
    return x


def _name(value: object, at: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise TopologyError(f"{at}: field 'name': {json.dumps(value)} is not a node name")
    return value


def _int(value: object, at: str, key: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TopologyError(f"{at}: field {key!r}: {json.dumps(value)} is not an integer "
                            f"in [{low}, {high}]")
    return value


def _ipv4(value: object, at: str, key: str) -> str:
    try:
        if not isinstance(value, str) or "/" in value:
            raise ValueError
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        raise TopologyError(f"{at}: field {key!r}: {json.dumps(value)} is not an IPv4 "
                            "address (without prefix length)") from None


def _mac(value: object, at: str, key: str) -> str:
    text = value.lower() if isinstance(value, str) else ""
    if not _MAC.match(text):
        raise TopologyError(f"{at}: field {key!r}: {json.dumps(value)} is not a MAC "
                            "address like 00:00:00:00:00:01")
    return text


def _parse_host(x: object, at: str) -> Host:
    d = _fields(x, at, {"name", "ip", "mac"}, {"prefix_len", "iface"})
    name = _name(d["name"], at)
    at = f"{at} ({name})"
    iface = d.get("iface", "")
    if not isinstance(iface, str):
        raise TopologyError(f"{at}: field 'iface': {json.dumps(iface)} is not a string")
    return Host(name, _ipv4(d["ip"], at, "ip"), _mac(d["mac"], at, "mac"),
                _int(d.get("prefix_len", DEFAULT_PREFIX_LEN), at, "prefix_len", 0, 32), iface)


@dataclass
class _PartialSwitch:
    name: str
    device_id: int
    grpc_address: str | None
    mac: str | None
    aggregator_ip: str | None
    cpu_port: int | None


def _parse_switch(x: object, at: str) -> _PartialSwitch:
    d = _fields(x, at, {"name", "device_id"},
                {"grpc_address", "mac", "aggregator_ip", "cpu_port"})
    name = _name(d["name"], at)
    at = f"{at} ({name})"
    grpc = d.get("grpc_address")
    if grpc is not None and (not isinstance(grpc, str) or not _grpc_ok(grpc)):
        raise TopologyError(f"{at}: field 'grpc_address': {json.dumps(grpc)} is not "
                            "HOST:PORT")
    return _PartialSwitch(
        name, _int(d["device_id"], at, "device_id", 0, 2**64 - 1), grpc,
        _mac(d["mac"], at, "mac") if "mac" in d else None,
        _ipv4(d["aggregator_ip"], at, "aggregator_ip") if "aggregator_ip" in d else None,
        _int(d["cpu_port"], at, "cpu_port", 0, 2**32 - 1) if "cpu_port" in d else None)


def _grpc_ok(text: str) -> bool:
    host, sep, port = text.rpartition(":")
    return bool(sep and host and port.isdigit() and 0 < int(port) < 65536)


def _fill_switch_defaults(partial: list[_PartialSwitch], hosts: list[Host]) -> list[Switch]:
    given = [p.aggregator_ip for p in partial if p.aggregator_ip]
    missing = sorted((p for p in partial if not p.aggregator_ip), key=lambda p: p.device_id)
    chosen = dict(zip((p.name for p in missing),
                      default_aggregator_ips(hosts, [p.device_id for p in missing], given),
                      strict=True))
    return [Switch(p.name, p.device_id, p.grpc_address or default_grpc_address(p.device_id),
                   p.mac or default_switch_mac(p.device_id),
                   p.aggregator_ip or chosen[p.name], p.cpu_port) for p in partial]


def _parse_link(x: object, at: str) -> Link:
    if (not isinstance(x, list) or len(x) != 2
            or not all(isinstance(e, str) for e in x)):
        raise TopologyError(f"{at}: a link is a pair of endpoints like [\"h1\", \"s1:1\"], "
                            f"got {json.dumps(x)}")
    return Link(_endpoint(x[0], at), _endpoint(x[1], at))


def _endpoint(text: str, at: str) -> Endpoint:
    node, sep, port = text.partition(":")
    if not sep:
        return Endpoint(node)
    if not port.isdigit():
        raise TopologyError(f"{at}: endpoint {text!r}: the port must be a number")
    return Endpoint(node, int(port))


# ------------------------------------------------------------------ Mininet input


def _from_mininet(topo: Any, net: Any) -> Topology:
    switch_names = sorted_names(topo.switches())
    host_names = sorted_names(topo.hosts())
    hosts: list[Host] = []
    links: list[Link] = []
    host_iface: dict[str, str] = {}
    for a, b, info in topo.links(sort=True, withInfo=True):
        ends = []
        for node, port_key in ((a, "port1"), (b, "port2")):
            if node in topo.switches():
                ends.append(Endpoint(node, int(info[port_key])))
            else:
                ends.append(Endpoint(node))
                host_iface.setdefault(node, f"{node}-eth{info.get(port_key, 0)}")
        links.append(Link(ends[0], ends[1]))
    for name in host_names:
        params = topo.nodeInfo(name)
        ip_text = str(params.get("ip", ""))
        mac = params.get("mac")
        if net is not None:
            node = net.get(name)
            if "/" not in ip_text:
                plen = getattr(node.intf(), "prefixLen", None) or DEFAULT_PREFIX_LEN
                ip_text = f"{node.IP()}/{plen}"
            mac = node.MAC() if mac is None else mac
        ip, _, plen = ip_text.partition("/")
        if not ip or mac is None:
            raise TopologyError(f"Mininet topology: host {name} needs an ip and a mac "
                                "(declare them in the Topo or pass the running net)")
        hosts.append(Host(name, ip, str(mac).lower(), int(plen or DEFAULT_PREFIX_LEN),
                          host_iface.get(name, "")))
    partial = []
    for i, name in enumerate(switch_names):
        params = topo.nodeInfo(name)
        node = net.get(name) if net is not None else None
        device_id = getattr(node, "device_id", None) or params.get("device_id") \
            or _number_in(name, i + 1)
        grpc = getattr(node, "grpc_address", None) if node is not None else None
        if grpc is None and params.get("grpc_port"):
            grpc = f"127.0.0.1:{params['grpc_port']}"
        cpu = getattr(node, "cpu_port", None) if node is not None else params.get("cpu_port")
        partial.append(_PartialSwitch(name, int(device_id), grpc, None, None, cpu))
    return Topology.build(hosts, _fill_switch_defaults(partial, hosts), links,
                          "Mininet topology")


def _number_in(name: str, fallback: int) -> int:
    digits = re.findall(r"\d+", name)
    return int(digits[-1]) if digits else fallback
