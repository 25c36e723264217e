"""What the STF runner needs to know about a program (its tables, actions, meters and
registers by name), read from a P4Info instead of from the built-in front end, so that
STF commands for BMv2 are translated by the same code (``switch.stf.entries``) as for
the built-in switch while the program is compiled by p4c alone.

The objects have the attributes of the front end's ``Program`` that the runner reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2

MatchField = p4info_pb2.MatchField
_MATCH_KINDS = {
    MatchField.EXACT: "exact",
    MatchField.LPM: "lpm",
    MatchField.TERNARY: "ternary",
    MatchField.RANGE: "range",
    MatchField.OPTIONAL: "optional",
}


@dataclass(frozen=True)
class KeyModel:
    name: str  # the P4Info match field name
    match_kind: str
    width: int


@dataclass
class TableModel:
    fqn: str
    keys: list[KeyModel]
    actions: list[str]
    indirect: bool  # entries go through an action profile or selector
    const: bool  # const entries: the control plane cannot change them


@dataclass
class ActionModel:
    fqn: str
    params: list[tuple[str, int]]  # (name, width)


@dataclass
class ExternModel:
    fqn: str
    extern: str  # "meter", "counter", "register"
    args: list[object]  # the size first, as in the front end's ExternInstance


@dataclass(frozen=True)
class RegisterModel:
    fqn: str
    width: int  # 0 when not a bit<W> or int<W> register (an enum, a new type)
    signed: bool


@dataclass
class P4InfoProgram:
    tables: dict[str, TableModel] = field(default_factory=dict)
    actions: dict[str, ActionModel] = field(default_factory=dict)
    externs: dict[str, ExternModel] = field(default_factory=dict)
    registers: dict[str, RegisterModel] = field(default_factory=dict)


def _match_kind(mf: p4info_pb2.MatchField) -> str:
    if mf.WhichOneof("match") == "other_match_type":
        return mf.other_match_type
    return _MATCH_KINDS.get(mf.match_type, "unspecified")


def program_from_p4info(info: p4info_pb2.P4Info) -> P4InfoProgram:
    program = P4InfoProgram()
    action_names = {a.preamble.id: a.preamble.name for a in info.actions}
    for a in info.actions:
        program.actions[a.preamble.name] = ActionModel(
            a.preamble.name, [(p.name, p.bitwidth) for p in a.params])
    for t in info.tables:
        keys = [KeyModel(mf.name, _match_kind(mf), mf.bitwidth) for mf in t.match_fields]
        actions = [action_names[r.id] for r in t.action_refs if r.id in action_names]
        program.tables[t.preamble.name] = TableModel(t.preamble.name, keys, actions,
                                                     t.implementation_id != 0,
                                                     t.is_const_table)
    for m in info.meters:
        program.externs[m.preamble.name] = ExternModel(m.preamble.name, "meter", [m.size])
    for c in info.counters:
        program.externs[c.preamble.name] = ExternModel(c.preamble.name, "counter", [c.size])
    for r in info.registers:
        spec = r.type_spec
        kind = spec.bitstring.WhichOneof("type_spec") if spec.HasField("bitstring") else None
        width = getattr(spec.bitstring, kind).bitwidth if kind in ("bit", "int") else 0
        program.externs[r.preamble.name] = ExternModel(r.preamble.name, "register", [r.size])
        program.registers[r.preamble.name] = RegisterModel(r.preamble.name, width,
                                                           kind == "int")
    return program
