"""P4Info generation: p4c's ids, aliases, ordering and message contents.

The id test vectors come from P4Info files p4c wrote (the p4lang tutorials' basic.p4,
p4c's own test outputs). Most tests build the checked ``Program`` by hand, so that they
do not depend on the parser; the golden-file tests at the end compile real programs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from switch.frontend import ast as A
from switch.frontend import p4info_ids as ids
from switch.frontend import types as T
from switch.frontend.diagnostics import Diagnostics
from switch.frontend.p4info import TEXT_HEADER, assign_ids, build_p4info, p4info_text
from switch.frontend.p4info_ids import IdError, SuffixSet, SymbolTable
from switch.frontend.program import (
    ActionInstance,
    BlockInstance,
    ControllerHeader,
    DigestInfo,
    ExternInstance,
    KeyInfo,
    Program,
    TableInstance,
    ValueSetInstance,
)

GOLDEN = Path(__file__).parent / "p4info_golden"

# ----------------------------------------------------------------- program builder

P = A.NOWHERE
ROLES = ("p", "vr", "ig", "eg", "ck", "dep")

CORE_ERRORS = ("NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
               "ParserTimeout", "ParserInvalidArgument")


def lit(v: object) -> A.Expr:
    if isinstance(v, bool):
        return A.BoolLit(P, v)
    if isinstance(v, int):
        return A.IntLit(P, v)
    return A.StringLit(P, str(v))


def anno(name: str, *body: object, raw: str = "") -> A.Annotation:
    return A.Annotation(P, name, [lit(b) for b in body], raw=raw)


def type_ref(t: T.Type) -> A.TypeRef:
    ref = A.NamedTypeRef(P, str(t))
    ref.resolved = t
    return ref


def bits(width: int) -> T.Bits:
    return T.Bits(width)


class ProgramBuilder:
    def __init__(self) -> None:
        self.decls: list[A.Declaration] = []
        self.type_decls: list[A.Declaration] = []
        self.blocks: dict[str, BlockInstance] = {}
        self.tables: dict[str, TableInstance] = {}
        self.actions: dict[str, ActionInstance] = {}
        self.externs: dict[str, ExternInstance] = {}
        self.value_sets: dict[str, ValueSetInstance] = {}
        self.digests: dict[str, DigestInfo] = {}
        self.controller_headers: dict[str, ControllerHeader] = {}
        self.no_action = self.top_action("NoAction", annotations=[anno("noWarn", "unused")])
        self.digest_fn = A.ExternFunctionDecl(P, "digest", A.VoidTypeRef(P), ["T"], [])
        self.mark_to_drop = A.ExternFunctionDecl(P, "mark_to_drop", A.VoidTypeRef(P), [], [])
        self.decls += [self.digest_fn, self.mark_to_drop]
        for role in ROLES:
            if role == "p":
                decl: A.ParserDecl | A.ControlDecl = A.ParserDecl(P, "P", [], [], [], [], [])
            else:
                decl = A.ControlDecl(P, f"C_{role}", [], [], [], [], A.Block(P, []))
            self.blocks[role] = BlockInstance(decl.name, decl)

    # -- blocks

    def control(self, role: str, name: str) -> BlockInstance:
        decl = A.ControlDecl(P, name, [], [], [], [], A.Block(P, []))
        self.decls.append(decl)
        block = BlockInstance(name, decl)
        self.blocks[role] = block
        return block

    def sub_control(self, parent: BlockInstance, name: str, instance: str,
                    applied: bool = True) -> BlockInstance:
        decl = A.ControlDecl(P, name, [], [], [], [], A.Block(P, []))
        self.decls.append(decl)
        inst = A.Instantiation(P, instance, A.NamedTypeRef(P, name), [])
        parent.decl.locals.append(inst)  # type: ignore[union-attr]
        block = BlockInstance(f"{parent.fqn}.{instance}", decl)
        parent.children[instance] = block
        if applied:
            call = A.Call(P, A.Member(P, A.Name(P, instance), "apply"), [], [],
                          target=A.CallSubApply(inst))
            self._body(parent).append(A.CallStmt(P, call))
        return block

    @staticmethod
    def _body(block: BlockInstance) -> list[A.Stmt]:
        assert isinstance(block.decl, A.ControlDecl)
        return block.decl.body.stmts

    # -- actions

    def top_action(self, name: str, params: Sequence[tuple[str, T.Type]] = (),
                   annotations: Sequence[A.Annotation] = ()) -> A.ActionDecl:
        decl = self._action_decl(name, params, annotations)
        self.decls.append(decl)
        self.actions[name] = ActionInstance(name, decl, None, self._cp_params(params))
        return decl

    def action(self, block: BlockInstance, name: str,
               params: Sequence[tuple[str, T.Type]] = (),
               annotations: Sequence[A.Annotation] = (),
               calls: Sequence[A.Call] = (),
               fqn: str | None = None) -> A.ActionDecl:
        decl = self._action_decl(name, params, annotations)
        decl.body.stmts.extend(A.CallStmt(P, c) for c in calls)
        block.decl.locals.append(decl)
        fqn = fqn or f"{block.fqn}.{name}"
        self.actions[fqn] = ActionInstance(fqn, decl, block, self._cp_params(params))
        return decl

    @staticmethod
    def _action_decl(name: str, params: Sequence[tuple[str, T.Type]],
                     annotations: Sequence[A.Annotation]) -> A.ActionDecl:
        ps = [A.Param(P, n, "", type_ref(t)) for n, t in params]
        return A.ActionDecl(P, name, ps, A.Block(P, []), annotations=list(annotations))

    @staticmethod
    def _cp_params(params: Sequence[tuple[str, T.Type]]) -> list[tuple[str, int]]:
        return [(n, T.width_of(t) if not isinstance(t, T.Enum) else 32) for n, t in params]

    def call_action(self, block: BlockInstance, action: A.ActionDecl) -> None:
        call = A.Call(P, A.Name(P, action.name), [], [], target=A.CallAction(action))
        self._body(block).append(A.CallStmt(P, call))

    def digest_call(self, t: T.Type) -> A.Call:
        data = A.Name(P, "meta", type=t)
        return A.Call(P, A.Name(P, "digest"), [type_ref(t)],
                      [A.Argument(P, lit(1)), A.Argument(P, data)],
                      target=A.CallExternFunction(self.digest_fn))

    def drop_call(self) -> A.Call:
        return A.Call(P, A.Name(P, "mark_to_drop"), [], [],
                      target=A.CallExternFunction(self.mark_to_drop))

    # -- tables

    def table(self, block: BlockInstance, name: str,
              keys: Sequence[tuple[str, str, int] | tuple[str, str, int, list[A.Annotation]]] = (),
              actions: Sequence[A.ActionDecl | tuple[A.ActionDecl, list[A.Annotation]]] = (),
              default: A.ActionDecl | None = None,
              default_args: Sequence[int] = (),
              const_default: bool = False,
              size: int | None = None,
              annotations: Sequence[A.Annotation] = (),
              properties: Sequence[A.TableProperty] = (),
              entries: int = 0,
              entries_const: bool = False,
              implementation: str | None = None,
              direct_counter: str | None = None,
              direct_meter: str | None = None,
              applied: bool = True,
              fqn: str | None = None) -> A.TableDecl:
        key_elems = []
        key_infos = []
        for k in keys:
            kname, kind, width = k[0], k[1], k[2]
            kannos = list(k[3]) if len(k) > 3 else []  # type: ignore[misc]
            elem = A.KeyElement(P, A.Name(P, kname, type=T.Bits(width)), kind, kannos)
            key_elems.append(elem)
            key_infos.append(KeyInfo(kname, kind, width, elem))
        refs = []
        for a in actions:
            decl, annos = (a, []) if isinstance(a, A.ActionDecl) else a
            refs.append(A.ActionRef(P, A.Name(P, decl.name), [], annos, action=decl))
        default_ref = None
        if default is not None:
            default_ref = A.ActionRef(P, A.Name(P, default.name),
                                      [A.Argument(P, lit(v)) for v in default_args],
                                      action=default)
        entry_list = [A.TableEntry(P, [], A.ActionRef(P, A.Name(P, "x"), []))
                      for _ in range(entries)]
        decl = A.TableDecl(P, name, key_elems, refs, default_ref, const_default, entry_list,
                           entries_const, lit(size) if size is not None else None,
                           list(properties), annotations=list(annotations))
        block.decl.locals.append(decl)
        if applied:
            call = A.Call(P, A.Member(P, A.Name(P, name), "apply"), [], [],
                          target=A.CallTableApply(decl))
            self._body(block).append(A.CallStmt(P, call))
        fqn = fqn or f"{block.fqn}.{name}"
        action_fqns = [self._action_fqn(r.action) for r in refs]  # type: ignore[arg-type]
        default_fqn = self._action_fqn(default) if default is not None else "NoAction"
        self.tables[fqn] = TableInstance(
            fqn, decl, block, key_infos, action_fqns, default_fqn, list(default_args),
            const_default, size or 1024, implementation, direct_counter, direct_meter)
        return decl

    def _action_fqn(self, decl: A.ActionDecl) -> str:
        for inst in self.actions.values():
            if inst.decl is decl:
                return inst.fqn
        raise KeyError(decl.name)

    # -- externs, value sets, headers

    def extern(self, block: BlockInstance | None, extern: str, name: str, args: list[object],
               type_args: Sequence[T.Type] = (), annotations: Sequence[A.Annotation] = (),
               fqn: str | None = None) -> A.Instantiation:
        decl = A.Instantiation(P, name, A.NamedTypeRef(P, extern), [],
                               annotations=list(annotations))
        if block is None:
            self.decls.append(decl)
            fqn = fqn or name
        else:
            block.decl.locals.append(decl)
            fqn = fqn or f"{block.fqn}.{name}"
        decl.fqn = fqn
        t = T.Extern(extern, tuple(type_args))
        self.externs[fqn] = ExternInstance(fqn, decl, block, extern, t, list(args))
        return decl

    def value_set(self, name: str, element: T.Type, size: int,
                  annotations: Sequence[A.Annotation] = (), used: bool = True) -> A.ValueSetDecl:
        block = self.blocks["p"]
        decl = A.ValueSetDecl(P, name, type_ref(element), lit(size),
                              annotations=list(annotations))
        block.decl.locals.append(decl)
        if used:
            state = A.ParserState(P, "start", [], A.Select(
                P, [A.Name(P, "x")], [A.SelectCase(P, A.Name(P, name, decl=decl), "accept")]))
            assert isinstance(block.decl, A.ParserDecl)
            block.decl.states.append(state)
        fqn = f"{block.fqn}.{name}"
        self.value_sets[fqn] = ValueSetInstance(fqn, decl, block, element, size)
        return decl

    def header(self, name: str, fields: Sequence[tuple[str, T.Type] | tuple[str, T.Type, list]],
               annotations: Sequence[A.Annotation] = ()) -> T.Header:
        fs = [A.Field(P, f[0], type_ref(f[1]), list(f[2]) if len(f) > 2 else [])  # type: ignore
              for f in fields]
        decl = A.HeaderDecl(P, name, fs, annotations=list(annotations))
        self.type_decls.append(decl)
        t = T.Header(name, tuple(T.FieldType(f[0], f[1]) for f in fields), decl)
        kind = next((a.body[0].value for a in annotations if a.name == "controller_header"),
                    None)
        if isinstance(kind, str):
            self.controller_headers[kind] = ControllerHeader(kind, t)
        return t

    def struct(self, name: str, fields: Sequence[tuple[str, T.Type]]) -> T.Struct:
        fs = [A.Field(P, n, type_ref(t)) for n, t in fields]
        decl = A.StructDecl(P, name, fs)
        self.type_decls.append(decl)
        return T.Struct(name, tuple(T.FieldType(n, t) for n, t in fields), decl)

    def build(self, main_annotations: Sequence[A.Annotation] = ()) -> Program:
        main = A.Instantiation(P, "main", A.NamedTypeRef(P, "V1Switch"), [],
                               annotations=list(main_annotations))
        decls = [*self.type_decls, *self.decls, main]
        program = Program(None, "test.p4", decls, "v1model", dict(self.blocks))
        program.tables = self.tables
        program.actions = self.actions
        program.externs = self.externs
        program.value_sets = self.value_sets
        program.digests = self.digests
        program.controller_headers = self.controller_headers
        program.errors = {e: i for i, e in enumerate(CORE_ERRORS)}
        return program


def p4info(program: Program) -> p4info_pb2.P4Info:
    return build_p4info(program)


def text_of(program: Program) -> str:
    text = p4info_text(program)
    assert text.startswith(TEXT_HEADER)
    return text[len(TEXT_HEADER):]


def by_name(entries: Sequence[object]) -> dict[str, object]:
    return {e.preamble.name: e for e in entries}  # type: ignore[attr-defined]


# --------------------------------------------------------------------- ids, aliases

# (resource type, fully-qualified name, id) as p4c wrote them into real P4Info files.
P4C_IDS = [
    # the p4lang tutorials' basic.p4
    (ids.ACTION, "NoAction", 21257015),
    (ids.ACTION, "MyIngress.drop", 25652968),
    (ids.ACTION, "MyIngress.ipv4_forward", 28792405),
    (ids.TABLE, "MyIngress.ipv4_lpm", 37375156),
    # p4c testdata: flowlet_switching-bmv2.p4
    (ids.REGISTER, "ingress.flowlet_id", 384519412),
    (ids.REGISTER, "ingress.flowlet_lasttime", 375147533),
    # p4c testdata: action_profile-bmv2.p4 and action_profile_*_annotation.p4
    (ids.TABLE, "IngressI.indirect", 46872340),
    (ids.TABLE, "IngressI.indirect_ws", 38116258),
    (ids.ACTION, "IngressI.drop", 23455883),
    (ids.ACTION_PROFILE, "ap", 294074782),
    (ids.ACTION_PROFILE, "ap_ws", 300324846),
    (ids.ACTION_PROFILE, "IngressI.ap", 289199568),
    (ids.ACTION_PROFILE, "IngressI.ap_ws", 285903678),
    # p4c testdata: v1model-digest-containing-ser-enum.p4
    (ids.DIGEST, "test_digest_t", 387015589),
    (ids.DIGEST, "test_digest2_t", 392468736),
    (ids.DIGEST, "test_digest3_t", 399106899),
    # p4c testdata: default-action-arg-bmv2.p4 (a table in a sub-control instance "c")
    (ids.TABLE, "ingress.c.t", 43577110),
    (ids.ACTION, "ingress.c.add", 29022044),
    # p4c testdata: basic_routing-bmv2.p4
    (ids.ACTION, "ingress.on_miss", 22594144),
    (ids.ACTION, "egress.on_miss", 28864280),
    (ids.TABLE, "ingress.ipv4_fib_lpm", 42875950),
    (ids.TABLE, "ingress.bd", 48392551),
    (ids.ACTION, "ingress.set_vrf", 33505590),
    # controller headers are named by their header type (Stratum/SONiC P4Info files)
    (ids.CONTROLLER_HEADER, "packet_in_header_t", 81826293),
    (ids.CONTROLLER_HEADER, "packet_out_header_t", 76689799),
]


@pytest.mark.parametrize(("kind", "name", "expected"), P4C_IDS)
def test_hashed_ids_match_p4c(kind: int, name: str, expected: int) -> None:
    assert ids.hashed_id(kind, name) == expected
    table = SymbolTable()
    table.add(kind, name)
    table.assign()
    assert table.id(kind, name) == expected


def test_jenkins_one_at_a_time() -> None:
    assert ids.jenkins_hash("") == 0
    # Reference values of Bob Jenkins' one-at-a-time hash.
    assert ids.jenkins_hash("a") == 0xCA2E9442
    assert ids.jenkins_hash("The quick brown fox jumps over the lazy dog") == 0x519E91F5


def test_collisions_probe_in_sorted_name_order() -> None:
    # "c.t1626" and "c.t3872" share the low 24 bits of their hash (0x3a2734).
    assert ids.hashed_id(ids.TABLE, "c.t1626") == ids.hashed_id(ids.TABLE, "c.t3872")
    table = SymbolTable()
    table.add(ids.TABLE, "c.t3872")  # insertion order does not matter
    table.add(ids.TABLE, "c.t1626")
    table.assign()
    assert table.id(ids.TABLE, "c.t1626") == 0x023A2734
    assert table.id(ids.TABLE, "c.t3872") == 0x023A2735


def test_explicit_ids_get_the_type_prefix() -> None:
    assert ids.explicit_id(ids.TABLE, 5) == 0x02000005
    assert ids.explicit_id(ids.TABLE, 0x02000005) == 0x02000005
    with pytest.raises(IdError, match="wrong 8-bit prefix"):
        ids.explicit_id(ids.TABLE, 0x01000005)
    with pytest.raises(IdError, match="unsigned integer"):
        ids.explicit_id(ids.TABLE, 1 << 32)


def test_explicit_ids_are_taken_before_hashing() -> None:
    table = SymbolTable()
    table.add(ids.ACTION, "b")
    table.add(ids.ACTION, "a", wanted=ids.hashed_id(ids.ACTION, "b"))
    errors: list[str] = []
    table.add(ids.ACTION, "c", wanted=ids.hashed_id(ids.ACTION, "b"), on_error=errors.append)
    table.assign()
    assert table.id(ids.ACTION, "a") == ids.hashed_id(ids.ACTION, "b")
    assert table.id(ids.ACTION, "b") == ids.hashed_id(ids.ACTION, "b") + 1
    assert errors == [f"@id {ids.hashed_id(ids.ACTION, 'b')} is assigned to multiple declarations"]
    assert table.id(ids.ACTION, "c") == ids.hashed_id(ids.ACTION, "c")


def test_aliases_are_shortest_unique_suffixes() -> None:
    s = SuffixSet()
    for name in ("NoAction", "ingress.on_miss", "egress.on_miss", "ingress.set_vrf",
                 "a.b.c", "d.b.c", "ingress.bd"):
        s.add(name)
    assert s.shortest_unique_suffix("NoAction") == "NoAction"
    assert s.shortest_unique_suffix("ingress.on_miss") == "ingress.on_miss"
    assert s.shortest_unique_suffix("egress.on_miss") == "egress.on_miss"
    assert s.shortest_unique_suffix("ingress.set_vrf") == "set_vrf"
    assert s.shortest_unique_suffix("a.b.c") == "a.b.c"
    assert s.shortest_unique_suffix("ingress.bd") == "bd"


# ------------------------------------------------------------------ whole programs


def basic_program() -> Program:
    """The p4lang tutorials' basic.p4, as the checker hands it over."""
    b = ProgramBuilder()
    ig = b.control("ig", "MyIngress")
    drop = b.action(ig, "drop", calls=[b.drop_call()])
    fwd = b.action(ig, "ipv4_forward", [("dstAddr", bits(48)), ("port", bits(9))])
    b.table(ig, "ipv4_lpm", keys=[("hdr.ipv4.dstAddr", "lpm", 32)],
            actions=[fwd, drop, b.no_action], default=drop, size=1024)
    return b.build()


BASIC_P4INFO = """\
pkg_info {
  arch: "v1model"
}
tables {
  preamble {
    id: 37375156
    name: "MyIngress.ipv4_lpm"
    alias: "ipv4_lpm"
  }
  match_fields {
    id: 1
    name: "hdr.ipv4.dstAddr"
    bitwidth: 32
    match_type: LPM
  }
  action_refs {
    id: 28792405
  }
  action_refs {
    id: 25652968
  }
  action_refs {
    id: 21257015
  }
  initial_default_action {
    action_id: 25652968
  }
  size: 1024
}
actions {
  preamble {
    id: 21257015
    name: "NoAction"
    alias: "NoAction"
    annotations: "@noWarn(\\"unused\\")"
  }
}
actions {
  preamble {
    id: 25652968
    name: "MyIngress.drop"
    alias: "drop"
  }
}
actions {
  preamble {
    id: 28792405
    name: "MyIngress.ipv4_forward"
    alias: "ipv4_forward"
  }
  params {
    id: 1
    name: "dstAddr"
    bitwidth: 48
  }
  params {
    id: 2
    name: "port"
    bitwidth: 9
  }
}
type_info {
}
"""


def test_basic_p4() -> None:
    program = basic_program()
    assert text_of(program) == BASIC_P4INFO
    # The text parses back into the same message.
    parsed = text_format.Parse(p4info_text(program), p4info_pb2.P4Info())
    assert parsed == build_p4info(program)


def test_assign_ids_fills_the_program() -> None:
    program = basic_program()
    diags = Diagnostics()
    assign_ids(program, diags)
    assert diags.items == []
    assert program.tables["MyIngress.ipv4_lpm"].id == 37375156
    assert {a.fqn: a.id for a in program.actions.values()} == {
        "NoAction": 21257015,
        "MyIngress.drop": 25652968,
        "MyIngress.ipv4_forward": 28792405,
    }


def test_sub_control_const_default_action_with_arguments() -> None:
    # p4c testdata default-action-arg-bmv2.p4: control compute instantiated as "c".
    b = ProgramBuilder()
    ig = b.control("ig", "ingress")
    c = b.sub_control(ig, "compute", "c")
    add = b.action(c, "add", [("va", bits(32)), ("vb", bits(32))])
    b.table(c, "t", keys=[("h.key", "exact", 16)], actions=[add], default=add,
            default_args=[10, 0], const_default=True)
    assert text_of(b.build()) == """\
pkg_info {
  arch: "v1model"
}
tables {
  preamble {
    id: 43577110
    name: "ingress.c.t"
    alias: "t"
  }
  match_fields {
    id: 1
    name: "h.key"
    bitwidth: 16
    match_type: EXACT
  }
  action_refs {
    id: 29022044
  }
  const_default_action_id: 29022044
  initial_default_action {
    action_id: 29022044
    arguments {
      param_id: 1
      value: "\\000\\000\\000\\n"
    }
    arguments {
      param_id: 2
      value: "\\000\\000\\000\\000"
    }
  }
  size: 1024
}
actions {
  preamble {
    id: 29022044
    name: "ingress.c.add"
    alias: "add"
  }
  params {
    id: 1
    name: "va"
    bitwidth: 32
  }
  params {
    id: 2
    name: "vb"
    bitwidth: 32
  }
}
type_info {
}
"""


def test_table_without_default_action_gets_default_only_no_action() -> None:
    # p4c testdata basic_routing-bmv2.p4, table "bd".
    b = ProgramBuilder()
    ig = b.control("ig", "ingress")
    set_vrf = b.action(ig, "set_vrf", [("vrf", bits(12))])
    b.table(ig, "bd", keys=[("meta.ingress_metadata.bd", "exact", 16)], actions=[set_vrf],
            size=65536)
    info = p4info(b.build())
    (table,) = info.tables
    assert table.preamble.id == 48392551
    assert [r.id for r in table.action_refs] == [33505590, 21257015]
    no_action_ref = table.action_refs[1]
    assert list(no_action_ref.annotations) == ["@defaultonly"]
    assert no_action_ref.scope == p4info_pb2.ActionRef.DEFAULT_ONLY
    assert table.const_default_action_id == 0
    assert table.initial_default_action.action_id == 21257015
    assert table.size == 65536
    assert [a.preamble.name for a in info.actions] == ["NoAction", "ingress.set_vrf"]


def test_unused_tables_and_actions_are_left_out() -> None:
    b = ProgramBuilder()
    ig = b.control("ig", "ingress")
    a = b.action(ig, "a")
    only_in_unused = b.action(ig, "b")
    called = b.action(ig, "c")
    never = b.action(ig, "d")
    b.top_action("empty")
    b.table(ig, "t", actions=[a], default=a)
    b.table(ig, "u", actions=[only_in_unused], default=only_in_unused, applied=False)
    b.call_action(ig, called)
    program = b.build()
    info = p4info(program)
    assert [t.preamble.name for t in info.tables] == ["ingress.t"]
    assert [x.preamble.name for x in info.actions] == ["ingress.a", "ingress.c"]
    assert never.name == "d"
    # Every object still gets an id, and the unused ones cannot disturb the others.
    assign_ids(program, Diagnostics())
    assert program.tables["ingress.u"].id == ids.hashed_id(ids.TABLE, "ingress.u")
    assert program.actions["ingress.d"].id == ids.hashed_id(ids.ACTION, "ingress.d")
    assert program.actions["empty"].id == ids.hashed_id(ids.ACTION, "empty")


def test_order_follows_the_pipeline_and_declarations() -> None:
    b = ProgramBuilder()
    eg = b.control("eg", "egress")  # declared first, but V1Switch lists ingress first
    ig = b.control("ig", "ingress")
    g1 = b.top_action("g1")
    g2 = b.top_action("g2")
    e_drop = b.action(eg, "on_miss")
    b.table(eg, "rewrite", actions=[e_drop], default=e_drop)
    local = b.action(ig, "a")
    i_miss = b.action(ig, "on_miss")
    b.table(ig, "t2", actions=[g1], default=g1)  # applied second ...
    b.table(ig, "t1", actions=[local, g2, i_miss])  # ... but declared second
    ig_body = ig.decl.body.stmts  # type: ignore[union-attr]
    ig_body.reverse()
    info = p4info(b.build())
    assert [t.preamble.name for t in info.tables] == ["ingress.t2", "ingress.t1", "egress.rewrite"]
    # Top-level actions are copied into the control in front of its own actions, in the
    # order the control's declarations first use them; NoAction comes with t1.
    assert [a.preamble.name for a in info.actions] == [
        "g1", "g2", "NoAction", "ingress.a", "ingress.on_miss", "egress.on_miss"]
    aliases = {a.preamble.name: a.preamble.alias for a in info.actions}
    assert aliases["ingress.on_miss"] == "ingress.on_miss"
    assert aliases["egress.on_miss"] == "egress.on_miss"
    assert aliases["ingress.a"] == "a"


def test_externs() -> None:
    b = ProgramBuilder()
    b.extern(None, "register", "gr", [4], type_args=[bits(32)])
    ig = b.control("ig", "ingress")
    b.extern(ig, "register", "r", [8192], type_args=[bits(16)])
    b.extern(ig, "counter", "c", [1024, "packets_and_bytes"])
    b.extern(ig, "meter", "m", [64, "MeterType.bytes"])
    b.extern(ig, "direct_counter", "dc", ["packets"])
    b.extern(ig, "direct_meter", "dm", ["bytes"], type_args=[bits(8)])
    b.extern(ig, "action_profile", "ap", [128])
    b.extern(ig, "action_selector", "sel", ["identity", 1024, 10], annotations=[
        anno("max_group_size", 200), anno("selector_size_semantics", "sum_of_members"),
        anno("max_member_weight", 4000), anno("brief", "ECMP groups")])
    a = b.action(ig, "a")
    b.table(ig, "t", keys=[("k", "exact", 8)], actions=[a], default=a,
            implementation="ingress.ap", direct_counter="ingress.dc", direct_meter="ingress.dm")
    b.table(ig, "s", keys=[("k", "exact", 8), ("h", "selector", 16)], actions=[a],
            default=a, implementation="ingress.sel")
    info = p4info(b.build())
    assert [r.preamble.name for r in info.registers] == ["gr", "ingress.r"]
    r = info.registers[1]
    assert r.size == 8192
    assert r.type_spec.bitstring.bit.bitwidth == 16
    assert r.preamble.id == ids.hashed_id(ids.REGISTER, "ingress.r")
    (c,) = info.counters
    assert (c.preamble.name, c.spec.unit, c.size) == (
        "ingress.c", p4info_pb2.CounterSpec.BOTH, 1024)
    (m,) = info.meters
    assert (m.preamble.name, m.spec.unit, m.size) == ("ingress.m", p4info_pb2.MeterSpec.BYTES, 64)
    t_id = ids.hashed_id(ids.TABLE, "ingress.t")
    (dc,) = info.direct_counters
    assert (dc.preamble.name, dc.spec.unit, dc.direct_table_id) == (
        "ingress.dc", p4info_pb2.CounterSpec.PACKETS, t_id)
    (dm,) = info.direct_meters
    assert (dm.preamble.name, dm.spec.unit, dm.direct_table_id) == (
        "ingress.dm", p4info_pb2.MeterSpec.BYTES, t_id)
    tables = by_name(info.tables)
    t = tables["ingress.t"]
    assert t.implementation_id == ids.hashed_id(ids.ACTION_PROFILE, "ingress.ap")  # type: ignore
    assert list(t.direct_resource_ids) == [  # type: ignore[attr-defined]
        ids.hashed_id(ids.DIRECT_COUNTER, "ingress.dc"),
        ids.hashed_id(ids.DIRECT_METER, "ingress.dm")]
    s = tables["ingress.s"]
    assert [f.name for f in s.match_fields] == ["k"]  # type: ignore[attr-defined]
    profiles = by_name(info.action_profiles)
    ap = profiles["ingress.ap"]
    assert (ap.size, ap.with_selector, list(ap.table_ids)) == (128, False, [t_id])  # type: ignore
    sel = profiles["ingress.sel"]
    assert sel.with_selector and sel.size == 1024 and sel.max_group_size == 200  # type: ignore
    assert sel.sum_of_members.max_member_weight == 4000  # type: ignore[attr-defined]
    assert list(sel.preamble.annotations) == []  # type: ignore[attr-defined]
    assert sel.preamble.doc.brief == "ECMP groups"  # type: ignore[attr-defined]


def test_digests_and_type_info() -> None:
    # After p4c testdata v1model-digest-containing-ser-enum.p4.
    b = ProgramBuilder()
    packet_types = T.Enum("MyPacketTypes", ("IPv4", "Other"))
    ser = T.SerEnum("MySerEnum1", bits(8), (("foo", 28), ("bar", 17), ("gah", 42)))
    d1 = b.struct("test_digest_t", [("in_mac_srcAddr", bits(48)),
                                    ("my_parser_error", T.Error()), ("pkt_type", packet_types)])
    d2 = b.struct("test_digest2_t", [("in_mac_dstAddr", bits(48)), ("my_thing", ser)])
    d3 = b.struct("test_digest3_t", [("in_mac_etherType", bits(16))])
    ig = b.control("ig", "MyIngress")
    send = b.action(ig, "send_digest", calls=[b.digest_call(d1), b.digest_call(d2),
                                             b.digest_call(d3), b.digest_call(d1)])
    b.call_action(ig, send)
    for name, t in (("test_digest_t", d1), ("test_digest2_t", d2), ("test_digest3_t", d3)):
        b.digests[name] = DigestInfo(name, t)
    program = b.build()
    program.errors["UnreachableState"] = len(program.errors)
    info = p4info(program)
    assert [(d.preamble.id, d.preamble.name, d.preamble.alias) for d in info.digests] == [
        (387015589, "test_digest_t", "test_digest_t"),
        (392468736, "test_digest2_t", "test_digest2_t"),
        (399106899, "test_digest3_t", "test_digest3_t"),
    ]
    assert info.digests[0].type_spec == text_format.Parse(
        'struct { name: "test_digest_t" }', info.digests[0].type_spec.__class__())
    assert text_format.MessageToString(info.type_info) == """\
structs {
  key: "test_digest2_t"
  value {
    members {
      name: "in_mac_dstAddr"
      type_spec {
        bitstring {
          bit {
            bitwidth: 48
          }
        }
      }
    }
    members {
      name: "my_thing"
      type_spec {
        serializable_enum {
          name: "MySerEnum1"
        }
      }
    }
  }
}
structs {
  key: "test_digest3_t"
  value {
    members {
      name: "in_mac_etherType"
      type_spec {
        bitstring {
          bit {
            bitwidth: 16
          }
        }
      }
    }
  }
}
structs {
  key: "test_digest_t"
  value {
    members {
      name: "in_mac_srcAddr"
      type_spec {
        bitstring {
          bit {
            bitwidth: 48
          }
        }
      }
    }
    members {
      name: "my_parser_error"
      type_spec {
        error {
        }
      }
    }
    members {
      name: "pkt_type"
      type_spec {
        enum {
          name: "MyPacketTypes"
        }
      }
    }
  }
}
enums {
  key: "MyPacketTypes"
  value {
    members {
      name: "IPv4"
    }
    members {
      name: "Other"
    }
  }
}
error {
  members: "NoError"
  members: "PacketTooShort"
  members: "NoMatch"
  members: "StackOutOfBounds"
  members: "HeaderTooShort"
  members: "ParserTimeout"
  members: "ParserInvalidArgument"
  members: "UnreachableState"
}
serializable_enums {
  key: "MySerEnum1"
  value {
    underlying_type {
      bitwidth: 8
    }
    members {
      name: "foo"
      value: "\\034"
    }
    members {
      name: "bar"
      value: "\\021"
    }
    members {
      name: "gah"
      value: "*"
    }
  }
}
"""
    assign_ids(program, Diagnostics())
    assert program.digests["test_digest2_t"].id == 392468736


def test_controller_packet_metadata() -> None:
    b = ProgramBuilder()
    b.header("packet_in_header_t", [("ingress_port", bits(9)), ("_pad", bits(7))],
             annotations=[anno("controller_header", "packet_in")])
    b.header("packet_out_header_t",
             [("egress_port", bits(9)), ("_pad", bits(7), [anno("padding")]),
              ("extra", bits(8), [anno("id", 7)])],
             annotations=[anno("controller_header", "packet_out")])
    b.header("plain_t", [("x", bits(8))])
    program = b.build()
    info = p4info(program)
    assert [(h.preamble.id, h.preamble.name, h.preamble.alias, list(h.preamble.annotations))
            for h in info.controller_packet_metadata] == [
        (81826293, "packet_in", "packet_in", ['@controller_header("packet_in")']),
        (76689799, "packet_out", "packet_out", ['@controller_header("packet_out")']),
    ]
    out = info.controller_packet_metadata[1]
    assert [(m.id, m.name, m.bitwidth, list(m.annotations)) for m in out.metadata] == [
        (1, "egress_port", 9, []), (2, "_pad", 7, ["@padding"]), (7, "extra", 8, [])]
    assign_ids(program, Diagnostics())
    assert program.controller_headers["packet_in"].id == 81826293


def test_value_sets() -> None:
    b = ProgramBuilder()
    b.value_set("pvs", bits(16), 4)
    s = b.struct("pvs_t", [("a", bits(8)), ("b", bits(16))])
    s.decl.fields[0].annotations.append(  # type: ignore[attr-defined]
        A.Annotation(P, "match", [A.Name(P, "ternary")]))
    b.value_set("pvs2", s, 8, annotations=[anno("my_anno")])
    b.value_set("unused", bits(8), 2, used=False)
    program = b.build()
    info = p4info(program)
    assert [v.preamble.name for v in info.value_sets] == ["P.pvs", "P.pvs2"]
    v1, v2 = info.value_sets
    assert v1.preamble.id == ids.hashed_id(ids.VALUE_SET, "P.pvs")
    assert v1.size == 4
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in v1.match] == [
        (1, "", 16, p4info_pb2.MatchField.EXACT)]
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in v2.match] == [
        (1, "a", 8, p4info_pb2.MatchField.TERNARY), (2, "b", 16, p4info_pb2.MatchField.EXACT)]
    assert list(v2.preamble.annotations) == ["@my_anno"]
    assign_ids(program, Diagnostics())
    assert program.value_sets["P.pvs"].id == ids.hashed_id(ids.VALUE_SET, "P.pvs")


def test_id_annotations() -> None:
    b = ProgramBuilder()
    ig = b.control("ig", "ingress")
    a = b.action(ig, "a", annotations=[anno("id", 0x01000007)])
    b.table(ig, "t", actions=[a], default=a, annotations=[anno("id", 5)])
    b.table(ig, "u", actions=[a], default=a, annotations=[anno("id", 5)])
    b.extern(ig, "register", "r", [1], type_args=[bits(8)], annotations=[anno("id", 0x02000001)])
    program = b.build()
    diags = Diagnostics()
    assign_ids(program, diags)
    assert [(d.message, d.line) for d in diags.errors] == [
        ("@id 33554437 is assigned to multiple declarations", 0),
        ("r: @id has the wrong 8-bit prefix", 0),
    ]
    assert program.tables["ingress.t"].id == 0x02000005
    assert program.tables["ingress.u"].id == ids.hashed_id(ids.TABLE, "ingress.u")
    assert program.actions["ingress.a"].id == 0x01000007
    assert program.externs["ingress.r"].id == ids.hashed_id(ids.REGISTER, "ingress.r")


def test_match_fields_ids_kinds_and_annotations() -> None:
    b = ProgramBuilder()
    ig = b.control("ig", "ingress")
    a = b.action(ig, "a")
    b.table(ig, "t", keys=[("a", "exact", 8), ("b", "selector", 16),
                           ("c", "ternary", 4, [anno("id", 7), anno("brief", "the c")]),
                           ("d", "lpm", 32), ("e", "range", 16), ("f", "optional", 1),
                           ("g", "my_kind", 3)],
            actions=[(a, [anno("tableonly")])], default=a)
    (t,) = p4info(b.build()).tables
    assert [(f.id, f.name, f.bitwidth) for f in t.match_fields] == [
        (1, "a", 8), (7, "c", 4), (3, "d", 32), (4, "e", 16), (5, "f", 1), (6, "g", 3)]
    MF = p4info_pb2.MatchField
    assert [f.match_type for f in t.match_fields] == [
        MF.EXACT, MF.TERNARY, MF.LPM, MF.RANGE, MF.OPTIONAL, MF.UNSPECIFIED]
    assert t.match_fields[-1].other_match_type == "my_kind"
    assert t.match_fields[1].doc.brief == "the c"
    assert list(t.match_fields[1].annotations) == []
    (ref,) = t.action_refs
    assert (list(ref.annotations), ref.scope) == (["@tableonly"], p4info_pb2.ActionRef.TABLE_ONLY)


def test_table_properties() -> None:
    b = ProgramBuilder()
    ig = b.control("ig", "ingress")
    a = b.action(ig, "a", [("x", bits(4))])
    timeout = A.TableProperty(P, "support_timeout", A.BoolLit(P, True))
    b.table(ig, "const_entries", actions=[a], default=a, default_args=[3], entries=2,
            entries_const=True, properties=[timeout])
    b.table(ig, "entries", actions=[a], default=a, default_args=[0x1F], entries=1)
    b.table(ig, "hidden", actions=[a], default=a, default_args=[0],
            annotations=[anno("hidden")])
    b.table(ig, "annotated", actions=[a], default=a, default_args=[0], size=0, annotations=[
        anno("my_anno", raw="1,2"), anno("brief", "Routing"), anno("description", "Long"),
        anno("name", "ingress.annotated")])
    info = p4info(b.build())
    tables = by_name(info.tables)
    assert list(tables) == ["ingress.const_entries", "ingress.entries", "ingress.annotated"]
    const = tables["ingress.const_entries"]
    assert const.is_const_table and const.has_initial_entries  # type: ignore[attr-defined]
    assert const.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL  # type: ignore
    assert const.const_default_action_id == 0  # type: ignore[attr-defined]
    (arg,) = const.initial_default_action.arguments  # type: ignore[attr-defined]
    assert (arg.param_id, arg.value) == (1, b"\x03")
    entries = tables["ingress.entries"]
    assert not entries.is_const_table and entries.has_initial_entries  # type: ignore
    assert entries.initial_default_action.arguments[0].value == b"\x0f"  # type: ignore
    annotated = tables["ingress.annotated"]
    assert list(annotated.preamble.annotations) == ["@my_anno(1 , 2)"]  # type: ignore
    assert annotated.preamble.doc.brief == "Routing"  # type: ignore[attr-defined]
    assert annotated.preamble.doc.description == "Long"  # type: ignore[attr-defined]
    assert annotated.size == 1024  # type: ignore[attr-defined]


def test_pkg_info_and_empty_type_info() -> None:
    b = ProgramBuilder()
    program = b.build(main_annotations=[
        anno("pkginfo", raw='name="demo", version="1.2", organization="ina"'),
        anno("brief", "Demo program"), anno("my_note")])
    assert text_of(program) == """\
pkg_info {
  name: "demo"
  version: "1.2"
  doc {
    brief: "Demo program"
  }
  annotations: "@my_note"
  arch: "v1model"
  organization: "ina"
}
"""


def test_hidden_actions_are_left_out_but_keep_their_name() -> None:
    b = ProgramBuilder()
    ig = b.control("ig", "ingress")
    hidden = b.action(ig, "set", annotations=[anno("hidden")])
    b.call_action(ig, hidden)
    eg = b.control("eg", "egress")
    shown = b.action(eg, "set")
    b.call_action(eg, shown)
    info = p4info(b.build())
    assert [(a.preamble.name, a.preamble.alias) for a in info.actions] == [
        ("egress.set", "egress.set")]


def test_in_place_action_profile_is_named_by_the_property() -> None:
    # p4c testdata action_profile-bmv2.p4:
    #   @name("ap") implementation = action_profile(32w128);
    b = ProgramBuilder()
    ig = b.control("ig", "IngressI")
    drop = b.action(ig, "drop")
    ctor = A.Call(P, A.Name(P, "action_profile"), [], [A.Argument(P, lit(128))])
    prop = A.TableProperty(P, "implementation", ctor, annotations=[anno("name", "ap")])
    b.table(ig, "indirect", actions=[drop, b.no_action], default=b.no_action,
            const_default=True, properties=[prop], implementation="IngressI.ap")
    inline = A.Instantiation(P, "ap", A.NamedTypeRef(P, "action_profile"), [],
                             annotations=[anno("name", "ap")])
    b.externs["IngressI.ap"] = ExternInstance(
        "IngressI.ap", inline, ig, "action_profile", T.Extern("action_profile"), [128])
    program = b.build()
    info = p4info(program)
    (table,) = info.tables
    assert table.preamble.id == 46872340
    assert table.implementation_id == 294074782
    assert table.const_default_action_id == 21257015
    assert table.initial_default_action.action_id == 21257015
    (profile,) = info.action_profiles
    assert (profile.preamble.id, profile.preamble.name, profile.preamble.alias) == (
        294074782, "ap", "ap")
    assert (list(profile.table_ids), profile.size, profile.with_selector) == (
        [46872340], 128, False)
    assign_ids(program, Diagnostics())
    assert program.externs["IngressI.ap"].id == 294074782


# ---------------------------------------------------------------- golden programs

GOLDEN_PROGRAMS = ["basic", "features", "routing", "applied_tables", "sample_shapes"]


def compile_golden(name: str) -> Program:
    from switch.frontend import compile_file

    return compile_file(GOLDEN / f"{name}.p4")


@pytest.mark.parametrize("name", GOLDEN_PROGRAMS)
def test_golden_p4info(name: str) -> None:
    program = compile_golden(name)
    expected = (GOLDEN / f"{name}.p4info.txtpb").read_text()
    assert p4info_text(program) == expected


@pytest.mark.parametrize("name", GOLDEN_PROGRAMS)
def test_compiled_program_ids_match_its_p4info(name: str) -> None:
    program = compile_golden(name)
    info = build_p4info(program)
    for table in info.tables:
        assert program.tables[table.preamble.name].id == table.preamble.id
    ids_by_fqn = {a.fqn: a.id for a in program.actions.values()}
    for action in info.actions:
        if action.preamble.name in ids_by_fqn:
            assert ids_by_fqn[action.preamble.name] == action.preamble.id
    externs = {e.id for e in program.externs.values()}
    for group in (info.counters, info.meters, info.registers, info.action_profiles,
                  info.direct_counters, info.direct_meters):
        for entry in group:
            assert entry.preamble.id in externs


def test_golden_basic_is_the_hand_checked_text() -> None:
    golden = (GOLDEN / "basic.p4info.txtpb").read_text()
    assert golden == TEXT_HEADER + BASIC_P4INFO


def test_golden_routing_has_p4c_ids() -> None:
    info = text_format.Parse((GOLDEN / "routing.p4info.txtpb").read_text(), p4info_pb2.P4Info())
    assert {t.preamble.name: t.preamble.id for t in info.tables} == {
        "ingress.bd": 48392551,
        "ingress.ipv4_fib_lpm": 42875950,
        "egress.rewrite": ids.hashed_id(ids.TABLE, "egress.rewrite"),
    }
    actions = {a.preamble.name: (a.preamble.id, a.preamble.alias) for a in info.actions}
    assert actions["NoAction"] == (21257015, "NoAction")
    assert actions["ingress.set_vrf"] == (33505590, "set_vrf")
    assert actions["ingress.on_miss"] == (22594144, "ingress.on_miss")
    assert actions["egress.on_miss"] == (28864280, "egress.on_miss")


def test_bad_field_ids_are_reported() -> None:
    b = ProgramBuilder()
    ig = b.control("ig", "ingress")
    a = b.action(ig, "a", [("x", bits(8)), ("y", bits(8))])
    a.params[0].annotations.append(anno("id", 2))
    a.params[1].annotations.append(anno("id", 2))
    b.table(ig, "t", keys=[("k", "exact", 8, [anno("id", 0)])], actions=[a], default=a,
            default_args=[1, 2])
    diags = Diagnostics()
    assign_ids(b.build(), diags)
    assert sorted(d.message for d in diags.errors) == [
        "0 is not a valid @id value", "@id 2 is used multiple times"]
