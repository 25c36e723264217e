"""P4Info generation (``ina p4c --p4runtime-files``), as p4c's P4Runtime serializer does it
for v1model.

p4c serializes the program as its front end leaves it, which explains most of the rules
followed here:

* Tables that are never applied and actions that nothing references are gone (p4c's
  ``RemoveAllUnusedDeclarations``); extern instances stay even when unused.
* A table without ``default_action`` gets ``default_action = NoAction()`` and, unless
  listed, ``@defaultonly NoAction`` at the end of its actions (``CreateBuiltins``).
* Sub-controls are inlined into the control that applies them and top-level actions are
  copied into every control that uses them, in front of its own declarations.
* Entries are listed in the order the serializer visits the evaluated program: blocks
  breadth first (top-level instances, then the V1Switch arguments in order, then the
  tables and extern instances of each block in declaration order); a control's actions
  and digests are listed when the control is visited, a table's direct counter, direct
  meter and in-place action profile when the table is.

Ids and aliases come from ``switch.frontend.p4info_ids``. ``assign_ids`` stores them in
the ``Program``; ``build_p4info`` recomputes them (the computation is deterministic), so
it also works on a Program whose ids were never assigned.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2, p4types_pb2

from switch.frontend import ast as A
from switch.frontend import p4info_ids as ids
from switch.frontend import types as T
from switch.frontend.check.instantiate import folded_value
from switch.frontend.check.walk_expressions import calls_in, child_fields, walk_syntax
from switch.frontend.diagnostics import Diagnostics
from switch.frontend.p4info_ids import IdError, SymbolTable
from switch.frontend.program import (
    ActionInstance,
    BlockInstance,
    ExternInstance,
    Program,
    TableInstance,
    ValueSetInstance,
)

__all__ = ["assign_ids", "build_p4info", "p4info_text"]

TEXT_HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"

DEFAULT_TABLE_SIZE = 1024  # v1model's default when a table has no (or a zero) size
_V1SWITCH_ORDER = ("p", "vr", "ig", "eg", "ck", "dep")

_EXTERN_KINDS = {
    "counter": ids.COUNTER,
    "direct_counter": ids.DIRECT_COUNTER,
    "meter": ids.METER,
    "direct_meter": ids.DIRECT_METER,
    "register": ids.REGISTER,
    "action_profile": ids.ACTION_PROFILE,
    "action_selector": ids.ACTION_PROFILE,
}

# Constructor parameter positions in v1model.p4, used when the declaration is unknown.
_CTOR_POSITIONS = {
    ("counter", "size"): 0,
    ("counter", "type"): 1,
    ("meter", "size"): 0,
    ("meter", "type"): 1,
    ("direct_counter", "type"): 0,
    ("direct_meter", "type"): 0,
    ("register", "size"): 0,
    ("action_profile", "size"): 0,
    ("action_selector", "size"): 1,
}

_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}

_COUNTER_UNITS = {
    "packets": p4info_pb2.CounterSpec.PACKETS,
    "bytes": p4info_pb2.CounterSpec.BYTES,
    "packets_and_bytes": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNITS = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}

# Annotations P4Info represents elsewhere (names, ids, documentation).
_NOT_LISTED = frozenset({"name", "id", "brief", "description"})
# Annotations whose bodies p4c parses into expressions; other annotation bodies stay
# token lists, which p4c prints separated by single spaces.
_PARSED_ANNOTATIONS = frozenset(
    {
        "name", "id", "brief", "description", "noWarn", "deprecated", "controller_header",
        "p4runtime_translation", "max_group_size", "selector_size_semantics",
        "max_member_weight", "match", "priority", "length", "hidden", "tableonly",
        "defaultonly", "atomic", "optional", "pure", "noSideEffects", "synchronous",
        "field_list", "pkginfo", "platform_property", "metadata", "alias",
    }
)  # fmt: skip
_TOKEN = re.compile(
    r'"(?:\\.|[^"\\])*"|[A-Za-z0-9_]+|&&&|\.\.|<<|>>|==|!=|<=|>=|&&|\|\||\+\+|\|\+\||\|-\||\S'
)


# ------------------------------------------------------------------------- public API


def assign_ids(program: Program, diags: Diagnostics) -> None:
    """Fill the ``id`` of every table, action, extern, value set, digest and controller
    header of ``program`` with the id p4c gives it, and report invalid ``@id``s.

    Objects p4c would not put in P4Info (unused tables and actions) get ids too, hashed
    after the others so that they cannot change any id P4Info lists. Two objects of one
    kind that P4Info would list under the same name are errors, as in p4c."""
    model = _Analyzer(program, diags).run()
    _report_duplicate_names(_Builder(program, model).build(), program, diags)
    symbols = model.symbols
    targets: list[tuple[object, int, str]] = []
    targets += [(t, ids.TABLE, t.fqn) for t in program.tables.values()]
    targets += [(a, ids.ACTION, a.fqn) for a in program.actions.values()]
    for e in program.externs.values():
        kind = _EXTERN_KINDS.get(e.extern)
        if kind is None:
            e.id = 0  # not a P4Runtime object (Checksum16, ...)
        else:
            targets.append((e, kind, model.resource_names.get(id(e), e.fqn)))
    targets += [(v, ids.VALUE_SET, v.fqn) for v in program.value_sets.values()]
    targets += [(d, ids.DIGEST, _type_cp_name(d.type) or d.name)
                for d in program.digests.values()]
    targets += [(h, ids.CONTROLLER_HEADER, _type_cp_name(h.type) or h.type.name)
                for h in program.controller_headers.values()]
    for _, kind, name in targets:
        if not symbols.contains(kind, name):
            symbols.add(kind, name)
    symbols.assign()
    for obj, kind, name in targets:
        obj.id = symbols.id(kind, name)  # type: ignore[attr-defined]


# The P4Info fields p4c checks for duplicate names, with the word its message uses.
_NAMED_OBJECTS = (
    ("tables", "table"),
    ("actions", "action"),
    ("action_profiles", "action profile"),
    ("counters", "counter"),
    ("direct_counters", "direct counter"),
    ("meters", "meter"),
    ("direct_meters", "direct meter"),
    ("controller_packet_metadata", "controller packet metadata"),
    ("value_sets", "value set"),
    ("registers", "register"),
    ("digests", "digest"),
)


_SHADOWED_FIELDS = {
    ids.TABLE: "tables",
    ids.VALUE_SET: "value_sets",
    ids.ACTION_PROFILE: "action_profiles",
    ids.COUNTER: "counters",
    ids.DIRECT_COUNTER: "direct_counters",
    ids.METER: "meters",
    ids.DIRECT_METER: "direct_meters",
    ids.REGISTER: "registers",
}


def _report_duplicate_names(p4info: p4info_pb2.P4Info, program: Program,
                            diags: Diagnostics) -> None:
    """p4c's check of the finished P4Info: one name per object of each kind (two
    instances of a control applied directly through its type, ``C.apply()`` twice, both
    take the name ``C``). The objects instantiation found under a name already taken
    count as the second of the same name."""
    extra: dict[str, list[str]] = {}
    for obj in program.shadowed:
        if isinstance(obj, TableInstance):
            kind: int | None = ids.TABLE
        elif isinstance(obj, ValueSetInstance):
            kind = ids.VALUE_SET
        else:
            kind = _EXTERN_KINDS.get(obj.extern)
        if kind is not None:
            extra.setdefault(_SHADOWED_FIELDS[kind], []).append(obj.fqn)
    groups: list[tuple[str, list[str]]] = [
        (word, [m.preamble.name for m in getattr(p4info, name)] + extra.get(name, []))
        for name, word in _NAMED_OBJECTS
    ]
    groups += [(e.extern_type_name, [i.preamble.name for i in e.instances])
               for e in p4info.externs]
    count = 0
    for word, names in groups:
        seen: set[str] = set()
        for name in names:
            if name in seen:
                diags.error(None, f"Name '{name}' is used for multiple {word} objects in the "
                            "P4Info message", kind="duplicate")
                count += 1
            seen.add(name)
    if count:
        diags.error(None, f"Found {count} duplicate name(s) in the P4Info", kind="duplicate")


def build_p4info(program: Program) -> p4info_pb2.P4Info:
    """The P4Info message p4c's ``--p4runtime-files`` writes for ``program``."""
    model = _Analyzer(program, Diagnostics()).run()
    return _Builder(program, model).build()


def p4info_text(program: Program) -> str:
    """``build_p4info`` in protobuf text format, with the header lines p4c writes."""
    return TEXT_HEADER + text_format.MessageToString(build_p4info(program))


# -------------------------------------------------------------------------- helpers


def _flat_fields(fields: Iterable[A.Field], prefix: str = "") -> Iterator[tuple[str, A.Field]]:
    """A header's fields with those of its struct fields in their place, each with the
    path to it (p4c's mid end flattens such a header, ``s b`` into ``b.x``, before it
    writes the P4Info)."""
    for f in fields:
        t = f.type_ref.resolved
        if isinstance(t, T.Struct) and isinstance(t.decl, A.StructDecl):
            yield from _flat_fields(t.decl.fields, f"{prefix}{f.name}.")
        else:
            yield prefix, f


def _annotation(annos: Iterable[A.Annotation], name: str) -> A.Annotation | None:
    for a in annos:
        if a.name == name:
            return a
    return None


def _annotation_string(a: A.Annotation | None) -> str | None:
    """The string argument of ``@name("x")``-like annotations."""
    if a is None:
        return None
    if a.body and isinstance(a.body[0], A.StringLit):
        return a.body[0].value
    m = re.fullmatch(r'\s*"((?:\\.|[^"\\])*)"\s*', a.raw or "")
    if m:
        return re.sub(r"\\(.)", r"\1", m.group(1))
    return None


def _annotation_int(a: A.Annotation) -> int | None:
    """The integer argument of ``@id(5)``-like annotations."""
    if a.body and isinstance(a.body[0], A.IntLit):
        return a.body[0].value
    text = (a.raw or "").strip()
    m = re.fullmatch(r"(?:\d+[ws])?(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9_]+)", text)
    if m is None:
        return None
    return int(m.group(1).replace("_", ""), 0)


def _cp_name(name: str, annos: Iterable[A.Annotation]) -> str:
    """A declaration's control-plane name: its ``@name`` (without a leading "."),
    else its own name."""
    value = _annotation_string(_annotation(annos, "name"))
    if value is None:
        return name
    return value[1:] if value.startswith(".") else value


def _type_cp_name(t: T.Type) -> str | None:
    if isinstance(t, (T.Struct, T.Header, T.HeaderUnion, T.Enum, T.SerEnum)):
        annos = getattr(t.decl, "annotations", None) or []
        return _cp_name(t.name, annos)
    if isinstance(t, T.NewType):
        return t.name
    return None


def _expr_text(e: A.Expr) -> str:
    if isinstance(e, A.StringLit):
        return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(e, A.IntLit):
        return e.text or str(e.value)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.Name):
        return ("." if e.top_level else "") + e.name
    from switch.frontend.check.print_expressions import expr_text

    return expr_text(e)


def _annotation_text(a: A.Annotation) -> str:
    """An annotation as p4c's ToP4 prints it into P4Info ``annotations``."""
    if a.name in _PARSED_ANNOTATIONS:
        if a.body:
            return f"@{a.name}(" + ", ".join(_expr_text(e) for e in a.body) + ")"
        raw = (a.raw or "").strip()
        return f"@{a.name}({raw})" if raw else f"@{a.name}"
    text = a.raw if a.raw else ", ".join(_expr_text(e) for e in a.body)
    tokens = _TOKEN.findall(text or "")
    return f"@{a.name}(" + " ".join(tokens) + ")" if tokens else f"@{a.name}"


def _add_annotations(message: object, annos: Iterable[A.Annotation],
                     skip: Iterable[str] = ()) -> None:
    """A P4Info message's ``annotations`` (those p4c lists, as it prints them) and
    ``structured_annotations`` (every ``@name[...]``, its values as p4c serializes
    them)."""
    skipped = _NOT_LISTED | set(skip)
    for a in annos:
        if a.structured:
            _structured_annotation(message.structured_annotations.add(), a)  # type: ignore[attr-defined]
        elif a.name not in skipped:
            message.annotations.append(_annotation_text(a))  # type: ignore[attr-defined]


def _structured_annotation(msg: p4types_pb2.StructuredAnnotation, a: A.Annotation) -> None:
    msg.name = a.name
    if a.kv:
        for key, value in a.kv.items():
            pair = msg.kv_pair_list.kv_pairs.add()
            pair.key = key
            _structured_value(pair.value, value)
    else:
        msg.expression_list.SetInParent()
        for value in a.body:
            _structured_value(msg.expression_list.expressions.add(), value)


def _structured_value(msg: p4types_pb2.Expression, e: A.Expr) -> None:
    """A literal of a structured annotation (p4c's type checker allows nothing else)."""
    if isinstance(e, A.Unary) and e.op == "-" and isinstance(e.expr, A.IntLit):
        msg.int64_value = -e.expr.value
    elif isinstance(e, A.IntLit):
        msg.int64_value = e.value
    elif isinstance(e, A.BoolLit):
        msg.bool_value = e.value
    elif isinstance(e, A.StringLit):
        msg.string_value = e.value


def _set_doc(message: object, annos: Iterable[A.Annotation]) -> None:
    brief = description = None
    for a in annos:
        if a.name == "brief":
            brief = _annotation_string(a) or ""
        elif a.name == "description":
            description = _annotation_string(a) or ""
    if brief is None and description is None:
        return
    doc = message.doc  # type: ignore[attr-defined]
    doc.SetInParent()
    if brief is not None:
        doc.brief = brief
    if description is not None:
        doc.description = description


def _set_preamble(
    preamble: p4info_pb2.Preamble,
    id_: int,
    name: str,
    alias: str,
    annos: Iterable[A.Annotation],
    skip: Iterable[str] = (),
) -> None:
    annos = list(annos)
    preamble.id = id_
    preamble.name = name
    preamble.alias = alias
    _add_annotations(preamble, annos, skip)
    _set_doc(preamble, annos)


def _field_ids(annotation_lists: list[list[A.Annotation]], report: Callable[[A.Pos, str], None],
               where: list[A.Pos]) -> list[int]:
    """Ids of match fields, action parameters and header fields: ``@id`` values first,
    then 1, 2, ... by position, skipping ids already taken (p4c's FieldIdAllocator)."""
    explicit: list[int | None] = []
    taken: set[int] = set()
    for annos, pos in zip(annotation_lists, where, strict=True):
        anno = _annotation(annos, "id")
        value = _annotation_int(anno) if anno is not None else None
        if anno is not None and value is None:
            report(anno.pos, "@id should be an unsigned integer")
        if value is not None:
            if value == 0:
                report(anno.pos if anno else pos, "0 is not a valid @id value")
            elif value in taken:
                report(anno.pos if anno else pos, f"@id {value} is used multiple times")
            taken.add(value)
        explicit.append(value)
    result: list[int] = []
    index = 1
    for value in explicit:
        if value is not None:
            index += 1
            result.append(value)
            continue
        while index in taken:
            index += 1
        taken.add(index)
        result.append(index)
    return result


def _value_bytes(value: int, width: int) -> bytes:
    """A value (two's complement for a negative one) as P4Runtime bytes of the full
    width, ``(width + 7) // 8`` bytes, as p4c writes action arguments and enum values."""
    size = max(1, (width + 7) // 8)
    return (value & ((1 << width) - 1)).to_bytes(size, "big")


# --------------------------------------------------------------------- AST walking

def _live_walk(node: object, block: BlockInstance) -> Iterator[A.Node]:
    """``walk_syntax`` without the branches of an ``if`` whose condition the block's
    constructor arguments decide (p4c folds them away, with the tables only they
    apply)."""
    if isinstance(node, A.If):
        taken = folded_value(node.cond, block)
        if isinstance(taken, bool):
            yield node
            yield from walk_syntax(node.cond)
            branch = node.then if taken else node.other
            yield from _live_walk(branch, block)
            return
    if isinstance(node, A.Node):
        yield node
        for name in child_fields(type(node)):
            yield from _live_walk(getattr(node, name, None), block)
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from _live_walk(item, block)


def _live_calls(node: object, block: BlockInstance) -> Iterator[A.Call]:
    for n in _live_walk(node, block):
        if isinstance(n, A.Call):
            yield n


# ------------------------------------------------------------------------ analysis


@dataclass(eq=False)
class _Action:
    fqn: str
    decl: A.ActionDecl
    inst: ActionInstance | None


@dataclass(eq=False)
class _ActionRef:
    action: _Action
    annotations: list[A.Annotation]


@dataclass(eq=False)
class _Resource:
    """A direct counter/meter or an action profile a table names in a property."""

    name: str
    extern: str  # "direct_counter", "action_selector", ...
    inst: ExternInstance | None
    args: dict[str, object]  # constructor arguments by parameter name
    annotations: list[A.Annotation]
    in_place: bool


@dataclass(eq=False)
class _Table:
    inst: TableInstance
    refs: list[_ActionRef]
    default: _Action | None
    default_args: list[int]
    hidden: bool
    implementation: _Resource | None = None
    direct_counter: _Resource | None = None
    direct_meter: _Resource | None = None


@dataclass(eq=False)
class _Digest:
    name: str
    type: T.Type


@dataclass(eq=False)
class _ControllerHeader:
    decl: A.HeaderDecl
    name: str  # the header type's control-plane name (the symbol)
    kind: str  # "packet_in" / "packet_out": the P4Info name


@dataclass
class _Model:
    symbols: SymbolTable
    # P4Info order, one entry per object (actions and digests deduplicated by name).
    actions: list[_Action] = field(default_factory=list)
    hidden_actions: set[str] = field(default_factory=set)
    # actions listed without parameters: only called directly, never by a table
    paramless_actions: set[str] = field(default_factory=set)
    # Level-3 (and top-level) visits, in order: tables and extern instances.
    visits: list[_Table | ExternInstance] = field(default_factory=list)
    value_sets: list[ValueSetInstance] = field(default_factory=list)
    digests: list[_Digest] = field(default_factory=list)
    controller_headers: list[_ControllerHeader] = field(default_factory=list)
    profile_tables: dict[str, set[str]] = field(default_factory=dict)
    # P4Info names of extern instances constructed in a table property, which P4Info
    # names after the property's @name rather than by the instance's fqn.
    resource_names: dict[int, str] = field(default_factory=dict)
    has_type_info: bool = False


class _Analyzer:
    """Works out what P4Info lists, in which order, and the symbol table of ids."""

    def __init__(self, program: Program, diags: Diagnostics):
        self.program = program
        self.diags = diags
        self.symbols = SymbolTable()
        self.model = _Model(self.symbols)
        self._tables = {(id(t.decl), id(t.block)): t for t in program.tables.values()}
        self._actions: dict[tuple[int, int], ActionInstance] = {}
        for a in program.actions.values():
            self._actions[(id(a.decl), id(a.block) if a.block is not None else 0)] = a
        self._externs: dict[tuple[int, int], ExternInstance] = {}
        for e in program.externs.values():
            self._externs[(id(e.decl), id(e.block) if e.block is not None else 0)] = e
        self._externs_by_fqn = {e.fqn: e for e in program.externs.values()}
        self._value_sets = {(id(v.decl), id(v.block)): v for v in program.value_sets.values()}
        self._global_actions: dict[int, A.ActionDecl] = {
            id(d): d for d in program.decls if isinstance(d, A.ActionDecl)
        }
        self._action_records: dict[tuple[int, int], _Action] = {}
        self._digest_autonames: dict[int, str] = {}

    # -- reporting

    def _error(self, pos: A.Pos | None, message: str) -> None:
        self.diags.error(pos, message)

    def _explicit_id(self, kind: int, decl: A.Declaration | None) -> int | None:
        anno = _annotation(decl.annotations, "id") if decl is not None else None
        if anno is None or decl is None:
            return None
        value = _annotation_int(anno)
        try:
            if value is None:
                raise IdError("@id should be an unsigned integer")
            return ids.explicit_id(kind, value)
        except IdError as e:
            self.diags.error(decl.pos, f"{decl.name}: {e}")
            return None

    def _add_symbol(self, kind: int, name: str, decl: A.Declaration | None = None) -> None:
        """Record a symbol, with the ``@id`` of its declaration. As in p4c, an id given
        twice is reported without a position."""
        if self.symbols.contains(kind, name):
            return
        wanted = self._explicit_id(kind, decl)
        self.symbols.add(kind, name, wanted, lambda msg: self._error(None, msg))

    # -- lookups

    def _action(self, decl: A.ActionDecl, block: BlockInstance | None) -> _Action:
        """The action ``decl`` refers to when used in ``block``."""
        is_global = id(decl) in self._global_actions
        key = (id(decl), 0 if is_global or block is None else id(block))
        record = self._action_records.get(key)
        if record is not None:
            return record
        inst = self._actions.get(key)
        if inst is None and not is_global and block is not None:
            inst = self._actions.get((id(decl), 0))
        named = self.program.instance_names.get((id(decl), block.fqn)) if block else None
        if inst is not None:
            fqn = inst.fqn
        elif named is not None:
            fqn = named
        elif is_global or block is None:
            fqn = _cp_name(decl.name, decl.annotations)
        else:
            given = _annotation_string(_annotation(decl.annotations, "name"))
            if given is not None and given.startswith("."):
                fqn = given[1:]
            else:
                fqn = f"{block.fqn}.{given or decl.name}"
        record = _Action(fqn, decl, inst)
        self._action_records[key] = record
        return record

    def _is_global(self, action: _Action) -> bool:
        return id(action.decl) in self._global_actions

    def _no_action(self) -> _Action | None:
        for d in self.program.decls:
            if isinstance(d, A.ActionDecl) and d.name == "NoAction":
                return self._action(d, None)
        return None

    # -- blocks

    def _pipeline(self) -> list[BlockInstance]:
        blocks = self.program.pipeline
        if set(blocks) == set(_V1SWITCH_ORDER):
            return [blocks[k] for k in _V1SWITCH_ORDER]
        return list(blocks.values())

    @staticmethod
    def _body(block: BlockInstance) -> object:
        decl = block.decl
        return decl.body if isinstance(decl, A.ControlDecl) else decl.states

    def _applied_children(self, block: BlockInstance) -> set[str]:
        """Local sub-block instances that ``block`` applies (unapplied ones are removed
        by p4c, being neither tables nor extern instances)."""
        names = set()
        for call in _live_calls(self._body(block), block):
            target = call.target
            if isinstance(target, A.CallSubApply):
                names.add(target.instance.name)
        return names

    def _flat_locals(self, block: BlockInstance, seen: set[int] | None = None
                     ) -> list[tuple[A.Declaration, BlockInstance]]:
        """``block``'s local declarations with applied sub-blocks inlined in place, each
        block once (one passed to two others as a constructor argument is applied by
        both)."""
        seen = set() if seen is None else seen
        if id(block) in seen:
            return []
        seen.add(id(block))
        applied = self._applied_children(block)
        out: list[tuple[A.Declaration, BlockInstance]] = []
        seen_names = set()
        for d in block.decl.locals:
            child = block.children.get(d.name) if isinstance(d, A.Instantiation) else None
            if child is not None:
                seen_names.add(d.name)
                if d.name in applied:
                    out.extend(self._flat_locals(child, seen))
                continue
            out.append((d, block))
        for name, child in block.children.items():
            if name not in seen_names and name in applied:
                out.extend(self._flat_locals(child, seen))
        return out

    def _body_calls(self, block: BlockInstance) -> Iterator[tuple[A.Call, BlockInstance]]:
        """Calls in the block's body, with applied sub-block bodies at their call sites."""
        for call in _live_calls(self._body(block), block):
            yield call, block
            target = call.target
            if isinstance(target, A.CallSubApply):
                child = block.children.get(target.instance.name)
                if child is not None:
                    yield from self._body_calls(child)

    # -- tables

    def _table_actions(self, table: TableInstance) -> list[_ActionRef]:
        decl = table.decl
        refs: list[_ActionRef] = []
        for i, ref in enumerate(decl.actions):
            action = self._resolve_ref(ref, table, i)
            if action is not None:
                refs.append(_ActionRef(action, list(ref.annotations)))
        if decl.default_action is None and not any(r.action.fqn == "NoAction" for r in refs):
            no_action = self._no_action()
            if no_action is not None:
                refs.append(_ActionRef(no_action, [A.Annotation(decl.pos, "defaultonly")]))
        return refs

    def _resolve_ref(self, ref: A.ActionRef, table: TableInstance, index: int) -> _Action | None:
        if ref.action is not None:
            return self._action(ref.action, table.block)
        if index < len(table.actions):
            fqn = table.actions[index]
            inst = self.program.actions.get(fqn)
            if inst is not None:
                return self._action(inst.decl, inst.block)
        return None

    def _default_action(self, table: TableInstance, refs: list[_ActionRef]) -> _Action | None:
        ref = table.decl.default_action
        if ref is not None and ref.action is not None:
            return self._action(ref.action, table.block)
        for r in refs:
            if r.action.fqn == table.default_action:
                return r.action
        inst = self.program.actions.get(table.default_action)
        if inst is not None:
            return self._action(inst.decl, inst.block)
        return self._no_action() if ref is None else None

    def _table_actions_used(self, table: TableInstance, refs: list[_ActionRef],
                            default: _Action | None) -> list[_Action]:
        used = [r.action for r in refs]
        if default is not None:
            used.append(default)
        for entry in table.decl.entries:
            if entry.action.action is not None:
                used.append(self._action(entry.action.action, table.block))
        return used

    def _property(self, table: TableInstance, name: str) -> A.TableProperty | None:
        for p in table.decl.properties:
            if p.name == name:
                return p
        return None

    def _resource(self, table: TableInstance, prop_name: str, fqn: str | None) -> _Resource | None:
        """The extern a table property names or constructs in place."""
        prop = self._property(table, prop_name)
        if prop is None and fqn is None:
            return None
        value = prop.value if prop is not None else None
        if value is None or isinstance(value, A.Name):
            inst = self._externs_by_fqn.get(fqn) if fqn else None
            target = value.decl if isinstance(value, A.Name) else None
            if inst is None and isinstance(target, A.Instantiation):
                inst = self._externs.get((id(target), id(table.block)))
                if inst is None:
                    inst = self._externs.get((id(target), 0))
            if inst is None:
                return None
            return _Resource(inst.fqn, inst.extern, inst, _ctor_args(inst),
                             list(inst.decl.annotations), in_place=False)
        assert prop is not None
        name = _annotation_string(_annotation(prop.annotations, "name"))
        if name is None:
            self._error(prop.pos, f"Table '{table.fqn}' has an anonymous table property "
                        f"'{prop_name}' with no name annotation, which is not supported "
                        "by P4Runtime")
            return None
        name = name[1:] if name.startswith(".") else name
        inst = self._externs_by_fqn.get(name) or (self._externs_by_fqn.get(fqn) if fqn else None)
        extern, args = _constructor_call(value)
        if inst is not None:
            extern, args = inst.extern, _ctor_args(inst)
        return _Resource(name, extern, inst, args, list(prop.annotations), in_place=True)

    # -- digests

    def _digest(self, call: A.Call) -> _Digest | None:
        target = call.target
        if not isinstance(target, A.CallExternFunction) or target.function.name != "digest":
            return None
        t: T.Type | None = None
        if call.type_args:
            t = call.type_args[0].resolved
        if t is None:
            data = call.resolved_args[1] if len(call.resolved_args) > 1 else None
            if data is None and len(call.args) > 1:
                data = call.args[1].value
            t = data.type if data is not None else None
        if t is None:
            return None
        name = _type_cp_name(t)
        if name is None or isinstance(t, (T.Enum, T.SerEnum, T.NewType)):
            name = self._digest_autonames.get(id(call))
            if name is None:
                name = f"digest_{len(self._digest_autonames)}"
                self._digest_autonames[id(call)] = name
        return _Digest(name, t)

    # -- the walk

    def run(self) -> _Model:
        model = self.model
        # Level 1: top-level extern instances.
        for d in self.program.decls:
            if isinstance(d, A.Instantiation):
                inst = self._externs.get((id(d), 0))
                if inst is not None:
                    self._visit_extern(inst)
        blocks = self._pipeline()
        level3: list[tuple[A.Declaration, BlockInstance, bool]] = []
        # Level 2: the blocks themselves.
        for block in blocks:
            flat = self._flat_locals(block)
            if isinstance(block.decl, A.ControlDecl):
                used_tables = self._control(block, flat)
                for d, b in flat:
                    if isinstance(d, A.TableDecl):
                        level3.append((d, b, (id(d), id(b)) in used_tables))
                    elif isinstance(d, A.Instantiation):
                        level3.append((d, b, True))
            else:
                self._parser(block, flat)
                for d, b in flat:
                    if isinstance(d, A.Instantiation):
                        level3.append((d, b, True))
        # Level 3: tables and extern instances of each block.
        for d, b, used in level3:
            if isinstance(d, A.TableDecl):
                table = self._tables.get((id(d), id(b)))
                if table is not None and used:
                    self._visit_table(table)
            else:
                inst = self._externs.get((id(d), id(b)))
                if inst is not None:
                    self._visit_extern(inst)
        # Controller headers, in declaration order.
        for d in self.program.decls:
            if isinstance(d, A.HeaderDecl):
                kind = _annotation_string(_annotation(d.annotations, "controller_header"))
                if kind is None:
                    continue
                name = _cp_name(d.name, d.annotations)
                self._add_symbol(ids.CONTROLLER_HEADER, name, d)
                if _annotation(d.annotations, "hidden") is None:
                    model.controller_headers.append(_ControllerHeader(d, name, kind))
                    if d.fields:
                        model.has_type_info = True
                    _field_ids([list(f.annotations) for f in d.fields], self._error,
                               [f.pos for f in d.fields])
        self.symbols.assign(lambda msg: self._error(None, msg))
        return model

    def _visit_extern(self, inst: ExternInstance) -> None:
        self.model.visits.append(inst)
        self.model.has_type_info = True
        kind = _EXTERN_KINDS.get(inst.extern)
        if kind is not None:
            self._add_symbol(kind, inst.fqn, inst.decl)

    def _visit_table(self, table: TableInstance) -> None:
        refs = self._table_actions(table)
        default = self._default_action(table, refs)
        hidden = _annotation(table.decl.annotations, "hidden") is not None
        record = _Table(table, refs, default, list(table.default_args), hidden)
        record.implementation = self._resource(table, "implementation", table.implementation)
        record.direct_counter = self._resource(table, "counters", table.direct_counter)
        record.direct_meter = self._resource(table, "meters", table.direct_meter)
        self._add_symbol(ids.TABLE, table.fqn, table.decl)
        for res, kind in ((record.implementation, ids.ACTION_PROFILE),
                          (record.direct_counter, ids.DIRECT_COUNTER),
                          (record.direct_meter, ids.DIRECT_METER)):
            if res is not None and res.in_place:
                self.symbols.add(kind, res.name)
                if res.inst is not None:
                    self.model.resource_names[id(res.inst)] = res.name
        if record.implementation is not None:
            self.model.profile_tables.setdefault(record.implementation.name, set()).add(table.fqn)
        self.model.visits.append(record)
        if not hidden:
            self.model.has_type_info = True
            keys = table.decl.keys
            _field_ids([list(k.annotations) for k in keys], self._error, [k.pos for k in keys])

    def _control(self, block: BlockInstance,
                 flat: list[tuple[A.Declaration, BlockInstance]]) -> set[tuple[int, int]]:
        """Visit a control: list its actions and digests. Returns the tables that are
        applied, as (id of the declaration, id of the block instance).

        p4c inlines an action called from another action into its caller, so only the
        actions of applied tables and those the body calls directly are listed; one the
        body calls loses its directionless parameters (they become locals bound to the
        call's arguments) unless a table of the control also lists it. The first control
        to list an action name decides its entry."""
        used_tables: set[tuple[int, int]] = set()  # (id(table decl), id(block))
        used: dict[int, _Action] = {}  # by id of the action record
        in_tables: set[int] = set()

        tables: dict[tuple[int, int], TableInstance] = {}
        for d, b in flat:
            if isinstance(d, A.TableDecl):
                t = self._tables.get((id(d), id(b)))
                if t is not None:
                    tables[(id(d), id(b))] = t
        body_calls = list(self._body_calls(block))
        applies = [(call, where) for call, where in body_calls]
        while applies:  # a table applied in the key of an applied table is applied too
            call, where = applies.pop()
            target = call.target
            if isinstance(target, A.CallTableApply):
                key = (id(target.table), id(where))
                if key in tables and key not in used_tables:
                    used_tables.add(key)
                    keys = [k.expr for k in target.table.keys]
                    applies += [(c, where) for c in calls_in(keys)]
        table_uses: dict[tuple[int, int], list[_Action]] = {}
        for d, b in flat:
            key = (id(d), id(b))
            if isinstance(d, A.TableDecl) and key in used_tables:
                t = tables[key]
                refs = self._table_actions(t)
                table_uses[key] = self._table_actions_used(t, refs, self._default_action(t, refs))
                for action in table_uses[key]:
                    used.setdefault(id(action), action)
                    in_tables.add(id(action))
        for call, where in body_calls:
            if isinstance(call.target, A.CallAction):
                action = self._action(call.target.action, where)
                used.setdefault(id(action), action)
        # First uses of top-level actions follow p4c's IR order: the table properties,
        # then the apply body.
        order: list[_Action] = []

        def first_use(action: _Action) -> None:
            if self._is_global(action) and action not in order:
                order.append(action)

        for d, b in flat:
            if isinstance(d, A.TableDecl) and (id(d), id(b)) in table_uses:
                for action in table_uses[(id(d), id(b))]:
                    first_use(action)
        for call, where in body_calls:
            if isinstance(call.target, A.CallAction):
                first_use(self._action(call.target.action, where))
        # The order p4c lists them in: top-level actions (copied into the control) by
        # first use, then the control's own, in declaration order.
        listed = [a for a in order if self._is_global(a)]
        own = [self._action(d, b) for d, b in flat if isinstance(d, A.ActionDecl)]
        listed += [a for a in own if id(a) in used]
        model = self.model
        names = {a.fqn for a in model.actions} | model.hidden_actions
        for action in listed:
            self._add_symbol(ids.ACTION, action.fqn, action.decl)
            if action.fqn not in names:
                names.add(action.fqn)
                if _annotation(action.decl.annotations, "hidden") is not None:
                    model.hidden_actions.add(action.fqn)
                    continue
                model.actions.append(action)
                if id(action) not in in_tables:
                    model.paramless_actions.add(action.fqn)
                    continue
                params = [p for p in action.decl.params if p.direction == ""]
                if params:
                    model.has_type_info = True
                _field_ids([list(p.annotations) for p in params], self._error,
                           [p.pos for p in params])
        # Digests (and any extern function call: p4c then creates type_info), with the
        # bodies of actions called from actions inlined at their call sites.
        calls = [c for a in listed for c in self._inlined_calls(a, block)]
        calls += [c for c, _ in body_calls]
        for call in calls:
            if isinstance(call.target, A.CallExternFunction):
                model.has_type_info = True
            digest = self._digest(call)
            if digest is not None:
                self.symbols.add(ids.DIGEST, digest.name)
                if all(d.name != digest.name for d in model.digests):
                    model.digests.append(digest)
        return used_tables

    def _inlined_calls(self, action: _Action, where: BlockInstance,
                       depth: int = 0) -> Iterator[A.Call]:
        """The calls in an action's body, a called action's calls in place of its call."""
        ctx = action.inst.block if action.inst is not None and action.inst.block else where
        for call in calls_in(action.decl.body):
            if isinstance(call.target, A.CallAction) and depth < 32:
                yield from self._inlined_calls(self._action(call.target.action, ctx), ctx,
                                               depth + 1)
            else:
                yield call

    def _parser(self, block: BlockInstance,
                flat: list[tuple[A.Declaration, BlockInstance]]) -> None:
        referenced: set[int] = set()
        blocks = {id(b): b for _, b in flat} | {id(block): block}
        for b in blocks.values():
            for n in walk_syntax(self._body(b)):
                if isinstance(n, A.Name) and isinstance(n.decl, A.ValueSetDecl):
                    referenced.add(id(n.decl))
        for d, b in flat:
            if isinstance(d, A.ValueSetDecl) and id(d) in referenced:
                vs = self._value_sets.get((id(d), id(b)))
                if vs is not None:
                    self._add_symbol(ids.VALUE_SET, vs.fqn, d)
                    self.model.value_sets.append(vs)


def _ctor_args(inst: ExternInstance) -> dict[str, object]:
    """An extern instance's constructor arguments by parameter name."""
    names: list[str] = []
    decl = inst.type.decl if inst.type is not None else None
    if isinstance(decl, A.ExternDecl):
        ctors = [m for m in decl.methods if m.name == decl.name and m.return_type is None]
        for ctor in ctors:
            if len(ctor.params) == len(inst.args):
                names = [p.name for p in ctor.params]
                break
    if not names:
        by_pos = {pos: n for (ext, n), pos in _CTOR_POSITIONS.items() if ext == inst.extern}
        names = [by_pos.get(i, f"#{i}") for i in range(len(inst.args))]
    return dict(zip(names, inst.args, strict=False))


def _constructor_call(value: A.Expr) -> tuple[str, dict[str, object]]:
    """The extern type and arguments of an in-place ``action_profile(128)``."""
    if not isinstance(value, A.Call):
        return "", {}
    callee = value.callee
    name = ""
    if isinstance(callee, A.Name):
        name = callee.name
    elif isinstance(callee, A.TypeExpr) and isinstance(callee.ref, A.NamedTypeRef):
        name = callee.ref.name
    args: dict[str, object] = {}
    for i, arg in enumerate(value.args):
        v = arg.value
        key = arg.name or next((n for (ext, n), p in _CTOR_POSITIONS.items()
                                if ext == name and p == i), f"#{i}")
        if isinstance(v, A.Cast):
            v = v.expr
        if isinstance(v, A.IntLit):
            args[key] = v.value
        elif isinstance(v, A.EnumValue):
            args[key] = v.member
        elif isinstance(v, A.Member):
            args[key] = v.name
    return name, args


def _int_arg(args: dict[str, object], name: str) -> int:
    v = args.get(name)
    if isinstance(v, A.IntLit):
        return v.value
    if isinstance(v, bool):
        return int(v)
    return v if isinstance(v, int) else 0


def _enum_arg(args: dict[str, object], name: str) -> str:
    v = args.get(name)
    if isinstance(v, A.EnumValue):
        return v.member
    if isinstance(v, A.Member):
        return v.name
    return str(v).rsplit(".", 1)[-1] if v is not None else ""


# ------------------------------------------------------------------------ building


class _TypeSpecs:
    """P4DataTypeSpec for P4 types, filling ``type_info`` with the named types used
    (p4c's TypeSpecConverter)."""

    def __init__(self, program: Program, info: p4types_pb2.P4TypeInfo):
        self.program = program
        self.info = info
        self._newtype_decls = {
            d.name: d for d in program.decls if isinstance(d, A.TypedefDecl) and d.new_type
        }

    def translation(self, t: T.Type) -> tuple[str, int | None] | None:
        """(uri, controller width or None for a string) of a @p4runtime_translation type."""
        if not isinstance(t, T.NewType):
            return None
        decl = self._newtype_decls.get(t.name)
        anno = _annotation(decl.annotations, "p4runtime_translation") if decl else None
        if anno is None:
            return None
        uri = ""
        width: int | None = None
        if anno.body:
            if isinstance(anno.body[0], A.StringLit):
                uri = anno.body[0].value
            if len(anno.body) > 1 and isinstance(anno.body[1], A.IntLit):
                width = anno.body[1].value
        else:
            parts = [p.strip() for p in (anno.raw or "").split(",")]
            if parts:
                uri = parts[0].strip('"')
            if len(parts) > 1 and re.fullmatch(r"\d+", parts[1]):
                width = int(parts[1])
        return uri, width

    def width(self, t: T.Type) -> int | None:
        """Width as P4Info states it (None for a plain enum)."""
        tr = self.translation(t)
        if tr is not None:
            return tr[1] or 0
        if isinstance(t, T.Enum):
            return None
        if isinstance(t, T.Error):
            return 0
        if isinstance(t, T.NewType):
            return self.width(t.underlying)
        try:
            return T.width_of(t)
        except TypeError:
            return 0

    @staticmethod
    def type_name(t: T.Type) -> str | None:
        return t.name if isinstance(t, T.NewType) else None

    def spec(self, t: T.Type) -> p4types_pb2.P4DataTypeSpec:
        s = p4types_pb2.P4DataTypeSpec()
        if isinstance(t, T.Bits):
            part = s.bitstring.int if t.signed else s.bitstring.bit  # type: ignore[attr-defined]
            part.bitwidth = t.width
        elif isinstance(t, T.Varbit):
            s.bitstring.varbit.max_bitwidth = t.max_width
        elif isinstance(t, T.Bool):
            s.bool.SetInParent()
        elif isinstance(t, T.Tuple):
            for e in t.elements:
                s.tuple.members.add().CopyFrom(self.spec(e))
        elif isinstance(t, T.Struct):
            s.struct.name = self._struct(t)
        elif isinstance(t, T.Header):
            s.header.name = self._header(t)
        elif isinstance(t, T.HeaderUnion):
            s.header_union.name = self._union(t)
        elif isinstance(t, T.Stack):
            if isinstance(t.element, T.HeaderUnion):
                s.header_union_stack.header_union.name = self._union(t.element)
                s.header_union_stack.size = t.size
            elif isinstance(t.element, T.Header):
                s.header_stack.header.name = self._header(t.element)
                s.header_stack.size = t.size
        elif isinstance(t, T.Enum):
            s.enum.name = self._enum(t)
        elif isinstance(t, T.SerEnum):
            s.serializable_enum.name = self._serenum(t)
        elif isinstance(t, T.Error):
            s.error.SetInParent()
            self._error()
        elif isinstance(t, T.NewType):
            s.new_type.name = self._newtype(t)
        return s

    def touch(self, t: T.Type) -> None:
        """Record the named types ``t`` uses in type_info."""
        self.spec(t)

    @staticmethod
    def _field_names(t: T.Struct | T.Header | T.HeaderUnion) -> list[str]:
        decl_fields = getattr(t.decl, "fields", None)
        names = []
        for i, f in enumerate(t.fields):
            annos = decl_fields[i].annotations if decl_fields and i < len(decl_fields) else []
            names.append(_cp_name(f.name, annos))
        return names

    def _struct(self, t: T.Struct) -> str:
        name = _type_cp_name(t) or t.name
        if name not in self.info.structs:
            spec = p4types_pb2.P4StructTypeSpec()
            for fname, f in zip(self._field_names(t), t.fields, strict=True):
                member = spec.members.add()
                member.name = fname
                member.type_spec.CopyFrom(self.spec(f.type))
            self.info.structs[name].CopyFrom(spec)
        return name

    def _flat_header_fields(self, t: T.Header | T.Struct,
                            prefix: str = "") -> list[tuple[str, T.Type]]:
        out: list[tuple[str, T.Type]] = []
        for fname, f in zip(self._field_names(t), t.fields, strict=True):
            if isinstance(f.type, T.Struct):
                out.extend(self._flat_header_fields(f.type, f"{prefix}{fname}."))
            else:
                out.append((prefix + fname, f.type))
        return out

    def _header(self, t: T.Header) -> str:
        name = _type_cp_name(t) or t.name
        if name not in self.info.headers:
            spec = p4types_pb2.P4HeaderTypeSpec()
            for fname, ftype in self._flat_header_fields(t):
                member = spec.members.add()
                member.name = fname
                inner = self.spec(ftype)
                if inner.HasField("bitstring"):
                    member.type_spec.CopyFrom(inner.bitstring)
            self.info.headers[name].CopyFrom(spec)
        return name

    def _union(self, t: T.HeaderUnion) -> str:
        name = _type_cp_name(t) or t.name
        if name not in self.info.header_unions:
            spec = p4types_pb2.P4HeaderUnionTypeSpec()
            for fname, f in zip(self._field_names(t), t.fields, strict=True):
                member = spec.members.add()
                member.name = fname
                if isinstance(f.type, T.Header):
                    member.header.name = self._header(f.type)
            self.info.header_unions[name].CopyFrom(spec)
        return name

    def _enum(self, t: T.Enum) -> str:
        name = _type_cp_name(t) or t.name
        if name not in self.info.enums:
            spec = p4types_pb2.P4EnumTypeSpec()
            for m in t.members:
                spec.members.add().name = m
            self.info.enums[name].CopyFrom(spec)
        return name

    def _serenum(self, t: T.SerEnum) -> str:
        name = _type_cp_name(t) or t.name
        if name not in self.info.serializable_enums:
            spec = p4types_pb2.P4SerializableEnumTypeSpec()
            spec.underlying_type.bitwidth = t.underlying.width
            for m, value in t.members:
                member = spec.members.add()
                member.name = m
                member.value = _value_bytes(value, t.underlying.width)
            self.info.serializable_enums[name].CopyFrom(spec)
        return name

    def _error(self) -> None:
        if not self.info.HasField("error"):
            members = sorted(self.program.errors.items(), key=lambda kv: kv[1])
            self.info.error.members.extend(m for m, _ in members)

    def _newtype(self, t: T.NewType) -> str:
        name = t.name
        if name not in self.info.new_types:
            spec = p4types_pb2.P4NewTypeSpec()
            underlying: T.Type = t
            while isinstance(underlying, T.NewType):
                underlying = underlying.underlying
            decl = self._newtype_decls.get(name)
            if decl is not None:
                _add_annotations(spec, decl.annotations, skip=("p4runtime_translation",))
            tr = self.translation(t)
            if tr is not None:
                spec.translated_type.uri = tr[0]
                if tr[1] is None:
                    spec.translated_type.sdn_string.SetInParent()
                else:
                    spec.translated_type.sdn_bitwidth = tr[1]
            else:
                spec.original_type.CopyFrom(self.spec(underlying))
            self.info.new_types[name].CopyFrom(spec)
        return name


class _Builder:
    def __init__(self, program: Program, model: _Model):
        self.program = program
        self.model = model
        self.symbols = model.symbols
        self.p4info = p4info_pb2.P4Info()
        self.types = _TypeSpecs(program, self.p4info.type_info)
        self._counters_done: set[str] = set()
        self._profiles_done: set[str] = set()

    def _report(self, pos: A.Pos, message: str) -> None:
        """Problems are reported by assign_ids; building just carries on."""

    def build(self) -> p4info_pb2.P4Info:
        self._pkg_info()
        for action in self.model.actions:
            self._action(action)
        for visit in self.model.visits:
            if isinstance(visit, _Table):
                if not visit.hidden:
                    self._table(visit)
            else:
                self._extern(visit)
        for vs in self.model.value_sets:
            self._value_set(vs)
        for digest in self.model.digests:
            self._digest(digest)
        for header in self.model.controller_headers:
            self._controller_header(header)
        if self.model.has_type_info:
            self.p4info.type_info.SetInParent()
        return self.p4info

    # -- pkg_info

    def _pkg_info(self) -> None:
        pkg = self.p4info.pkg_info
        pkg.arch = self.program.arch or "v1model"
        main = next((d for d in self.program.decls
                     if isinstance(d, A.Instantiation) and d.name == "main"), None)
        if main is None:
            return
        for a in main.annotations:
            if a.name != "pkginfo":
                continue
            pairs: dict[str, str] = {}
            for k, expr in a.kv.items():
                if isinstance(expr, A.StringLit):
                    pairs[k] = expr.value
            for m in re.finditer(r'(\w+)\s*=\s*"((?:\\.|[^"\\])*)"', a.raw or ""):
                pairs[m.group(1)] = re.sub(r"\\(.)", r"\1", m.group(2))
            for k, v in pairs.items():
                if k in ("name", "version", "organization", "contact", "url", "arch"):
                    setattr(pkg, k, v)
        _add_annotations(pkg, main.annotations, skip=("pkginfo",))
        _set_doc(pkg, main.annotations)

    # -- actions

    def _params(self, action: _Action) -> list[tuple[A.Param, T.Type | None, int | None]]:
        if action.fqn in self.model.paramless_actions:
            return []
        params = [p for p in action.decl.params if p.direction == ""]
        widths: list[int | None] = [None] * len(params)
        if action.inst is not None and len(action.inst.params) == len(params):
            widths = [w for _, w in action.inst.params]
        return [(p, p.type_ref.resolved, w) for p, w in zip(params, widths, strict=True)]

    def _action(self, action: _Action) -> None:
        msg = self.p4info.actions.add()
        _set_preamble(msg.preamble, self.symbols.id(ids.ACTION, action.fqn), action.fqn,
                      self.symbols.alias(action.fqn), action.decl.annotations)
        params = self._params(action)
        field_ids = _field_ids([list(p.annotations) for p, _, _ in params], self._report,
                               [p.pos for p, _, _ in params])
        for (p, t, width), fid in zip(params, field_ids, strict=True):
            pm = msg.params.add()
            pm.id = fid
            pm.name = _cp_name(p.name, p.annotations)
            _add_annotations(pm, p.annotations)
            _set_doc(pm, p.annotations)
            if t is not None and not isinstance(t, T.Enum):
                w = self.types.width(t)
                pm.bitwidth = w if w is not None else (width or 0)
            elif t is None and width is not None:
                pm.bitwidth = width
            if t is not None:
                self.types.touch(t)
                if isinstance(t, T.NewType):
                    pm.type_name.name = t.name
                elif isinstance(t, T.Enum):
                    pm.type_name.name = _type_cp_name(t) or t.name

    # -- tables

    def _table(self, rec: _Table) -> None:
        t = rec.inst
        msg = self.p4info.tables.add()
        _set_preamble(msg.preamble, self.symbols.id(ids.TABLE, t.fqn), t.fqn,
                      self.symbols.alias(t.fqn), t.decl.annotations)
        keys = list(t.keys)
        key_ids = _field_ids([list(k.element.annotations) for k in keys], self._report,
                             [k.element.pos for k in keys])
        for key, fid in zip(keys, key_ids, strict=True):
            if key.match_kind == "selector":
                continue
            mf = msg.match_fields.add()
            mf.id = fid
            mf.name = key.name
            annos = list(key.element.annotations)
            _add_annotations(mf, annos)
            _set_doc(mf, annos)
            key_type = key.element.expr.type
            if key_type is not None and (isinstance(key_type, T.Error)
                                         or self.types.translation(key_type) is not None):
                mf.bitwidth = self.types.width(key_type) or 0
            else:
                mf.bitwidth = key.width
            if key.match_kind in _MATCH_TYPES:
                mf.match_type = _MATCH_TYPES[key.match_kind]
            else:
                mf.other_match_type = key.match_kind
            if key_type is not None:
                self.types.touch(key_type)
                if isinstance(key_type, T.NewType):
                    mf.type_name.name = key_type.name
        for ref in rec.refs:
            ar = msg.action_refs.add()
            ar.id = self.symbols.id(ids.ACTION, ref.action.fqn)
            _add_annotations(ar, ref.annotations)
            names = {a.name for a in ref.annotations}
            if "tableonly" in names:
                ar.scope = p4info_pb2.ActionRef.TABLE_ONLY
            elif "defaultonly" in names:
                ar.scope = p4info_pb2.ActionRef.DEFAULT_ONLY
        if rec.default is not None:
            default_id = self.symbols.id(ids.ACTION, rec.default.fqn)
            if t.default_is_const:
                msg.const_default_action_id = default_id
            call = msg.initial_default_action
            call.action_id = default_id
            params = self._params(rec.default)
            param_ids = _field_ids([list(p.annotations) for p, _, _ in params], self._report,
                                   [p.pos for p, _, _ in params])
            for (_, ptype, width), pid, value in zip(params, param_ids, rec.default_args,
                                                     strict=False):
                w = width if width is not None else (self.types.width(ptype) if ptype else 0)
                arg = call.arguments.add()
                arg.param_id = pid
                arg.value = _value_bytes(int(value), w or 0)
        if rec.implementation is not None:
            msg.implementation_id = self.symbols.id(ids.ACTION_PROFILE, rec.implementation.name)
            if rec.implementation.in_place:
                self._action_profile(rec.implementation)
        if rec.direct_counter is not None:
            msg.direct_resource_ids.append(
                self.symbols.id(ids.DIRECT_COUNTER, rec.direct_counter.name))
            self._direct(rec.direct_counter, t)
        if rec.direct_meter is not None:
            msg.direct_resource_ids.append(
                self.symbols.id(ids.DIRECT_METER, rec.direct_meter.name))
            self._direct(rec.direct_meter, t)
        msg.size = t.size if t.size else DEFAULT_TABLE_SIZE
        timeout = next((p for p in t.decl.properties if p.name == "support_timeout"), None)
        if timeout is not None and isinstance(timeout.value, A.BoolLit) and timeout.value.value:
            msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        if t.decl.entries_const:
            msg.is_const_table = True
        if t.decl.entries:
            msg.has_initial_entries = True

    def _direct(self, res: _Resource, table: TableInstance) -> None:
        table_id = self.symbols.id(ids.TABLE, table.fqn)
        unit = _enum_arg(res.args, "type")
        if res.extern == "direct_counter":
            c = self.p4info.direct_counters.add()
            _set_preamble(c.preamble, self.symbols.id(ids.DIRECT_COUNTER, res.name), res.name,
                          self.symbols.alias(res.name), res.annotations)
            c.spec.unit = _COUNTER_UNITS.get(unit, p4info_pb2.CounterSpec.UNSPECIFIED)
            c.direct_table_id = table_id
        elif res.extern == "direct_meter":
            m = self.p4info.direct_meters.add()
            _set_preamble(m.preamble, self.symbols.id(ids.DIRECT_METER, res.name), res.name,
                          self.symbols.alias(res.name), res.annotations)
            m.spec.unit = _METER_UNITS.get(unit, p4info_pb2.MeterSpec.UNSPECIFIED)
            m.direct_table_id = table_id

    def _action_profile(self, res: _Resource) -> None:
        with_selector = res.extern == "action_selector"
        ap = self.p4info.action_profiles.add()
        skip = ("max_group_size", "selector_size_semantics", "max_member_weight")
        _set_preamble(ap.preamble, self.symbols.id(ids.ACTION_PROFILE, res.name), res.name,
                      self.symbols.alias(res.name), res.annotations, skip)
        tables = sorted(self.model.profile_tables.get(res.name, ()), key=lambda n: n.encode())
        ap.table_ids.extend(self.symbols.id(ids.TABLE, n) for n in tables)
        ap.with_selector = with_selector
        ap.size = _int_arg(res.args, "size")
        if not with_selector:
            return
        anno = _annotation(res.annotations, "max_group_size")
        if anno is not None:
            ap.max_group_size = _annotation_int(anno) or 0
        semantics = _annotation_string(_annotation(res.annotations, "selector_size_semantics"))
        if semantics == "sum_of_weights":
            ap.sum_of_weights.SetInParent()
        elif semantics == "sum_of_members":
            ap.sum_of_members.SetInParent()
            weight = _annotation(res.annotations, "max_member_weight")
            if weight is not None:
                ap.sum_of_members.max_member_weight = _annotation_int(weight) or 0

    # -- extern instances

    def _index_type_name(self, inst: ExternInstance, index: int) -> str | None:
        args = inst.type.type_args if inst.type is not None else ()
        if len(args) > index:
            self.types.touch(args[index])
            return _TypeSpecs.type_name(args[index])
        return None

    def _extern(self, inst: ExternInstance) -> None:
        args = _ctor_args(inst)
        name = inst.fqn
        annos = inst.decl.annotations
        if inst.extern == "counter":
            c = self.p4info.counters.add()
            _set_preamble(c.preamble, self.symbols.id(ids.COUNTER, name), name,
                          self.symbols.alias(name), annos)
            c.spec.unit = _COUNTER_UNITS.get(_enum_arg(args, "type"),
                                             p4info_pb2.CounterSpec.UNSPECIFIED)
            c.size = _int_arg(args, "size")
            index_name = self._index_type_name(inst, 0)
            if index_name:
                c.index_type_name.name = index_name
        elif inst.extern == "meter":
            m = self.p4info.meters.add()
            _set_preamble(m.preamble, self.symbols.id(ids.METER, name), name,
                          self.symbols.alias(name), annos)
            m.spec.unit = _METER_UNITS.get(_enum_arg(args, "type"),
                                           p4info_pb2.MeterSpec.UNSPECIFIED)
            m.size = _int_arg(args, "size")
            index_name = self._index_type_name(inst, 0)
            if index_name:
                m.index_type_name.name = index_name
        elif inst.extern == "register":
            r = self.p4info.registers.add()
            _set_preamble(r.preamble, self.symbols.id(ids.REGISTER, name), name,
                          self.symbols.alias(name), annos)
            if inst.type is not None and inst.type.type_args:
                r.type_spec.CopyFrom(self.types.spec(inst.type.type_args[0]))
            r.size = _int_arg(args, "size")
            index_name = self._index_type_name(inst, 1)
            if index_name:
                r.index_type_name.name = index_name
        elif inst.extern in ("action_profile", "action_selector"):
            self._action_profile(_Resource(name, inst.extern, inst, args, list(annos), False))

    # -- value sets, digests, controller headers

    def _value_set(self, vs: ValueSetInstance) -> None:
        msg = self.p4info.value_sets.add()
        _set_preamble(msg.preamble, self.symbols.id(ids.VALUE_SET, vs.fqn), vs.fqn,
                      self.symbols.alias(vs.fqn), vs.decl.annotations)
        msg.size = vs.size
        et = vs.element
        if isinstance(et, T.Bits):
            m = msg.match.add()
            m.id = 1
            m.bitwidth = et.width
            m.match_type = p4info_pb2.MatchField.EXACT
        elif isinstance(et, T.Struct):
            decl_fields = getattr(et.decl, "fields", None) or []
            annos = [list(decl_fields[i].annotations) if i < len(decl_fields) else []
                     for i in range(len(et.fields))]
            poses = [decl_fields[i].pos if i < len(decl_fields) else vs.decl.pos
                     for i in range(len(et.fields))]
            field_ids = _field_ids(annos, self._report, poses)
            names = _TypeSpecs._field_names(et)
            for f, fannos, fid, fname in zip(et.fields, annos, field_ids, names, strict=True):
                if not isinstance(f.type, T.Bits):
                    continue
                m = msg.match.add()
                m.id = fid
                m.name = fname
                m.bitwidth = f.type.width
                kind_anno = _annotation(fannos, "match")
                kind = "exact"
                if kind_anno is not None:
                    if kind_anno.body and isinstance(kind_anno.body[0], A.Name):
                        kind = kind_anno.body[0].name
                    elif kind_anno.raw:
                        kind = kind_anno.raw.strip()
                if kind in _MATCH_TYPES:
                    m.match_type = _MATCH_TYPES[kind]
                else:
                    m.other_match_type = kind
                _add_annotations(m, fannos, skip=("match",))
                _set_doc(m, fannos)
        elif isinstance(et, T.SerEnum):
            for i, (member, _) in enumerate(et.members, start=1):
                m = msg.match.add()
                m.id = i
                m.name = member
                m.bitwidth = et.underlying.width
                m.match_type = p4info_pb2.MatchField.EXACT

    def _digest(self, digest: _Digest) -> None:
        msg = self.p4info.digests.add()
        _set_preamble(msg.preamble, self.symbols.id(ids.DIGEST, digest.name), digest.name,
                      self.symbols.alias(digest.name), ())
        msg.type_spec.CopyFrom(self.types.spec(digest.type))

    def _controller_header(self, h: _ControllerHeader) -> None:
        msg = self.p4info.controller_packet_metadata.add()
        _set_preamble(msg.preamble, self.symbols.id(ids.CONTROLLER_HEADER, h.name), h.kind,
                      h.kind, h.decl.annotations)
        fields = list(_flat_fields(h.decl.fields))
        field_ids = _field_ids([list(f.annotations) for _, f in fields], self._report,
                               [f.pos for _, f in fields])
        for (prefix, f), fid in zip(fields, field_ids, strict=True):
            if _annotation(f.annotations, "hidden") is not None:
                continue
            md = msg.metadata.add()
            md.id = fid
            md.name = prefix + _cp_name(f.name, f.annotations)
            _add_annotations(md, f.annotations)
            t = f.type_ref.resolved
            if t is not None:
                md.bitwidth = self.types.width(t) or 0
                self.types.touch(t)
                if isinstance(t, T.NewType):
                    md.type_name.name = t.name

