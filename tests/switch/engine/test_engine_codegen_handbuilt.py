"""The code generator on a hand-built checked tree (independent of the front end)."""

from __future__ import annotations

from dataclasses import dataclass

from switch.engine.compiler import build_tables, build_value_sets, compile_program
from switch.engine.runtime import Exact
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.program import (
    ActionInstance,
    BlockInstance,
    KeyInfo,
    Program,
    TableInstance,
)

P = A.Pos(1, 1)
B8, B9, B16, B48 = T.Bits(8), T.Bits(9), T.Bits(16), T.Bits(48)


@dataclass
class _Origin:
    file: str
    line: int


class _Source:
    text = ""

    def origin(self, line: int) -> _Origin:
        return _Origin("hand.p4", line)

    def source_line(self, line: int) -> str:
        return f"line {line}"


def tref(t: T.Type) -> A.TypeRef:
    r = A.NamedTypeRef(P, "t")
    r.resolved = t
    return r


def name(decl: object, t: T.Type, n: str = "x") -> A.Name:
    return A.Name(P, n, decl=decl, type=t)


def member(e: A.Expr, f: str, t: T.Type) -> A.Member:
    return A.Member(P, e, f, type=t)


def lit(v: int, t: T.Type = B16) -> A.IntLit:
    return A.IntLit(P, v, type=t)


class _Hooks:
    packet_length = "0"

    def extern_function(self, g, call, fn):  # noqa: ANN001, ANN201
        if fn.name == "mark_to_drop":
            g.em(f"{g.expr(call.resolved_args[0])}.f_egress_spec = 511")
            return None
        raise AssertionError(fn.name)

    def extern_method(self, g, call, target, instance):  # noqa: ANN001, ANN201
        raise AssertionError(target.method)


def build() -> Program:
    eth_t = T.Header("ethernet_t", (T.FieldType("dst", B48), T.FieldType("src", B48),
                                     T.FieldType("etype", B16)))
    hdrs_t = T.Struct("headers", (T.FieldType("e", eth_t),))
    meta_t = T.Struct("meta", ())
    sm_t = T.Struct("standard_metadata_t", (T.FieldType("ingress_port", B9),
                                             T.FieldType("egress_spec", B9)))
    pin = T.Extern("packet_in")
    pout = T.Extern("packet_out")
    # parser
    pb = A.Param(P, "b", "", tref(pin))
    ph = A.Param(P, "h", "out", tref(hdrs_t))
    pm = A.Param(P, "m", "inout", tref(meta_t))
    ps = A.Param(P, "sm", "inout", tref(sm_t))
    extract_decl = A.MethodDecl(P, "extract", None, [], [])
    he = member(name(ph, hdrs_t, "h"), "e", eth_t)
    ext = A.Call(P, member(name(pb, pin, "b"), "extract", T.Void()), [], [A.Argument(P, he)],
                 target=A.CallExternMethod("packet_in", "extract", name(pb, pin, "b"),
                                           extract_decl), resolved_args=[he], type=T.Void())
    sel = A.Select(P, [member(he, "etype", B16)],
                   [A.SelectCase(P, lit(0x800), "v4"),
                    A.SelectCase(P, A.Binary(P, "&&&", lit(0x8600), lit(0xFF00), type=B16), "v6"),
                    A.SelectCase(P, A.DefaultExpr(P), "accept")])
    start = A.ParserState(P, "start", [A.CallStmt(P, ext)], sel)
    v4 = A.ParserState(P, "v4", [A.Assign(P, member(he, "src", B48), lit(4, B48))], "accept")
    v6 = A.ParserState(P, "v6", [A.Assign(P, member(he, "src", B48), lit(6, B48))], "accept")
    parser = A.ParserDecl(P, "Prs", [], [pb, ph, pm, ps], [], [], [start, v4, v6])
    # ingress: action set_port(bit<9> p) { sm.egress_spec = p; }  table t { key = e.dst }
    ih = A.Param(P, "h", "inout", tref(hdrs_t))
    im = A.Param(P, "m", "inout", tref(meta_t))
    ism = A.Param(P, "sm", "inout", tref(sm_t))
    ap = A.Param(P, "p", "", tref(B9))
    ihe = member(name(ih, hdrs_t, "h"), "e", eth_t)
    set_port = A.ActionDecl(P, "set_port", [ap], A.Block(P, [
        A.Assign(P, member(name(ism, sm_t, "sm"), "egress_spec", B9), name(ap, B9, "p"))]))
    mtd = A.ExternFunctionDecl(P, "mark_to_drop", tref(T.Void()), [], [])
    drop_call = A.Call(P, name(mtd, T.Void()), [], [], target=A.CallExternFunction(mtd),
                       resolved_args=[name(ism, sm_t, "sm")], type=T.Void())
    drop = A.ActionDecl(P, "drop", [], A.Block(P, [A.CallStmt(P, drop_call)]))
    table = A.TableDecl(P, "t", [A.KeyElement(P, member(ihe, "dst", B48), "exact")],
                        [A.ActionRef(P, name(set_port, T.Void()), [], action=set_port),
                         A.ActionRef(P, name(drop, T.Void()), [], action=drop)],
                        A.ActionRef(P, name(drop, T.Void()), [], action=drop), False, [], False,
                        None, [])
    apply = A.Call(P, member(name(table, T.Void()), "apply", T.Void()), [], [],
                   target=A.CallTableApply(table), type=T.TableApplyResult("t"))
    hit = member(apply, "hit", T.Bool())
    inc = A.Assign(P, member(ihe, "etype", B16),
                   A.Binary(P, "+", member(ihe, "etype", B16), lit(0xFFFF), type=B16))
    body = A.Block(P, [A.If(P, hit, A.Block(P, [inc]), None)])
    ingress = A.ControlDecl(P, "Ing", [], [ih, im, ism], [], [set_port, drop, table], body)
    # deparser
    db = A.Param(P, "b", "", tref(pout))
    dh = A.Param(P, "h", "in", tref(hdrs_t))
    emit_decl = A.MethodDecl(P, "emit", None, [], [])
    dhe = member(name(dh, hdrs_t, "h"), "e", eth_t)
    emit = A.Call(P, member(name(db, pout, "b"), "emit", T.Void()), [], [A.Argument(P, dhe)],
                  target=A.CallExternMethod("packet_out", "emit", name(db, pout, "b"), emit_decl),
                  resolved_args=[dhe], type=T.Void())
    deparser = A.ControlDecl(P, "Dep", [], [db, dh], [], [], A.Block(P, [A.CallStmt(P, emit)]))
    vh = A.Param(P, "h", "inout", tref(hdrs_t))
    vm = A.Param(P, "m", "inout", tref(meta_t))
    empty = A.ControlDecl(P, "Nop", [], [vh, vm], [], [], A.Block(P, []))
    eh = A.Param(P, "h", "inout", tref(hdrs_t))
    em = A.Param(P, "m", "inout", tref(meta_t))
    es = A.Param(P, "sm", "inout", tref(sm_t))
    egress = A.ControlDecl(P, "Eg", [], [eh, em, es], [], [], A.Block(P, []))
    blocks = {"p": BlockInstance("Prs", parser), "vr": BlockInstance("Nop", empty),
              "ig": BlockInstance("Ing", ingress), "eg": BlockInstance("Eg", egress),
              "ck": BlockInstance("Nop", empty), "dep": BlockInstance("Dep", deparser)}
    prog = Program(_Source(), "hand.p4", [], "v1model", blocks)
    ig = blocks["ig"]
    prog.actions = {"Ing.set_port": ActionInstance("Ing.set_port", set_port, ig, [("p", 9)]),
                    "Ing.drop": ActionInstance("Ing.drop", drop, ig, [])}
    prog.tables = {"Ing.t": TableInstance("Ing.t", table, ig,
                                          [KeyInfo("h.e.dst", "exact", 48, table.keys[0])],
                                          ["Ing.set_port", "Ing.drop"], "Ing.drop", [], False,
                                          1024)}
    prog.instance_names = {(id(set_port), "Ing"): "Ing.set_port", (id(drop), "Ing"): "Ing.drop",
                           (id(table), "Ing"): "Ing.t"}
    prog.errors = {"NoError": 0, "PacketTooShort": 1, "NoMatch": 2}
    return prog


def test_handbuilt_pipeline():
    prog = build()
    tables = build_tables(prog)
    c = compile_program(prog, _Hooks(), tables, build_value_sets(prog), trace=True)
    events = []
    c.set_trace(lambda k, s, d: events.append(k))
    tables["Ing.t"].add([Exact(0xA)], "Ing.set_port", [7])
    hdr = c.new(prog.pipeline["p"].decl.params[1].type_ref.resolved)
    meta = c.new(prog.pipeline["p"].decl.params[2].type_ref.resolved)
    sm = c.new(prog.pipeline["p"].decl.params[3].type_ref.resolved)
    data = (0xA).to_bytes(6, "big") + (1).to_bytes(6, "big") + b"\x86\xdd" + b"rest"
    bo = c.pipeline["p"](data, 0, hdr, meta, sm)
    assert bo == 14 * 8
    assert hdr.f_e.f_src == 6
    c.pipeline["ig"](hdr, meta, sm)
    assert sm.f_egress_spec == 7
    assert hdr.f_e.f_etype == 0x86DC
    out: list[bytes] = []
    c.pipeline["dep"](out, hdr)
    assert b"".join(out) == (0xA).to_bytes(6, "big") + (6).to_bytes(6, "big") + b"\x86\xdc"
    assert "table" in events and "state" in events
    # miss -> default drop
    hdr2 = c.new(prog.pipeline["p"].decl.params[1].type_ref.resolved)
    c.pipeline["p"](b"\x00" * 14, 0, hdr2, meta, sm)
    c.pipeline["ig"](hdr2, meta, sm)
    assert sm.f_egress_spec == 511
