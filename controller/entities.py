"""The entities a controller writes and reads, addressed by P4 names.

Each entity is a dataclass with a pair of functions that turn it into the P4Runtime
protobuf ``Entity`` (resolving names to ids through a ``P4InfoSchema``) and back.
Decoded entries use the P4Info's full names and typed match values, so an entry that
was written and read back compares equal to one built from the decoded form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from controller.errors import EncodeError
from controller.p4info_schema import P4InfoSchema, field_named, needs_priority
from controller.values import (
    Exact,
    Lpm,
    MatchValue,
    Optional,
    Range,
    Ternary,
    Value,
    decode_uint,
    encode_uint,
    format_match,
    format_number,
    is_dont_care,
    parse_exact,
    parse_lpm,
    parse_optional,
    parse_range,
    parse_ternary,
    to_uint,
)

MatchField = p4info_pb2.MatchField

_PARSERS: dict[int, Callable[[object, int, str], MatchValue]] = {
    MatchField.EXACT: parse_exact,
    MatchField.LPM: parse_lpm,
    MatchField.TERNARY: parse_ternary,
    MatchField.RANGE: parse_range,
    MatchField.OPTIONAL: parse_optional,
}


@dataclass
class TableEntry:
    """A table entry, or the table's default action when ``is_default`` is set.

    ``match`` maps match field names to values (see ``controller.values``); fields left
    out are don't-care. ``params`` maps action parameter names to values. ``priority``
    is required for tables with ternary, range or optional fields (higher wins).
    """

    table: str
    match: Mapping[str, object] = field(default_factory=dict)
    action: str | None = None
    params: Mapping[str, Value] = field(default_factory=dict)
    priority: int = 0
    is_default: bool = False
    cookie: int = 0  # the entry's controller_metadata


@dataclass(frozen=True)
class Replica:
    port: int
    instance: int = 0


def _replicas(items: Sequence[Replica | int | tuple[int, int]]) -> list[Replica]:
    out = []
    for r in items:
        if isinstance(r, Replica):
            out.append(r)
        elif isinstance(r, int):
            out.append(Replica(r))
        else:
            out.append(Replica(*r))
    return out


@dataclass
class MulticastGroup:
    """A multicast group: ``replicas`` are ports, ``(port, instance)`` pairs or
    ``Replica``s."""

    group_id: int
    replicas: Sequence[Replica | int | tuple[int, int]] = ()

    def __post_init__(self) -> None:
        self.replicas = _replicas(self.replicas)


@dataclass
class CloneSession:
    """A clone (mirror) session; ``packet_length_bytes`` 0 means whole packets."""

    session_id: int
    replicas: Sequence[Replica | int | tuple[int, int]] = ()
    class_of_service: int = 0
    packet_length_bytes: int = 0

    def __post_init__(self) -> None:
        self.replicas = _replicas(self.replicas)


Writable = TableEntry | MulticastGroup | CloneSession


# ------------------------------------------------------------------------- encode


def encode_match(schema: P4InfoSchema, table: p4info_pb2.Table,
                 match: Mapping[str, object]) -> list[p4runtime_pb2.FieldMatch]:
    tname = table.preamble.name
    out: dict[int, p4runtime_pb2.FieldMatch] = {}
    for name, value in match.items():
        info = schema.match_field(table, name)
        what = f"table {tname} match field {info.name}"
        if info.id in out:
            raise EncodeError(f"{what} is given twice")
        parser = _PARSERS.get(info.match_type)
        if parser is None:
            raise EncodeError(f"{what}: unsupported match type "
                              f"{MatchField.MatchType.Name(info.match_type)}")
        typed = parser(value, info.bitwidth, what)
        if is_dont_care(typed, info.bitwidth):
            continue
        out[info.id] = _field_match(info.id, typed)
    for info in table.match_fields:
        if info.match_type == MatchField.EXACT and info.id not in out:
            raise EncodeError(f"table {tname}: the exact match field {info.name} is missing")
    return [out[k] for k in sorted(out)]


def _field_match(field_id: int, typed: MatchValue) -> p4runtime_pb2.FieldMatch:
    fm = p4runtime_pb2.FieldMatch(field_id=field_id)
    if isinstance(typed, Exact):
        fm.exact.value = encode_uint(typed.value)
    elif isinstance(typed, Lpm):
        fm.lpm.value = encode_uint(typed.value)
        fm.lpm.prefix_len = typed.prefix_len
    elif isinstance(typed, Ternary):
        fm.ternary.value = encode_uint(typed.value)
        fm.ternary.mask = encode_uint(typed.mask)
    elif isinstance(typed, Range):
        fm.range.low = encode_uint(typed.low)
        fm.range.high = encode_uint(typed.high)
    else:
        assert typed.value is not None
        fm.optional.value = encode_uint(typed.value)
    return fm


def encode_action(schema: P4InfoSchema, table: p4info_pb2.Table, name: str,
                  params: Mapping[str, Value]) -> p4runtime_pb2.Action:
    action = schema.table_action(table, name)
    aname = action.preamble.name
    msg = p4runtime_pb2.Action(action_id=action.preamble.id)
    given: dict[int, bytes] = {}
    for pname, value in params.items():
        info = schema.param(action, pname)
        what = f"action {aname} parameter {info.name}"
        given[info.id] = encode_uint(to_uint(value, info.bitwidth, what))
    missing = [p.name for p in action.params if p.id not in given]
    if missing:
        raise EncodeError(f"action {aname}: missing parameter(s) {', '.join(missing)}")
    for p in action.params:
        msg.params.add(param_id=p.id, value=given[p.id])
    return msg


def encode_table_entry(schema: P4InfoSchema, entry: TableEntry,
                       for_read: bool = False) -> p4runtime_pb2.Entity:
    """The protobuf of ``entry``; ``for_read`` allows a partial entry (a read filter)."""
    table = schema.table(entry.table)
    tname = table.preamble.name
    ent = p4runtime_pb2.Entity()
    te = ent.table_entry
    te.table_id = table.preamble.id
    if entry.is_default:
        if entry.match:
            raise EncodeError(f"table {tname}: a default action entry has no match fields")
        te.is_default_action = True
    elif entry.match or not for_read:
        te.match.extend(encode_match(schema, table, entry.match))
    if entry.action is not None:
        te.action.action.CopyFrom(encode_action(schema, table, entry.action, entry.params))
    elif not for_read and not entry.is_default:
        raise EncodeError(f"table {tname}: the entry needs an action")
    if entry.priority:
        te.priority = entry.priority
    elif needs_priority(table) and not for_read and not entry.is_default:
        raise EncodeError(f"table {tname} has ternary, range or optional match fields: "
                          "its entries need a priority > 0")
    if entry.cookie:
        te.controller_metadata = entry.cookie
    return ent


def _encode_replicas(replicas: Sequence[Replica | int | tuple[int, int]]
                     ) -> list[p4runtime_pb2.Replica]:
    return [p4runtime_pb2.Replica(egress_port=r.port, instance=r.instance)
            for r in _replicas(replicas)]


def encode_entity(schema: P4InfoSchema, item: Writable) -> p4runtime_pb2.Entity:
    if isinstance(item, TableEntry):
        return encode_table_entry(schema, item)
    ent = p4runtime_pb2.Entity()
    pre = ent.packet_replication_engine_entry
    if isinstance(item, MulticastGroup):
        pre.multicast_group_entry.multicast_group_id = item.group_id
        pre.multicast_group_entry.replicas.extend(_encode_replicas(item.replicas))
    elif isinstance(item, CloneSession):
        cs = pre.clone_session_entry
        cs.session_id = item.session_id
        cs.replicas.extend(_encode_replicas(item.replicas))
        cs.class_of_service = item.class_of_service
        cs.packet_length_bytes = item.packet_length_bytes
    else:
        raise EncodeError(f"cannot write a {type(item).__name__}: expected a TableEntry, "
                          "MulticastGroup or CloneSession")
    return ent


# ------------------------------------------------------------------------- decode


def _decode_field(info: p4info_pb2.MatchField, fm: p4runtime_pb2.FieldMatch) -> MatchValue:
    kind = fm.WhichOneof("field_match_type")
    if kind == "exact":
        return Exact(decode_uint(fm.exact.value))
    if kind == "lpm":
        return Lpm(decode_uint(fm.lpm.value), fm.lpm.prefix_len)
    if kind == "ternary":
        return Ternary(decode_uint(fm.ternary.value), decode_uint(fm.ternary.mask))
    if kind == "range":
        return Range(decode_uint(fm.range.low), decode_uint(fm.range.high))
    if kind == "optional":
        return Optional(decode_uint(fm.optional.value))
    raise EncodeError(f"match field {info.name}: unsupported match kind {kind}")


def decode_table_entry(schema: P4InfoSchema, te: p4runtime_pb2.TableEntry) -> TableEntry:
    table = schema.table_by_id(te.table_id)
    if table is None:
        raise EncodeError(f"the switch sent an entry of unknown table id {te.table_id}")
    match: dict[str, MatchValue] = {}
    for fm in te.match:
        info = field_named(table.match_fields, fm.field_id)
        if info is None:
            raise EncodeError(f"table {table.preamble.name}: unknown match field id "
                              f"{fm.field_id}")
        match[info.name] = _decode_field(info, fm)
    action_name = None
    params: dict[str, Value] = {}
    if te.action.WhichOneof("type") == "action":
        action = schema.action_by_id(te.action.action.action_id)
        if action is None:
            raise EncodeError(f"table {table.preamble.name}: unknown action id "
                              f"{te.action.action.action_id}")
        action_name = action.preamble.name
        names = {p.id: p.name for p in action.params}
        for p in te.action.action.params:
            params[names.get(p.param_id, str(p.param_id))] = decode_uint(p.value)
    return TableEntry(table.preamble.name, match, action_name, params, te.priority,
                      te.is_default_action, te.controller_metadata)


def _decode_replicas(replicas: Sequence[p4runtime_pb2.Replica]) -> list[Replica]:
    out = []
    for r in replicas:
        port = r.egress_port if r.WhichOneof("port_kind") == "egress_port" else decode_uint(
            r.port)
        out.append(Replica(port, r.instance))
    return out


def decode_pre_entry(e: p4runtime_pb2.PacketReplicationEngineEntry
                     ) -> MulticastGroup | CloneSession:
    if e.WhichOneof("type") == "multicast_group_entry":
        g = e.multicast_group_entry
        return MulticastGroup(g.multicast_group_id, _decode_replicas(g.replicas))
    c = e.clone_session_entry
    return CloneSession(c.session_id, _decode_replicas(c.replicas), c.class_of_service,
                        c.packet_length_bytes)


# ----------------------------------------------------------------------- describe


def describe_entity(schema: P4InfoSchema | None, ent: p4runtime_pb2.Entity) -> str:
    """One line naming an entity, for error messages: table, match, action."""
    kind = ent.WhichOneof("entity")
    if kind == "table_entry" and schema is not None:
        te = ent.table_entry
        table = schema.table_by_id(te.table_id)
        if table is None:
            return f"table id {te.table_id}"
        try:
            entry = decode_table_entry(schema, te)
        except EncodeError as e:
            return f"table {table.preamble.name} ({e})"
        widths = {f.name: f.bitwidth for f in table.match_fields}
        what = "default action of " if entry.is_default else ""
        text = f"{what}table {entry.table}"
        if entry.match:
            text += " match " + ", ".join(
                f"{k}={format_match(v, widths[k])}"  # type: ignore[arg-type]
                for k, v in entry.match.items())
        if entry.priority:
            text += f" priority {entry.priority}"
        if entry.action:
            action = schema.action(entry.action)
            pw = {p.name: p.bitwidth for p in action.params}
            args = ", ".join(f"{k}={format_number(int(v), pw.get(k, 0))}"  # type: ignore[arg-type]
                             for k, v in entry.params.items())
            text += f" action {entry.action}({args})"
        return text
    if kind == "packet_replication_engine_entry":
        pre = decode_pre_entry(ent.packet_replication_engine_entry)
        ports = ", ".join(f"{r.port}/{r.instance}" for r in pre.replicas)  # type: ignore[union-attr]
        if isinstance(pre, MulticastGroup):
            return f"multicast group {pre.group_id} replicas [{ports}]"
        return f"clone session {pre.session_id} replicas [{ports}]"
    if kind in ("counter_entry", "register_entry", "meter_entry") and schema is not None:
        sub = getattr(ent, kind)
        oid = getattr(sub, kind.replace("_entry", "_id"))
        return f"{kind.replace('_entry', '')} {schema.name_of(oid)} index {sub.index.index}"
    return kind or "empty entity"
