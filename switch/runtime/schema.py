"""The P4Info of the running pipeline, indexed by id, and the P4Info consistency check.

The server resolves every id of a request here; the names it hands to the engine are
the P4Info fully-qualified names, which are the engine's names too. An id the P4Info
does not have is INVALID_ARGUMENT, as BMv2 answers (the spec names no code for it, and
INVALID_ARGUMENT for unknown match field, action and parameter ids), except a digest id,
which is NOT_FOUND, as BMv2 answers that one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2

from switch.runtime.codec import needs_priority
from switch.runtime.errors import P4RuntimeError, StatusCode, invalid_argument, not_found

ActionRef = p4info_pb2.ActionRef


@dataclass
class TableInfo:
    info: p4info_pb2.Table
    name: str
    fields: list[p4info_pb2.MatchField]
    action_scopes: dict[int, int]  # action id -> ActionRef scope
    needs_priority: bool
    direct_counter: p4info_pb2.DirectCounter | None = None
    direct_meter: p4info_pb2.DirectMeter | None = None

    @property
    def id(self) -> int:
        return self.info.preamble.id

    @property
    def is_const(self) -> bool:
        return self.info.is_const_table

    @property
    def const_default(self) -> bool:
        return self.info.const_default_action_id != 0

    @property
    def supports_idle_timeout(self) -> bool:
        return self.info.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL

    @property
    def indirect(self) -> bool:
        return self.info.implementation_id != 0


@dataclass
class Schema:
    p4info: p4info_pb2.P4Info
    tables: dict[int, TableInfo] = field(default_factory=dict)
    actions: dict[int, p4info_pb2.Action] = field(default_factory=dict)
    action_ids: dict[str, int] = field(default_factory=dict)  # name -> id
    action_profiles: dict[int, p4info_pb2.ActionProfile] = field(default_factory=dict)
    counters: dict[int, p4info_pb2.Counter] = field(default_factory=dict)
    direct_counters: dict[int, p4info_pb2.DirectCounter] = field(default_factory=dict)
    meters: dict[int, p4info_pb2.Meter] = field(default_factory=dict)
    direct_meters: dict[int, p4info_pb2.DirectMeter] = field(default_factory=dict)
    registers: dict[int, p4info_pb2.Register] = field(default_factory=dict)
    digests: dict[int, p4info_pb2.Digest] = field(default_factory=dict)
    value_sets: dict[int, p4info_pb2.ValueSet] = field(default_factory=dict)
    packet_in: p4info_pb2.ControllerPacketMetadata | None = None
    packet_out: p4info_pb2.ControllerPacketMetadata | None = None

    @classmethod
    def build(cls, p4info: p4info_pb2.P4Info) -> Schema:
        s = cls(p4info)
        for a in p4info.actions:
            s.actions[a.preamble.id] = a
            s.action_ids[a.preamble.name] = a.preamble.id
        s.action_profiles = {p.preamble.id: p for p in p4info.action_profiles}
        s.counters = {c.preamble.id: c for c in p4info.counters}
        s.direct_counters = {c.preamble.id: c for c in p4info.direct_counters}
        s.meters = {m.preamble.id: m for m in p4info.meters}
        s.direct_meters = {m.preamble.id: m for m in p4info.direct_meters}
        s.registers = {r.preamble.id: r for r in p4info.registers}
        s.digests = {d.preamble.id: d for d in p4info.digests}
        s.value_sets = {v.preamble.id: v for v in p4info.value_sets}
        for cpm in p4info.controller_packet_metadata:
            if cpm.preamble.name == "packet_in":
                s.packet_in = cpm
            elif cpm.preamble.name == "packet_out":
                s.packet_out = cpm
        counters_by_table = {c.direct_table_id: c for c in p4info.direct_counters}
        meters_by_table = {m.direct_table_id: m for m in p4info.direct_meters}
        for t in p4info.tables:
            tid = t.preamble.id
            s.tables[tid] = TableInfo(
                info=t, name=t.preamble.name, fields=list(t.match_fields),
                action_scopes={r.id: r.scope for r in t.action_refs},
                needs_priority=needs_priority(t.match_fields),
                direct_counter=counters_by_table.get(tid),
                direct_meter=meters_by_table.get(tid))
        return s

    # ------------------------------------------------------------------ lookups

    @staticmethod
    def _get(table: dict, oid: int, what: str,
             unknown: Callable[[str], P4RuntimeError] = invalid_argument) -> object:
        if oid == 0:
            raise invalid_argument(f"{what} id 0 is not a valid id")
        obj = table.get(oid)
        if obj is None:
            raise unknown(f"no {what} with id {oid} in the P4Info")
        return obj

    def table(self, tid: int) -> TableInfo:
        return self._get(self.tables, tid, "table")  # type: ignore[return-value]

    def action(self, aid: int) -> p4info_pb2.Action:
        return self._get(self.actions, aid, "action")  # type: ignore[return-value]

    def counter(self, cid: int) -> p4info_pb2.Counter:
        return self._get(self.counters, cid, "counter")  # type: ignore[return-value]

    def meter(self, mid: int) -> p4info_pb2.Meter:
        return self._get(self.meters, mid, "meter")  # type: ignore[return-value]

    def register(self, rid: int) -> p4info_pb2.Register:
        return self._get(self.registers, rid, "register")  # type: ignore[return-value]

    def digest(self, did: int) -> p4info_pb2.Digest:
        return self._get(self.digests, did, "digest", not_found)  # type: ignore[return-value]

    def value_set(self, vid: int) -> p4info_pb2.ValueSet:
        return self._get(self.value_sets, vid, "value set")  # type: ignore[return-value]

    def action_id(self, name: str) -> int:
        """The id of an engine action name (a P4Info name, or a unique suffix of one)."""
        aid = self.action_ids.get(name)
        if aid is not None:
            return aid
        bare = name.lstrip(".")
        matches = [i for n, i in self.action_ids.items() if n == bare or n.endswith("." + bare)
                   or bare.endswith("." + n)]
        if len(matches) == 1:
            return matches[0]
        raise P4RuntimeError(StatusCode.INTERNAL,
                             f"action {name!r} of the switch is not in the P4Info")


# ----------------------------------------------------------------- consistency check


def _preambles(items: object) -> dict[int, str]:
    return {x.preamble.id: x.preamble.name for x in items}  # type: ignore[attr-defined]


def check_consistent(given: p4info_pb2.P4Info, compiled: p4info_pb2.P4Info) -> None:
    """Raise INVALID_ARGUMENT unless the client's P4Info describes the compiled program:
    the same tables and actions (ids, names, match fields, parameters), and every other
    object it lists present in the program with the same id and name."""
    problems: list[str] = []

    def same_set(kind: str, a: dict[int, str], b: dict[int, str]) -> None:
        for oid in sorted(a.keys() - b.keys()):
            problems.append(f"{kind} {a[oid]!r} (id {oid}) is not in the compiled program")
        for oid in sorted(b.keys() - a.keys()):
            problems.append(f"{kind} {b[oid]!r} (id {oid}) of the compiled program is missing")
        for oid in sorted(a.keys() & b.keys()):
            if a[oid] != b[oid]:
                problems.append(f"{kind} id {oid} is {a[oid]!r}, the compiled program has "
                                f"{b[oid]!r}")

    def subset(kind: str, a: dict[int, str], b: dict[int, str]) -> None:
        for oid, name in a.items():
            if b.get(oid) != name:
                problems.append(f"{kind} {name!r} (id {oid}) is not in the compiled program")

    same_set("table", _preambles(given.tables), _preambles(compiled.tables))
    same_set("action", _preambles(given.actions), _preambles(compiled.actions))
    ours_t = {t.preamble.id: t for t in compiled.tables}
    for t in given.tables:
        o = ours_t.get(t.preamble.id)
        if o is None:
            continue
        mine = [(f.id, f.bitwidth, f.match_type) for f in t.match_fields]
        theirs = [(f.id, f.bitwidth, f.match_type) for f in o.match_fields]
        if mine != theirs:
            problems.append(f"table {t.preamble.name}: match fields differ from the compiled "
                            "program")
        if {r.id for r in t.action_refs} != {r.id for r in o.action_refs}:
            problems.append(f"table {t.preamble.name}: actions differ from the compiled program")
    ours_a = {a.preamble.id: a for a in compiled.actions}
    for a in given.actions:
        o = ours_a.get(a.preamble.id)
        if o is not None and ([(p.id, p.bitwidth) for p in a.params]
                              != [(p.id, p.bitwidth) for p in o.params]):
            problems.append(f"action {a.preamble.name}: parameters differ from the compiled "
                            "program")
    ours_c = {c.preamble.id: c for c in compiled.controller_packet_metadata}
    for c in given.controller_packet_metadata:
        o = ours_c.get(c.preamble.id)
        if o is not None and ([(m.id, m.bitwidth) for m in c.metadata]
                              != [(m.id, m.bitwidth) for m in o.metadata]):
            problems.append(f"controller header {c.preamble.name}: metadata differ from the "
                            "compiled program")
    for kind, attr in (("action profile", "action_profiles"), ("counter", "counters"),
                       ("direct counter", "direct_counters"), ("meter", "meters"),
                       ("direct meter", "direct_meters"), ("register", "registers"),
                       ("digest", "digests"), ("value set", "value_sets"),
                       ("controller packet metadata", "controller_packet_metadata")):
        subset(kind, _preambles(getattr(given, attr)), _preambles(getattr(compiled, attr)))
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise invalid_argument(f"the P4Info does not match the device config: {problems[0]}"
                               f"{more}")
