"""Text for people: table entries, jobs and topologies as ``ina ctl`` prints them.

Numbers print in decimal, except 48-bit values (MAC addresses) and 32-bit values whose
name says they are an address (``dst_addr``, ``dip``, ``sip``, ...), which print as
IPv4 addresses. An lpm match prints as ``value/len``. A route to an ECMP group says
which ports the group's members send to (``ecmp_members``, ``ecmp_note``)."""

from __future__ import annotations

import ipaddress
import re

from controller.entities import TableEntry
from controller.jobs import Job
from controller.p4info_schema import P4InfoSchema
from controller.routes import ECMP_ACTION, ECMP_GROUP_FIELD, ECMP_INDEX_FIELD, ECMP_TABLE
from controller.topology import Topology, sorted_names
from controller.values import Exact, Lpm, Optional, Range, Ternary

_ADDRESS = re.compile(r"(addr|ip|dip|sip|address)$", re.IGNORECASE)


def format_value(value: int, width: int, name: str) -> str:
    if width == 48:
        return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))
    if width == 32 and _ADDRESS.search(name.rsplit(".", 1)[-1]):
        return str(ipaddress.IPv4Address(value))
    return str(value)


def _match_text(value: object, width: int, name: str) -> str:
    if isinstance(value, Exact):
        return format_value(value.value, width, name)
    if isinstance(value, Lpm):
        return f"{format_value(value.value, width, name)}/{value.prefix_len}"
    if isinstance(value, Ternary):
        return f"{format_value(value.value, width, name)}&&&0x{value.mask:x}"
    if isinstance(value, Range):
        return f"{value.low}..{value.high}"
    if isinstance(value, Optional):
        return "*" if value.value is None else format_value(value.value, width, name)
    return str(value)


def format_entry(schema: P4InfoSchema, entry: TableEntry) -> str:
    """``table field=value ... -> action(param=value, ...)``, one line."""
    table = schema.table(entry.table)
    widths = {f.name: f.bitwidth for f in table.match_fields}
    short = table.preamble.name.rsplit(".", 1)[-1]
    match = " ".join(f"{k}={_match_text(v, widths.get(k, 0), k)}"
                     for k, v in entry.match.items())
    head = f"{short} (default)" if entry.is_default else f"{short} {match}".rstrip()
    if entry.priority:
        head += f" priority={entry.priority}"
    if entry.action is None:
        return head
    action = schema.action(entry.action)
    pwidths = {p.name: p.bitwidth for p in action.params}
    args = ", ".join(f"{k}={format_value(int(v), pwidths.get(k, 0), k)}"  # type: ignore[arg-type]
                     for k, v in entry.params.items())
    return f"{head} -> {action.preamble.name.rsplit('.', 1)[-1]}({args})"


def _short(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


def ecmp_members(entries: list[TableEntry]) -> dict[int, dict[int, int]]:
    """group -> {index: port} from the entries of ``ecmp_nhop``."""
    out: dict[int, dict[int, int]] = {}
    for e in entries:
        group, index = e.match.get(ECMP_GROUP_FIELD), e.match.get(ECMP_INDEX_FIELD)
        if (_short(e.table) == ECMP_TABLE and isinstance(group, Exact)
                and isinstance(index, Exact) and "port" in e.params):
            out.setdefault(group.value, {})[index.value] = int(e.params["port"])  # type: ignore[arg-type]
    return out


def ecmp_note(entry: TableEntry, members: dict[int, dict[int, int]]) -> str:
    """For a route to an ECMP group: ``": ports 3, 4 by hash"``, the port of each
    index below the group's size (``-`` where ``ecmp_nhop`` has no entry: dropped);
    otherwise ``""``."""
    if _short(entry.action) != ECMP_ACTION or entry.is_default:
        return ""
    group, size = int(entry.params.get("group", 0)), int(entry.params.get("size", 0))  # type: ignore[arg-type]
    ports = members.get(group, {})
    shown = ", ".join(str(ports[i]) if i in ports else "-" for i in range(max(size, 1)))
    return f": ports {shown} by hash"


def _slots(base: int, slots: int) -> str:
    return f"slots {base}..{base + slots - 1}"


def format_job_summary(job: Job) -> str:
    """One line: the workers, the root, the resources."""
    return (f"job {job.job_id}: workers {','.join(job.workers)}; root {job.tree.root}; "
            f"{job.slots} slots; multicast group {job.mcast_grp}; epoch {job.epoch}")


def format_job(job: Job) -> list[str]:
    """The summary, then the tree from the root down: per switch its fan-in, parent port
    and region, per child the port it sits behind; then where the workers send."""
    lines = [format_job_summary(job)]
    tree = job.tree

    def switch_text(name: str) -> str:
        node = tree.switches[name]
        up = "root" if node.parent_port is None else f"parent port {node.parent_port}"
        through = " (passes through)" if node.fan_in == 1 and node.parent_port else ""
        return (f"{name}: {up}; fan-in {node.fan_in}{through}; "
                f"{_slots(job.switches[name].region_base, job.slots)}")

    def walk(name: str, prefix: str) -> None:
        kids = tree.switches[name].children
        for i, child in enumerate(kids):
            last = i == len(kids) - 1
            branch = "└── " if last else "├── "
            if child.node in tree.switches:
                lines.append(f"{prefix}{branch}port {child.port}: {switch_text(child.node)}")
                walk(child.node, prefix + ("    " if last else "│   "))
            else:
                lines.append(f"{prefix}{branch}port {child.port}: {child.node}")

    lines.append(f"  {switch_text(tree.root)}")
    walk(tree.root, "  ")
    by_address: dict[str, list[str]] = {}
    for worker, address in job.aggregator.items():
        by_address.setdefault(address, []).append(worker)
    sends = "; ".join(f"{', '.join(ws)} to {a}" for a, ws in by_address.items())
    lines.append(f"  workers send: {sends}")
    return lines


def format_topology(topo: Topology) -> list[str]:
    lines = []
    for name in sorted_names(topo.switches):
        s = topo.switches[name]
        cpu = f", cpu port {s.cpu_port}" if s.cpu_port is not None else ""
        lines.append(f"{name}: device {s.device_id} at {s.grpc_address}, mac {s.mac}, "
                     f"aggregator {s.aggregator_ip}{cpu}")
        for port, peer in sorted(topo.ports[name].items()):
            lines.append(f"  port {port}: {peer}")
    for name in sorted_names(topo.hosts):
        h = topo.hosts[name]
        a = topo.attachments[name]
        lines.append(f"{name}: {h.ip}/{h.prefix_len} {h.mac} on {a.switch}:{a.port}")
    return lines
