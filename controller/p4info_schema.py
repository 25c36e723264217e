"""Name resolution in a P4Info: the controller addresses everything by P4 name.

A name may be given in full (``ForwardIngress.ipv4_lpm``), as the P4Info alias
(``ipv4_lpm``), or as any dotted suffix that names exactly one object of that kind
(``ipv4.dst_addr`` for the match field ``hdr.ipv4.dst_addr``). An unknown or ambiguous
name is a ``SchemaError`` that lists the names the P4Info has.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from controller.errors import SchemaError

MatchField = p4info_pb2.MatchField


T = TypeVar("T")


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """A P4Info from a file in protobuf text format (``.txtpb``/``.txt``) or binary."""
    data = Path(path).read_bytes()
    info = p4info_pb2.P4Info()
    try:
        text_format.Parse(data.decode(), info)
    except (UnicodeDecodeError, text_format.ParseError) as text_error:
        try:
            info.ParseFromString(data)
        except Exception:
            raise SchemaError(f"{path}: not a P4Info in text or binary format "
                              f"({text_error})") from None
    return info


def _names(x: object) -> tuple[str, str]:
    """(name, alias) of a P4Info object with a preamble, or of a field/parameter."""
    pre = getattr(x, "preamble", None)
    if pre is not None:
        return pre.name, pre.alias
    return x.name, ""  # type: ignore[attr-defined]


def find_by_name(items: Sequence[T], wanted: str, kind: str, where: str) -> T:
    """The one item of ``items`` named ``wanted`` (see the module docstring)."""
    found = [x for x in items if _names(x)[0] == wanted]
    if not found:
        found = [x for x in items
                 if _names(x)[1] == wanted or _names(x)[0].endswith("." + wanted)]
    if len(found) == 1:
        return found[0]
    known = ", ".join(sorted(_names(x)[0] for x in items)) or "none"
    if not found:
        raise SchemaError(f"{where} has no {kind} {wanted!r}; its {kind}s: {known}")
    both = ", ".join(sorted(_names(x)[0] for x in found))
    raise SchemaError(f"{kind} name {wanted!r} is ambiguous in {where}: {both}")


class P4InfoSchema:
    """Lookups by name and by id in one P4Info."""

    def __init__(self, info: p4info_pb2.P4Info):
        self.info = info
        self._actions_by_id = {a.preamble.id: a for a in info.actions}
        self._tables_by_id = {t.preamble.id: t for t in info.tables}
        self._by_id: dict[int, object] = {}
        for group in (info.tables, info.actions, info.counters, info.direct_counters,
                      info.meters, info.direct_meters, info.registers, info.digests,
                      info.controller_packet_metadata, info.value_sets):
            for x in group:
                self._by_id[x.preamble.id] = x

    @classmethod
    def from_file(cls, path: str | Path) -> P4InfoSchema:
        return cls(load_p4info(path))

    # ------------------------------------------------------------------ by name

    def table(self, name: str) -> p4info_pb2.Table:
        return find_by_name(self.info.tables, name, "table", "the P4Info")

    def action(self, name: str) -> p4info_pb2.Action:
        return find_by_name(self.info.actions, name, "action", "the P4Info")

    def table_action(self, table: p4info_pb2.Table, name: str) -> p4info_pb2.Action:
        """An action that ``table`` may use (its action refs)."""
        actions = [self._actions_by_id[r.id] for r in table.action_refs
                   if r.id in self._actions_by_id]
        return find_by_name(actions, name, "action", f"table {table.preamble.name}")

    def match_field(self, table: p4info_pb2.Table, name: str) -> p4info_pb2.MatchField:
        return find_by_name(table.match_fields, name, "match field",
                            f"table {table.preamble.name}")

    def param(self, action: p4info_pb2.Action, name: str) -> p4info_pb2.Action.Param:
        return find_by_name(action.params, name, "parameter",
                            f"action {action.preamble.name}")

    def counter(self, name: str) -> p4info_pb2.Counter:
        return find_by_name(self.info.counters, name, "counter", "the P4Info")

    def direct_counter(self, name: str) -> p4info_pb2.DirectCounter:
        return find_by_name(self.info.direct_counters, name, "direct counter", "the P4Info")

    def register(self, name: str) -> p4info_pb2.Register:
        return find_by_name(self.info.registers, name, "register", "the P4Info")

    def digest(self, name: str) -> p4info_pb2.Digest:
        return find_by_name(self.info.digests, name, "digest", "the P4Info")

    def controller_metadata(self, name: str) -> p4info_pb2.ControllerPacketMetadata | None:
        """The ``@controller_header(name)`` header ("packet_in"/"packet_out"), if any."""
        for cpm in self.info.controller_packet_metadata:
            if cpm.preamble.name == name:
                return cpm
        return None

    # -------------------------------------------------------------------- by id

    def name_of(self, object_id: int) -> str:
        obj = self._by_id.get(object_id)
        return obj.preamble.name if obj is not None else f"<id {object_id}>"  # type: ignore[attr-defined]

    def table_by_id(self, table_id: int) -> p4info_pb2.Table | None:
        return self._tables_by_id.get(table_id)

    def action_by_id(self, action_id: int) -> p4info_pb2.Action | None:
        return self._actions_by_id.get(action_id)

    def by_id(self, object_id: int) -> object | None:
        return self._by_id.get(object_id)


def needs_priority(table: p4info_pb2.Table) -> bool:
    """Entries of tables with ternary, range or optional fields carry a priority."""
    return any(f.match_type in (MatchField.TERNARY, MatchField.RANGE, MatchField.OPTIONAL)
               for f in table.match_fields)


def field_named(fields: Iterable[p4info_pb2.MatchField], field_id: int
                ) -> p4info_pb2.MatchField | None:
    for f in fields:
        if f.id == field_id:
            return f
    return None
