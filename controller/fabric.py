"""The fabric as it is now: the topology without what failed, and the routes that go
with it.

``Fabric`` keeps what the controller knows is down (links between switches, hosts'
links, switches) and gives ``live()``: the ``Topology`` of what still works, without
the failed links, the dead switches, and the hosts cut off by either. Routes, trees
and new jobs are planned on it (``controller.routes``, ``controller.jobs``), so they
go around what failed.

``sync_routes`` brings one switch's ``ipv4_lpm`` and ``ecmp_nhop`` tables to what a
topology asks for: it reads what the switch has, and writes only the difference (new
ECMP members first, then the routes, then what is no longer used), so the routes that
did not change never stop working.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2

from controller.controller import has_ecmp
from controller.entities import TableEntry, encode_table_entry
from controller.p4runtime_client import P4RuntimeClient
from controller.routes import (
    ECMP_TABLE,
    ROUTE_TABLE,
    compute_ecmp_routes,
    compute_routes,
    route_entries,
)
from controller.topology import Link, Topology, sorted_names

CPU_ACTION = "to_cpu"


@dataclass(frozen=True)
class LinkEnds:
    """A link between two switches, by its two (switch, port) ends in name order."""

    a: str
    pa: int
    b: str
    pb: int

    @classmethod
    def of(cls, x: str, px: int, y: str, py: int) -> LinkEnds:
        (a, pa), (b, pb) = sorted([(x, px), (y, py)], key=lambda e: (_natural(e[0]), e[1]))
        return cls(a, pa, b, pb)

    @property
    def name(self) -> str:
        return f"{self.a}-{self.b}"

    def touches(self, switch: str) -> bool:
        return switch in (self.a, self.b)


def _natural(name: str) -> list[int | str]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def switch_links(topo: Topology) -> list[LinkEnds]:
    """Every link between two switches, once."""
    out = []
    for link in topo.links:
        if link.a.port is None or link.b.port is None:
            continue
        if link.a.node in topo.switches and link.b.node in topo.switches:
            out.append(LinkEnds.of(link.a.node, link.a.port, link.b.node, link.b.port))
    return out


@dataclass
class Fabric:
    topology: Topology  # the whole network
    down_links: set[LinkEnds] = field(default_factory=set)
    down_hosts: set[str] = field(default_factory=set)  # hosts whose link is down
    down_switches: set[str] = field(default_factory=set)

    def live(self) -> Topology:
        """The topology of what works (see the module docstring)."""
        topo = self.topology
        switches = [s for s in topo.switches.values() if s.name not in self.down_switches]
        alive = {s.name for s in switches}
        hosts = [h for h in topo.hosts.values()
                 if h.name not in self.down_hosts and topo.attachments[h.name].switch in alive]
        present = alive | {h.name for h in hosts}
        links: list[Link] = []
        for link in topo.links:
            if link.a.node not in present or link.b.node not in present:
                continue
            if (link.a.port is not None and link.b.port is not None and LinkEnds.of(
                    link.a.node, link.a.port, link.b.node, link.b.port) in self.down_links):
                continue
            links.append(link)
        return Topology.build(hosts, switches, links, "the live fabric")

    def cut_off(self, hosts: Iterable[str]) -> list[str]:
        """The ``hosts`` that are not in the live fabric (their link or switch is down)."""
        return [h for h in hosts if h in self.down_hosts
                or self.topology.attachments[h].switch in self.down_switches]

    def describe_down(self) -> list[str]:
        return ([f"switch {s}" for s in sorted_names(self.down_switches)]
                + [f"link {e.name}" for e in sorted(self.down_links, key=lambda e: e.name)]
                + [f"link {h}-{self.topology.attachments[h].switch}"
                   for h in sorted_names(self.down_hosts)])


def groups_of(topo: Topology, hosts: Sequence[str]) -> list[list[str]]:
    """``hosts`` (those present in ``topo``) split into the groups that reach each other
    through ``topo``'s switches, the group of the first host first."""
    parent: dict[str, str] = {s: s for s in topo.switches}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for link in topo.links:
        if link.a.node in topo.switches and link.b.node in topo.switches:
            parent[find(link.a.node)] = find(link.b.node)
    groups: dict[str, list[str]] = {}
    for h in hosts:
        if h in topo.hosts:
            groups.setdefault(find(topo.attachments[h].switch), []).append(h)
    return list(groups.values())


# ------------------------------------------------------------------------ routes


def desired_routes(topo: Topology, switch: str, ecmp: bool,
                   to_cpu: str | None = None) -> list[TableEntry]:
    """What ``switch``'s route tables should hold on ``topo``: the routes (with ECMP
    groups or one shortest path per host) and, with ``to_cpu``, that address's /32 to
    the controller."""
    routes = (compute_ecmp_routes(topo) if ecmp else compute_routes(topo)).get(switch, [])
    out = route_entries(routes)
    if to_cpu is not None:
        out.append(TableEntry(ROUTE_TABLE, {"hdr.ipv4.dst_addr": f"{to_cpu}/32"},
                              CPU_ACTION, {}))
    return out


def _bytes(value: bytes) -> bytes:
    """A P4Runtime byte string in its canonical form (no leading zero bytes)."""
    return value.lstrip(b"\0") or b"\0"


def _key(te: p4runtime_pb2.TableEntry) -> tuple[int, bytes]:
    """An entry's table and match, the same however the switch pads its values."""
    parts = []
    for m in sorted(te.match, key=lambda m: m.field_id):
        kind = m.WhichOneof("field_match_type")
        inner = getattr(m, kind) if kind else None
        values = [_bytes(getattr(inner, f.name)) if isinstance(getattr(inner, f.name), bytes)
                  else str(getattr(inner, f.name)).encode()
                  for f in inner.DESCRIPTOR.fields] if inner is not None else []
        parts.append(b"%d:%s:%s" % (m.field_id, (kind or "").encode(), b"/".join(values)))
    return te.table_id, b";".join(parts) + b"|%d" % te.priority


def _action(te: p4runtime_pb2.TableEntry) -> bytes:
    action = p4runtime_pb2.Action()
    action.action_id = te.action.action.action_id
    for p in sorted(te.action.action.params, key=lambda p: p.param_id):
        action.params.add(param_id=p.param_id, value=_bytes(p.value))
    return action.SerializeToString(deterministic=True)


def sync_routes(client: P4RuntimeClient, topo: Topology, switch: str, *, ecmp: bool = True,
                to_cpu: str | None = None) -> int:
    """Bring ``switch``'s route tables to ``desired_routes`` (see the module
    docstring); the number of entries written."""
    schema = client.schema
    with_ecmp = ecmp and has_ecmp(client)
    tables = [ROUTE_TABLE, ECMP_TABLE] if with_ecmp else [ROUTE_TABLE]
    want: dict[tuple[int, bytes], p4runtime_pb2.TableEntry] = {}
    for entry in desired_routes(topo, switch, with_ecmp, to_cpu):
        te = encode_table_entry(schema, entry).table_entry
        want[_key(te)] = te
    have: dict[tuple[int, bytes], p4runtime_pb2.TableEntry] = {}
    for table in tables:
        read = p4runtime_pb2.Entity()
        read.table_entry.table_id = schema.table(table).preamble.id
        for ent in client.read(read):
            have[_key(ent.table_entry)] = ent.table_entry
    ecmp_id = schema.table(ECMP_TABLE).preamble.id if with_ecmp else -1
    first: list[tuple[str, p4runtime_pb2.Entity]] = []
    routes: list[tuple[str, p4runtime_pb2.Entity]] = []
    last: list[tuple[str, p4runtime_pb2.Entity]] = []
    for key, te in want.items():
        old = have.get(key)
        if old is not None and _action(old) == _action(te):
            continue
        ops = first if key[0] == ecmp_id else routes
        ops.append(("INSERT" if old is None else "MODIFY", _entity(te)))
    gone = [("DELETE", _entity(te)) for key, te in have.items() if key not in want]
    last = [op for op in gone if op[1].table_entry.table_id == ecmp_id]
    routes += [op for op in gone if op[1].table_entry.table_id != ecmp_id]
    for batch in (first, routes, last):
        if batch:
            client.write(batch)  # type: ignore[arg-type]
    return len(first) + len(routes) + len(last)


def _entity(te: p4runtime_pb2.TableEntry) -> p4runtime_pb2.Entity:
    ent = p4runtime_pb2.Entity()
    ent.table_entry.CopyFrom(te)
    return ent
