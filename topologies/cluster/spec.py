"""The cluster file: the servers a network runs on, and where its nodes go.

TOML::

    tunnel = "vxlan"            # links between servers: gre (default) or vxlan
    placement = "switchbin"     # switchbin (default), roundrobin or explicit

    [servers.a]                 # no ssh: this machine
    [servers.b]
    ssh = "root@192.0.2.20"     # the ssh destination, [user@]host
    address = "192.0.2.20"      # where the others reach it (default: the ssh host)
    ssh_options = ["-i", "/root/.ssh/ina_cluster"]
    python = "/opt/ina/.venv/bin/python"   # default: this machine's interpreter's path
    max_sessions = 10           # sshd's MaxSessions there (default 10)

    [place]                     # explicit placement, node = server
    s2 = "b"
    h3 = "b"

The servers come in the file's order; at most one is this machine (no ``ssh``). Nodes
that ``[place]`` does not name are placed by the policy: ``switchbin`` spreads the
switches evenly over the servers in order (Mininet's ``SwitchBinPlacer``) and puts
each host with its switch, ``roundrobin`` deals the nodes out in turn
(``RoundRobinPlacer``), ``explicit`` places nothing (every node must be in
``[place]``). ``load_cluster_file`` raises ``ClusterFileError`` with the file, the line
and what is wrong.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TUNNELS = ("gre", "vxlan")
PLACEMENTS = ("switchbin", "roundrobin", "explicit")
LOCAL = "localhost"
"""Mininet Cluster Edition's name for this machine (its nodes are not remote)."""
DEFAULT_MAX_SESSIONS = 10  # OpenSSH's default MaxSessions
TOP_KEYS = ("tunnel", "placement", "servers", "place")
SERVER_KEYS = ("ssh", "address", "ssh_options", "python", "max_sessions")
NODE_NAME = re.compile(r"^[hs][0-9]+$")
SERVER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,15}$")


class ClusterFileError(ValueError):
    """A bad cluster file; the message starts with ``FILE:LINE:``."""


@dataclass(frozen=True)
class Server:
    """One server of the cluster (``ssh`` None: this machine)."""

    name: str
    ssh: str | None = None
    address: str | None = None  # IPv4; None for this machine
    ssh_options: tuple[str, ...] = ()
    python: str = sys.executable
    max_sessions: int = DEFAULT_MAX_SESSIONS
    line: int = 0

    @property
    def local(self) -> bool:
        return self.ssh is None

    @property
    def user(self) -> str:
        return self.ssh.partition("@")[0] if self.ssh and "@" in self.ssh else "root"

    @property
    def mininet_name(self) -> str:
        """The server's name for Mininet Cluster Edition (``localhost`` for this
        machine)."""
        return LOCAL if self.local else self.name


@dataclass(frozen=True)
class ClusterSpec:
    path: Path
    servers: tuple[Server, ...]
    tunnel: str = "gre"
    placement: str = "switchbin"
    place: dict[str, str] = field(default_factory=dict)  # node -> server name
    lines: dict[str, int] = field(default_factory=dict)  # "place.NODE" etc. -> line

    def server(self, name: str) -> Server:
        return next(s for s in self.servers if s.name == name)

    @property
    def remote(self) -> list[Server]:
        return [s for s in self.servers if not s.local]

    def where(self, key: str) -> str:
        """``FILE:LINE`` of a key (``place.h3``, ``servers.b``), or ``FILE``."""
        line = self.lines.get(key)
        return f"{self.path}:{line}" if line else str(self.path)

    def check_nodes(self, nodes: list[str], what: str) -> str | None:
        """What is wrong with the explicit placement for a topology with ``nodes``
        (None when nothing is)."""
        known = set(nodes)
        for node in self.place:
            if node not in known:
                listed = ", ".join(nodes[:8]) + (" ..." if len(nodes) > 8 else "")
                return (f"{self.where('place.' + node)}: place.{node}: {what} has no node "
                        f"{node} (nodes: {listed})")
        if self.placement == "explicit":
            missing = [n for n in nodes if n not in self.place]
            if missing:
                return (f"{self.where('placement')}: placement = \"explicit\", but [place] "
                        f"does not place {', '.join(missing[:8])}"
                        f"{' ...' if len(missing) > 8 else ''} of {what}")
        return None

    def to_json(self) -> dict[str, Any]:
        return {"file": str(self.path), "tunnel": self.tunnel, "placement": self.placement,
                "servers": [{"name": s.name, "ssh": s.ssh, "address": s.address}
                            for s in self.servers]}


# --------------------------------------------------------------------- reading


def _key_lines(text: str) -> dict[str, int]:
    """The line of every table header and key: ``servers.b``, ``servers.b.ssh``,
    ``place.h3``, ``tunnel``."""
    lines: dict[str, int] = {}
    table = ""
    header = re.compile(r"^\s*\[\s*([^\]\s]+)\s*\]")
    key = re.compile(r"""^\s*(["']?)([A-Za-z0-9_.-]+)\1\s*=""")
    for number, line in enumerate(text.splitlines(), 1):
        m = header.match(line)
        if m:
            table = m.group(1).replace('"', "").replace("'", "")
            lines.setdefault(table, number)
            continue
        m = key.match(line)
        if m:
            name = f"{table}.{m.group(2)}" if table else m.group(2)
            lines.setdefault(name, number)
    return lines


class _Reader:
    def __init__(self, path: Path, lines: dict[str, int]) -> None:
        self.path = path
        self.lines = lines

    def fail(self, key: str, message: str) -> ClusterFileError:
        line = self.lines.get(key)
        if line is None and "." in key:  # a key in a table: at least the table's line
            line = self.lines.get(key.rsplit(".", 1)[0])
        where = f"{self.path}:{line}" if line else str(self.path)
        return ClusterFileError(f"{where}: {key}: {message}")

    def text(self, key: str, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, "expected a non-empty string")
        return value.strip()

    def choice(self, key: str, value: Any, choices: tuple[str, ...]) -> str:
        text = self.text(key, value)
        if text not in choices:
            raise self.fail(key, f"{text!r} is not one of {', '.join(choices)}")
        return text


def load_cluster_file(path: str | Path) -> ClusterSpec:
    """The cluster file at ``path`` (see the module docstring), checked."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ClusterFileError(f"{path}: cannot read the cluster file: {e.strerror or e}"
                               ) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ClusterFileError(f"{path}: not valid TOML: {e}") from None
    r = _Reader(path, _key_lines(text))
    for key in doc:
        if key not in TOP_KEYS:
            raise r.fail(key, f"unknown key (keys: {', '.join(TOP_KEYS)})")
    tunnel = r.choice("tunnel", doc.get("tunnel", "gre"), TUNNELS)
    placement = r.choice("placement", doc.get("placement", "switchbin"), PLACEMENTS)
    servers = _servers(r, doc.get("servers"))
    place = _place(r, doc.get("place", {}), [s.name for s in servers])
    return ClusterSpec(path, tuple(servers), tunnel, placement, place, r.lines)


def _servers(r: _Reader, table: Any) -> list[Server]:
    if table is None:
        raise r.fail("servers", "missing: give at least one [servers.NAME] table")
    if not isinstance(table, dict) or not table:
        raise r.fail("servers", "expected [servers.NAME] tables, at least one")
    servers: list[Server] = []
    for name, entry in table.items():
        key = f"servers.{name}"
        if not SERVER_NAME.match(name):
            raise r.fail(key, "a server's name is a letter, then letters, digits, '-' "
                              "or '_' (at most 16)")
        if name == LOCAL:
            raise r.fail(key, f"{LOCAL!r} is Mininet's name for this machine; call the "
                              "server something else (a server without ssh is this machine)")
        if not isinstance(entry, dict):
            raise r.fail(key, "expected a table of the server's settings")
        for k in entry:
            if k not in SERVER_KEYS:
                raise r.fail(f"{key}.{k}", f"unknown key (keys: {', '.join(SERVER_KEYS)})")
        servers.append(_server(r, name, entry))
    local = [s for s in servers if s.local]
    if len(local) > 1:
        raise r.fail(f"servers.{local[1].name}", f"servers {local[0].name} and "
                     f"{local[1].name} both lack ssh: only one server is this machine")
    seen: dict[str, str] = {}
    for s in servers:
        if s.address is not None and s.address in seen:
            raise r.fail(f"servers.{s.name}.address" if f"servers.{s.name}.address" in r.lines
                         else f"servers.{s.name}.ssh",
                         f"{s.address} is server {seen[s.address]}'s address too")
        if s.address is not None:
            seen[s.address] = s.name
    return servers


def _server(r: _Reader, name: str, entry: dict[str, Any]) -> Server:
    key = f"servers.{name}"
    line = r.lines.get(key, 0)
    ssh = r.text(f"{key}.ssh", entry["ssh"]) if "ssh" in entry else None
    if ssh is None:
        for k in ("address", "ssh_options", "python", "max_sessions"):
            if k in entry:
                raise r.fail(f"{key}.{k}", "only a server reached over ssh takes it (a "
                                           "server without ssh is this machine)")
        return Server(name, line=line)
    user, at, host = ssh.rpartition("@")
    if (at and not re.match(r"^[a-z_][a-z0-9_-]*$", user)) or not re.match(
            r"^[A-Za-z0-9_.:-]+$", host):
        raise r.fail(f"{key}.ssh", f"{ssh!r} is not [user@]host")
    if "address" in entry:
        address = r.text(f"{key}.address", entry["address"])
        try:
            ipaddress.IPv4Address(address)
        except ValueError:
            raise r.fail(f"{key}.address", f"{address!r} is not an IPv4 address") from None
    else:
        try:
            address = str(ipaddress.IPv4Address(host))
        except ValueError:
            try:
                address = socket.gethostbyname(host)
            except OSError as e:
                raise r.fail(f"{key}.ssh", f"cannot resolve {host!r} ({e}); give its "
                                           "address") from None
    options = entry.get("ssh_options", [])
    if not isinstance(options, list) or not all(isinstance(o, str) and o for o in options):
        raise r.fail(f"{key}.ssh_options", "expected a list of strings (ssh's own options, "
                                           "as on its command line)")
    python = r.text(f"{key}.python", entry["python"]) if "python" in entry else sys.executable
    if not python.startswith("/"):
        raise r.fail(f"{key}.python", f"{python!r}: give the interpreter's absolute path")
    sessions = entry.get("max_sessions", DEFAULT_MAX_SESSIONS)
    if isinstance(sessions, bool) or not isinstance(sessions, int) or sessions < 2:
        raise r.fail(f"{key}.max_sessions", "expected a whole number, at least 2 (sshd's "
                                            "MaxSessions on the server)")
    return Server(name, ssh, address, tuple(options), python, sessions, line)


def _place(r: _Reader, table: Any, servers: list[str]) -> dict[str, str]:
    if not isinstance(table, dict):
        raise r.fail("place", "expected a table: node = server")
    out: dict[str, str] = {}
    for node, server in table.items():
        key = f"place.{node}"
        if not NODE_NAME.match(node):
            raise r.fail(key, "not a node name (h1, h2, ... for hosts, s1, s2, ... for "
                              "switches)")
        name = r.text(key, server)
        if name not in servers:
            raise r.fail(key, f"no server {name!r} (servers: {', '.join(servers)})")
        out[node] = name
    return out
