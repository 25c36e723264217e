"""Tests for the P4_16 parser (switch/frontend/parser.py and p4.lark)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark
from work_count import work_done, work_steps

from switch.frontend import ast as A
from switch.frontend.diagnostics import CompileError, Diagnostics
from switch.frontend.parser import (
    _KEYWORDS,
    _PUNCT,
    GRAMMAR_PATH,
    _Builder,
    _parser,
    _TokenFeed,
    parse,
)
from switch.frontend.preprocess import SYSTEM_INCLUDE_DIR, preprocess, preprocess_text

INPUTS = Path(__file__).parent / "parse_inputs"
REPO = Path(__file__).resolve().parents[3]
STF_DIR = REPO / "tests" / "stf"


# --------------------------------------------------------------------------- helpers


def p(text: str) -> A.SourceFile:
    return parse(text, Diagnostics())


def parse_file(path: Path) -> A.SourceFile:
    src = preprocess(path, [], {})
    return parse(src.text, Diagnostics(src, str(path)))


def syntax_error(text: str) -> str:
    """The single diagnostic a syntax error gives, formatted."""
    diags = Diagnostics()
    with pytest.raises(CompileError) as info:
        parse(text, diags)
    assert len(diags.errors) == 1
    return info.value.diagnostics[0].format()


def decl(tree: A.SourceFile, name: str) -> A.Declaration:
    found = [d for d in tree.decls if d.name == name]
    assert len(found) == 1, f"{name}: {len(found)} declarations"
    return found[0]


def ty(t: A.TypeRef | None) -> str:
    """A type reference as compact text."""
    match t:
        case None:
            return "-"
        case A.BitTypeRef(width=None, signed=s):
            return "int<1>" if s else "bit"
        case A.BitTypeRef(width=w, signed=s):
            return f"{'int' if s else 'bit'}<{sx(w)}>"
        case A.VarbitTypeRef(width=w):
            return f"varbit<{sx(w)}>"
        case A.NamedTypeRef(name=n, args=[]):
            return n
        case A.NamedTypeRef(name=n, args=args):
            return f"{n}<{', '.join(ty(a) for a in args)}>"
        case A.StackTypeRef(element=e, size=s):
            return f"{ty(e)}[{sx(s)}]"
        case A.TupleTypeRef(elements=es):
            return f"tuple<{', '.join(ty(e) for e in es)}>"
    return {
        A.BoolTypeRef: "bool", A.IntTypeRef: "int", A.ErrorTypeRef: "error",
        A.StringTypeRef: "string", A.VoidTypeRef: "void", A.DontCareTypeRef: "_",
    }[type(t)]


def sx(e: A.Node | None) -> str:
    """An expression as an s-expression, to check its shape."""
    match e:
        case None:
            return "_"
        case A.IntLit(text=text):
            return text
        case A.BoolLit(value=v):
            return "true" if v else "false"
        case A.StringLit(value=v):
            return repr(v)
        case A.Name(name=n, top_level=top):
            return ("." if top else "") + n
        case A.Member(expr=x, name=n):
            return f"{sx(x)}.{n}"
        case A.Index(expr=x, index=i):
            return f"{sx(x)}[{sx(i)}]"
        case A.Slice(expr=x, hi=h, lo=lo):
            return f"{sx(x)}[{sx(h)}:{sx(lo)}]"
        case A.Unary(op=op, expr=x):
            return f"({op} {sx(x)})"
        case A.Binary(op=op, left=left, right=right):
            return f"({op} {sx(left)} {sx(right)})"
        case A.Mux(cond=c, then=t, other=o):
            return f"(? {sx(c)} {sx(t)} {sx(o)})"
        case A.Cast(to=t, expr=x):
            return f"(cast {ty(t)} {sx(x)})"
        case A.Call(callee=c, type_args=targs, args=args):
            targ = f"<{', '.join(ty(t) for t in targs)}>" if targs else ""
            parts = [(f"{a.name}=" if a.name else "") + sx(a.value) for a in args]
            return f"(call {sx(c)}{targ}{''.join(' ' + x for x in parts)})"
        case A.ListExpr(elements=es):
            return "{" + " ".join(sx(x) for x in es) + "}"
        case A.StructExpr(fields=fs):
            return "{" + " ".join(f"{n}={sx(x)}" for n, x in fs) + "}"
        case A.DefaultExpr():
            return "default"
        case A.Unsupported(what=w):
            return f"<unsupported {w}>"
    raise AssertionError(f"unexpected node {e!r}")


def expr(text: str, prelude: str = "") -> str:
    """Parse ``text`` as a constant's initializer; ``prelude`` may declare types."""
    tree = p(prelude + "\nconst bit<8> the_expression = " + text + ";\n")
    d = tree.decls[-1]
    assert isinstance(d, A.ConstDecl)
    return sx(d.value)


def stmts(text: str, prelude: str = "") -> list[A.Stmt]:
    tree = p(prelude + "\ncontrol C() { apply {\n" + text + "\n} }\n")
    c = tree.decls[-1]
    assert isinstance(c, A.ControlDecl)
    return c.body.stmts


def with_includes(program: str) -> str:
    return preprocess_text("#include <core.p4>\n#include <v1model.p4>\n" + program,
                           "prog.p4").text


# ------------------------------------------------------------------------ grammar


def test_grammar_has_no_conflicts() -> None:
    # strict mode turns every shift/reduce conflict into an error
    Lark(GRAMMAR_PATH.read_text(), parser="lalr", lexer=_TokenFeed, strict=True,
         start=["start", "annotation_body"])


def test_token_kinds_match_the_grammar() -> None:
    """The tokenizer's keyword and punctuation kinds are the grammar's terminals."""
    lark, _ = _parser()
    literal = {t.pattern.value: t.name for t in lark.terminals if t.pattern.type == "str"}
    assert literal == {**_KEYWORDS, **_PUNCT}


def test_every_rule_has_a_callback() -> None:
    lark, _ = _parser()
    missing = set()
    for rule in lark.rules:
        name = rule.alias or rule.origin.name
        if not rule.alias and str(rule.origin.name).startswith("_"):
            continue  # inlined into the parent rule
        kept = [s for s in rule.expansion if not (s.is_term and s.filter_out)]
        if rule.options.expand1 and not rule.alias and len(kept) == 1:
            continue  # `?rule` passing its only child up
        if not hasattr(_Builder, str(name)):
            missing.add(str(name))
    assert not missing


# --------------------------------------------------------------- include files


def test_core_p4() -> None:
    tree = p(preprocess_text("#include <core.p4>\n", "prog.p4").text)
    err = decl(tree, "error")
    assert isinstance(err, A.ErrorDecl)
    assert err.members[:3] == ["NoError", "PacketTooShort", "NoMatch"]
    pin = decl(tree, "packet_in")
    assert isinstance(pin, A.ExternDecl)
    extracts = [m for m in pin.methods if m.name == "extract"]
    assert [len(m.params) for m in extracts] == [1, 2]
    assert extracts[0].type_params == ["T"]
    assert ty(extracts[0].params[0].type_ref) == "T"
    assert extracts[0].params[0].direction == "out"
    lookahead = next(m for m in pin.methods if m.name == "lookahead")
    assert ty(lookahead.return_type) == "T" and lookahead.type_params == ["T"]
    verify = decl(tree, "verify")
    assert isinstance(verify, A.ExternFunctionDecl)
    assert [ty(x.type_ref) for x in verify.params] == ["bool", "error"]
    noaction = decl(tree, "NoAction")
    assert isinstance(noaction, A.ActionDecl) and noaction.body.stmts == []
    mk = decl(tree, "match_kind")
    assert isinstance(mk, A.MatchKindDecl) and mk.members == ["exact", "ternary", "lpm"]
    asserts = [d for d in tree.decls if d.name == "static_assert"]
    assert [len(d.params) for d in asserts] == [2, 1]  # type: ignore[attr-defined]


def test_v1model_p4() -> None:
    assert (SYSTEM_INCLUDE_DIR / "v1model.p4").exists()
    tree = p(preprocess_text("#include <v1model.p4>\n", "prog.p4").text)
    sm = decl(tree, "standard_metadata_t")
    assert isinstance(sm, A.StructDecl)
    assert [a.name for a in sm.annotations] == ["metadata", "name"]
    assert sm.annotations[1].body and sx(sm.annotations[1].body[0]) == "'standard_metadata'"
    parser_error = next(f for f in sm.fields if f.name == "parser_error")
    assert isinstance(parser_error.type_ref, A.ErrorTypeRef)
    reg = decl(tree, "register")
    assert isinstance(reg, A.ExternDecl) and reg.type_params == ["T"]
    ctor = reg.methods[0]
    assert ctor.name == "register" and ctor.return_type is None
    read = next(m for m in reg.methods if m.name == "read")
    assert [a.name for a in read.annotations] == ["noSideEffects"]
    assert [(x.direction, ty(x.type_ref)) for x in read.params] == [
        ("out", "T"), ("in", "bit<32>")]
    h = decl(tree, "hash")
    assert isinstance(h, A.ExternFunctionDecl)
    assert h.type_params == ["O", "T", "D", "M"]
    assert [ty(x.type_ref) for x in h.params] == ["O", "HashAlgorithm", "T", "D", "M"]
    drops = [d for d in tree.decls if d.name == "mark_to_drop"]
    assert [a.name for d in drops for a in d.annotations] == ["deprecated", "pure"]
    sw = decl(tree, "V1Switch")
    assert isinstance(sw, A.PackageDecl) and sw.type_params == ["H", "M"]
    assert [ty(x.type_ref) for x in sw.params] == [
        "Parser<H, M>", "VerifyChecksum<H, M>", "Ingress<H, M>", "Egress<H, M>",
        "ComputeChecksum<H, M>", "Deparser<H>"]
    prs = decl(tree, "Parser")
    assert isinstance(prs, A.ParserTypeDecl)
    assert [x.name for x in prs.params] == ["b", "parsedHdr", "meta", "standard_metadata"]
    dep = decl(tree, "Deparser")
    assert isinstance(dep, A.ControlTypeDecl) and dep.type_params == ["H"]
    assert [a.name for a in dep.annotations] == ["deparser"]


# ----------------------------------------------------------------- full programs


def test_basic_ipv4_program() -> None:
    tree = parse_file(INPUTS / "basic_ipv4.p4")
    ing = decl(tree, "MyIngress")
    assert isinstance(ing, A.ControlDecl)
    assert [x.direction for x in ing.params] == ["inout", "inout", "inout"]
    assert [type(x).__name__ for x in ing.locals] == ["ActionDecl", "ActionDecl", "TableDecl"]
    t = ing.locals[2]
    assert isinstance(t, A.TableDecl)
    assert [(sx(k.expr), k.match_kind) for k in t.keys] == [("hdr.ipv4.dstAddr", "lpm")]
    assert [sx(a.name) for a in t.actions] == ["ipv4_forward", "drop", "NoAction"]
    assert t.default_action is not None and sx(t.default_action.name) == "drop"
    assert sx(t.size) == "1024"
    fwd = ing.locals[1]
    assert isinstance(fwd, A.ActionDecl)
    assert [(x.direction, ty(x.type_ref), x.name) for x in fwd.params] == [
        ("", "macAddr_t", "dstAddr"), ("", "egressSpec_t", "port")]
    last = fwd.body.stmts[-1]
    assert isinstance(last, A.Assign) and sx(last.value) == "(- hdr.ipv4.ttl 1)"
    (apply_if,) = ing.body.stmts
    assert isinstance(apply_if, A.If) and sx(apply_if.cond) == "(call hdr.ipv4.isValid)"
    vck = decl(tree, "MyVerifyChecksum")
    assert isinstance(vck, A.ControlDecl)
    (call,) = vck.body.stmts
    assert isinstance(call, A.CallStmt)
    args = call.call.args
    assert isinstance(args[1].value, A.ListExpr) and len(args[1].value.elements) == 11
    assert sx(args[3].value) == "HashAlgorithm.csum16"
    prs = decl(tree, "MyParser")
    assert isinstance(prs, A.ParserDecl)
    assert [s.name for s in prs.states] == ["start", "parse_ethernet", "parse_ipv4"]
    assert prs.states[0].transition == "parse_ethernet"
    sel = prs.states[1].transition
    assert isinstance(sel, A.Select)
    assert [sx(e) for e in sel.exprs] == ["hdr.ethernet.etherType"]
    assert [(sx(c.keyset), c.state) for c in sel.cases] == [
        ("TYPE_IPV4", "parse_ipv4"), ("default", "accept")]
    main = tree.decls[-1]
    assert isinstance(main, A.Instantiation) and main.name == "main"
    assert ty(main.type_ref) == "V1Switch"
    assert [sx(a.value) for a in main.args] == [
        "(call MyParser)", "(call MyVerifyChecksum)", "(call MyIngress)", "(call MyEgress)",
        "(call MyComputeChecksum)", "(call MyDeparser)"]
    c = decl(tree, "TYPE_IPV4")
    assert isinstance(c, A.ConstDecl) and ty(c.type_ref) == "bit<16>"
    assert isinstance(c.value, A.IntLit) and c.value.value == 0x800


def test_aggregation_program() -> None:
    tree = parse_file(INPUTS / "aggregation.p4")
    lane = decl(tree, "Lane")
    assert isinstance(lane, A.ControlDecl)
    assert [x.name for x in lane.params] == ["value", "index", "first"]
    assert [(x.name, ty(x.type_ref)) for x in lane.ctor_params] == [("slots", "bit<32>")]
    (sums,) = lane.locals
    assert isinstance(sums, A.Instantiation)
    assert ty(sums.type_ref) == "register<value_t>" and sx(sums.args[0].value) == "slots"
    ing = decl(tree, "AggIngress")
    assert isinstance(ing, A.ControlDecl)
    insts = [x for x in ing.locals if isinstance(x, A.Instantiation)]
    assert [(x.name, ty(x.type_ref)) for x in insts[:4]] == [
        ("bitmaps", "register<bit<32>>"), ("counts", "register<bit<8>>"),
        ("slot_packets", "counter"), ("forward_hits", "direct_counter")]
    assert sx(insts[0].args[0].value) == "(* NUM_SLOTS 2)"
    assert sx(insts[2].args[1].value) == "CounterType.packets_and_bytes"
    t = next(x for x in ing.locals if isinstance(x, A.TableDecl))
    assert [a.name for a in t.annotations] == ["name"]
    assert [a.name for a in t.keys[0].annotations] == ["name"]
    assert t.default_is_const
    assert [(pr.name, sx(pr.value)) for pr in t.properties] == [("counters", "forward_hits")]
    assert [a.name for a in t.actions[1].annotations] == ["defaultonly"]
    body = ing.body.stmts
    first = body[0]
    assert isinstance(first, A.If) and sx(first.cond) == "(! (call hdr.agg.isValid))"
    assert isinstance(first.then, A.Block) and isinstance(first.then.stmts[1], A.Exit)
    assign = body[1]
    assert isinstance(assign, A.Assign)
    assert sx(assign.value) == "(+ (* (cast slot_index_t hdr.agg.version) NUM_SLOTS) hdr.agg.slot)"
    retrans = body[6]
    assert isinstance(retrans, A.If)
    # `&` binds tighter than `!=` in P4
    assert sx(retrans.cond) == "(!= (& meta.seen_bitmap meta.worker_bit) 0)"
    assert isinstance(retrans.then, A.Block)
    assert isinstance(retrans.then.stmts[-1], A.Return) and retrans.then.stmts[-1].value is None
    count = body[9]
    assert isinstance(count, A.Assign)
    assert sx(count.value) == "(? meta.first_contribution 8w1 (+ meta.count 1))"
    lanes = [s for s in body if isinstance(s, A.CallStmt) and "lane" in sx(s.call.callee)]
    assert len(lanes) == 8 and sx(lanes[0].call.callee) == "lane0.apply"
    meta = decl(tree, "metadata_t")
    assert isinstance(meta, A.StructDecl)
    assert [a.name for a in meta.fields[-1].annotations] == ["field_list"]
    enum = decl(tree, "PacketType")
    assert isinstance(enum, A.EnumDecl) and ty(enum.underlying) == "bit<8>"
    assert [(n, sx(v)) for n, v in enum.members] == [
        ("CONSUME", "0x00"), ("HARVEST", "0x01"), ("RETRANSMIT", "0x02")]


def test_features_program() -> None:
    tree = parse_file(INPUTS / "features.p4")
    port = decl(tree, "port_id_t")
    assert isinstance(port, A.TypedefDecl) and port.new_type and ty(port.type_ref) == "bit<9>"
    (tr,) = port.annotations
    assert tr.name == "p4runtime_translation"
    assert [sx(x) for x in tr.body] == ["'p4.org/psa/v1/PortId_t'", "32"]
    pair = decl(tree, "pair_t")
    assert isinstance(pair, A.TypedefDecl) and ty(pair.type_ref) == "tuple<bit<8>, bool>"
    kind = decl(tree, "Kind")
    assert isinstance(kind, A.EnumDecl)
    assert [(n, v.value if isinstance(v, A.IntLit) else v) for n, v in kind.members] == [
        ("PLAIN", 1), ("TAGGED", 2), ("TUNNEL", 15)]
    color = decl(tree, "Color")
    assert isinstance(color, A.EnumDecl) and color.underlying is None
    assert [n for n, _ in color.members] == ["Red", "Green", "Blue"]
    errs = [d for d in tree.decls if isinstance(d, A.ErrorDecl)]
    assert errs[-1].members == ["BadVersion", "TooManyTags"]
    ip = decl(tree, "ip_t")
    assert isinstance(ip, A.HeaderUnionDecl)
    assert [(f.name, ty(f.type_ref)) for f in ip.fields] == [("v4", "ipv4_t"), ("v6", "ipv6_t")]
    vlan = decl(tree, "vlan_t")
    assert isinstance(vlan, A.HeaderDecl) and ty(vlan.fields[1].type_ref) == "bit"
    v4 = decl(tree, "ipv4_t")
    assert isinstance(v4, A.HeaderDecl) and ty(v4.fields[-1].type_ref) == "varbit<320>"
    hdrs = decl(tree, "headers_t")
    assert isinstance(hdrs, A.StructDecl) and ty(hdrs.fields[1].type_ref) == "vlan_t[2]"
    meta = decl(tree, "meta_t")
    assert isinstance(meta, A.StructDecl)
    assert [ty(f.type_ref) for f in meta.fields] == [
        "bit<8>", "Kind", "Color", "bool", "int<8>", "pair_t", "bit<32>", "error"]
    assert [sx(x) for x in meta.fields[6].annotations[0].body] == ["1", "2"]

    acc = decl(tree, "Accumulator")
    assert isinstance(acc, A.ExternDecl) and acc.type_params == ["T"]
    assert [(m.name, m.return_type is None, len(m.params)) for m in acc.methods] == [
        ("Accumulator", True, 1), ("Accumulator", True, 2), ("add", False, 2),
        ("get", False, 2)]
    get = acc.methods[3]
    assert get.type_params == ["R"] and [a.name for a in get.annotations] == ["pure"]
    hook = decl(tree, "Hook")
    assert isinstance(hook, A.ExternDecl)
    assert [(m.name, m.abstract) for m in hook.methods] == [("Hook", False), ("combine", True)]
    assert not any(d.name == "OpaqueThing" for d in tree.decls)  # a forward declaration
    pick = decl(tree, "pick")
    assert isinstance(pick, A.FunctionDecl)
    assert pick.type_params == ["T"] and ty(pick.return_type) == "T"
    (ret,) = pick.body.stmts
    assert isinstance(ret, A.Return) and sx(ret.value) == "(? c a b)"

    prs = decl(tree, "FeatureParser")
    assert isinstance(prs, A.ParserDecl)
    vs, pairs, scratch = prs.locals
    assert isinstance(vs, A.ValueSetDecl) and ty(vs.element) == "bit<16>"
    assert isinstance(pairs, A.ValueSetDecl) and ty(pairs.element) == "tuple<bit<16>, bit<8>>"
    assert isinstance(scratch, A.VarDecl) and sx(scratch.init) == "0"
    states = {s.name: s for s in prs.states}
    sel = states["start"].transition
    assert isinstance(sel, A.Select)
    assert [(sx(c.keyset), c.state) for c in sel.cases] == [
        ("(&&& TYPE_VLAN 0xEFFF)", "parse_vlan"),
        ("TYPE_IPV4", "parse_ipv4"),
        ("16w0x86DD", "parse_ipv6"),
        ("(.. 0x0600 0x06FF)", "accept"),
        ("custom_types", "parse_custom"),
        ("default", "accept")]
    sel = states["parse_vlan"].transition
    assert isinstance(sel, A.Select)
    assert [sx(e) for e in sel.exprs] == ["hdr.vlans.last.ether_type", "meta.depth"]
    assert [sx(c.keyset) for c in sel.cases] == [
        "{TYPE_VLAN 1}", "{default 2}", "{(&&& TYPE_IPV4 0xFFFF) default}", "default"]
    sel = states["parse_ipv4"].transition
    assert isinstance(sel, A.Select)
    assert [sx(c.keyset) for c in sel.cases] == ["(.. 0 5)", "8w6", "{default}"]
    assert states["too_deep"].transition == "reject"
    ext = states["parse_ipv4"].stmts[0]
    assert isinstance(ext, A.CallStmt)
    assert sx(ext.call) == ("(call pkt.extract hdr.ip.v4 "
                            "(* (cast bit<32> (- hdr.ip.v4.ihl 5)) 32))")
    ext6 = states["parse_ipv6"].stmts[0]
    assert isinstance(ext6, A.CallStmt) and sx(ext6.call) == "(call pkt.extract<ipv6_t> hdr.ip.v6)"
    peek, cond, cast = states["parse_custom"].stmts
    assert isinstance(peek, A.DeclStmt) and isinstance(peek.decl, A.VarDecl)
    assert sx(peek.decl.init) == "(call pkt.lookahead<bit<32>>)"
    assert isinstance(cond, A.If) and sx(cond.cond) == "(== peek[31:24] 0)"
    assert isinstance(cast, A.Assign) and sx(cast.value) == "(cast Kind peek[7:0])"

    ing = decl(tree, "FeatureIngress")
    assert isinstance(ing, A.ControlDecl)
    acc_i, regs, meter, color_var = ing.locals[:4]
    assert isinstance(acc_i, A.Instantiation) and ty(acc_i.type_ref) == "Accumulator<bit<32>>"
    assert isinstance(regs, A.Instantiation) and sx(regs.args[0].value) == "32w16"
    assert isinstance(meter, A.Instantiation) and ty(meter.type_ref) == "direct_meter<bit<2>>"
    assert isinstance(color_var, A.VarDecl) and color_var.init is None
    tag = next(x for x in ing.locals if x.name == "tag")
    assert isinstance(tag, A.ActionDecl)
    assert [sx(s.call) if isinstance(s, A.CallStmt) else sx(s.value)  # type: ignore[attr-defined]
            for s in tag.body.stmts[:3]] == [
        "(call hdr.vlans.push_front 1)", "(call hdr.vlans[0].setValid)",
        "{pcp 0 vid hdr.eth.ether_type}"]
    drop = next(x for x in ing.locals if x.name == "drop")
    assert sx(drop.annotations[0].body[0]) == "'.drop_it'"

    acl = next(x for x in ing.locals if x.name == "acl")
    assert isinstance(acl, A.TableDecl)
    assert [(sx(k.expr), k.match_kind) for k in acl.keys] == [
        ("hdr.eth.ether_type", "ternary"), ("hdr.ip.v4.src", "lpm"),
        ("hdr.ip.v4.protocol", "range"), ("meta.flag", "optional")]
    assert [(sx(a.name), [x.name for x in a.annotations]) for a in acl.actions] == [
        ("set_port", []), ("tag", ["tableonly"]), ("drop", ["defaultonly"]),
        (".NoAction", [])]
    assert not acl.entries_const
    assert [e.is_const for e in acl.entries] == [False, True, False, False]
    assert [[sx(k) for k in e.keys] for e in acl.entries] == [
        ["TYPE_IPV4", "(&&& 32w0x0A000000 32w0xFF000000)", "(.. 6 17)", "true"],
        ["(&&& 0x0800 0xFFFF)", "default", "default", "false"],
        ["default", "default", "(.. 1 1)", "default"],
        ["default", "default", "default", "default"]]
    assert [(sx(e.action.name), [sx(a.value) for a in e.action.args]) for e in acl.entries] == [
        ("set_port", ["(cast port_id_t 1)"]), ("tag", ["10", "3"]),
        ("set_port", ["(cast port_id_t 2)"]), (".NoAction", [])]
    assert [sx(e.priority) for e in acl.entries] == ["40", "30", "20", "_"]  # @priority(20)
    assert acl.default_action is not None and sx(acl.default_action.name) == "NoAction"
    assert not acl.default_is_const and sx(acl.size) == "64"
    props = {pr.name: pr for pr in acl.properties}
    assert sx(props["meters"].value) == "tagged_meter"
    assert sx(props["support_timeout"].value) == "false"
    impl = props["implementation"]
    assert sx(impl.value) == "(call action_profile 32w128)"
    assert [a.name for a in impl.annotations] == ["name"]

    cls = next(x for x in ing.locals if x.name == "classify")
    assert isinstance(cls, A.TableDecl) and not cls.entries_const
    assert [(sx(e.priority), e.is_const, [sx(k) for k in e.keys]) for e in cls.entries] == [
        ("10", False, ["Kind.PLAIN"]), ("(+ 5 5)", True, ["Kind.TAGGED"]),
        ("_", False, ["Kind.TUNNEL"])]
    assert sx(cls.largest_priority_wins) == "false" and sx(cls.priority_delta) == "10"

    body = ing.body.stmts
    decls = [s.decl for s in body[:4] if isinstance(s, A.DeclStmt)]
    assert [(type(d).__name__, d.name) for d in decls] == [
        ("VarDecl", "x"), ("VarDecl", "y"), ("VarDecl", "s"), ("ConstDecl", "limit")]
    assert isinstance(decls[2], A.VarDecl) and isinstance(decls[2].init, A.IntLit)
    assert decls[2].init.signed and decls[2].init.width == 8 and decls[2].init.value == 3
    chain = body[4]
    assert isinstance(chain, A.If) and isinstance(chain.other, A.If)
    assert isinstance(chain.other.other, A.Assign)  # `else y = 0;` without braces
    inner = chain.other.then
    assert isinstance(inner, A.Block)
    assert [sx(s.value) for s in inner.stmts] == [  # type: ignore[attr-defined]
        "(|+| (+ x (* x 2)) 3)",
        "(<< (>> (& x 32w0xF0) 4) 1)",
        "(? (== (++ x 16w1) 48w0) 32w1 2)"]
    sw = body[5]
    assert isinstance(sw, A.Switch) and sx(sw.expr) == "(call acl.apply).action_run"
    assert [(sx(c.label), c.body is not None) for c in sw.cases] == [
        ("set_port", True), ("tag", False), ("drop", True), ("default", True)]
    sw2 = body[6]
    assert isinstance(sw2, A.Switch) and sx(sw2.cases[0].label) == "Kind.PLAIN"
    rest = [sx(s.value) if isinstance(s, A.Assign) else  # type: ignore[attr-defined]
            sx(s.call) if isinstance(s, A.CallStmt) else type(s).__name__
            for s in body[8:]]
    assert rest == [
        "(call acc.add index=x value=32w1)",
        "(call acc.get<bit<32>> y 0)",
        "(call regs.read result=y index=3)",
        "(call hash meta.hash HashAlgorithm.crc32 32w0 {hdr.ip.v4.src hdr.ip.v4.dst} 32w65536)",
        "{8w1 true}",
        "(cast int<8> (- s))",
        "error.NoError",
        "(|| (&& (call pick meta.flag true false) (! meta.flag)) (!= x[3:0] 0))",
        "Block",
        "(call clone_preserving_field_list CloneType.I2E 32w5 1)",
        "(call random<bit<32>> y 32w0 32w100)",
        "(call regs.read _ 32w2)"]
    atomic = body[16]
    assert isinstance(atomic, A.Block) and [a.name for a in atomic.annotations] == ["atomic"]

    eg = decl(tree, "FeatureEgress")
    assert isinstance(eg, A.ControlDecl)
    assert [sx(s.value) for s in eg.body.stmts] == [  # type: ignore[attr-defined]
        "(|-| hdr.ip.v4.ttl 1)", "2w3",
        "(++ (call ones_complement_sum {hdr.ip.v4.src hdr.ip.v4.dst}) 16w0)"]
    assert sx(eg.body.stmts[1].target) == "hdr.ip.v4.tos[1:0]"  # type: ignore[attr-defined]


def test_stf_corpus_parses() -> None:
    """Every program of the conformance suite parses (except the one that must not)."""
    programs = sorted(STF_DIR.rglob("*.p4"))
    assert programs
    for path in programs:
        if path.name == "syntax_error.p4":
            with pytest.raises(CompileError):
                parse_file(path)
        else:
            parse_file(path)


def test_parse_work_grows_linearly() -> None:
    """The parser's work (lines run and calls made, counted: not timed) grows by the same step for
    each copy of a 280-line program after v1model.p4: one pass, nothing parsed again."""
    unit = (INPUTS / "aggregation.p4").read_text()
    texts = {n: with_includes(unit * n) for n in (0, 1, 2)}
    _parser()  # building the LALR tables is a one-time cost
    decls: dict[int, int] = {}

    def work(n: int) -> int:
        return work_done(lambda: decls.__setitem__(n, len(p(texts[n]).decls)))

    first, second = work_steps(work, 1)
    assert 0 < first and second <= 1.05 * first, (first, second)
    assert decls[2] - decls[1] == decls[1] - decls[0] > 10, decls


# ----------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a + b * c", "(+ a (* b c))"),
        ("a * b + c", "(+ (* a b) c)"),
        ("a - b - c", "(- (- a b) c)"),
        ("a & b == c", "(== (& a b) c)"),
        ("a == b & c", "(== a (& b c))"),
        ("a | b ^ c & d", "(| a (^ b (& c d)))"),
        ("a | b < c", "(< (| a b) c)"),
        ("a << 2 + 1", "(<< a (+ 2 1))"),
        ("a >> 2 >> 1", "(>> (>> a 2) 1)"),
        ("a < b >> 1", "(< a (>> b 1))"),
        ("a ++ b + c", "(+ (++ a b) c)"),
        ("a |+| b |-| c", "(|-| (|+| a b) c)"),
        ("a % b / c * d", "(* (/ (% a b) c) d)"),
        ("a == b && c != d || e", "(|| (&& (== a b) (!= c d)) e)"),
        ("a || b && c", "(|| a (&& b c))"),
        ("!a && b", "(&& (! a) b)"),
        ("-a.b[1]", "(- a.b[1])"),
        ("~a + +b", "(+ (~ a) (+ b))"),
        ("- -a", "(- (- a))"),
        ("a ? b : c", "(? a b c)"),
        ("a || b ? c : d", "(? (|| a b) c d)"),
        ("a ? b : c || d", "(? a b (|| c d))"),
        ("a ? b ? c : d : e", "(? a (? b c d) e)"),
        ("a ? b : c ? d : e", "(? (? a b c) d e)"),  # p4c groups ?: to the left
        ("a < b > (c)", "(> (< a b) c)"),
        ("(a) - b", "(- a b)"),
        ("(a + b) * c", "(* (+ a b) c)"),
        ("a.b.c[3][7:0]", "a.b.c[3][7:0]"),
        ("f(a)(b)", "(call (call f a) b)"),
        (".x + 1", "(+ .x 1)"),
        ("{a, b, {c}}", "{a b {c}}"),
        ("{}", "{}"),
        ("{a = 1, b = 2,}", "{a=1 b=2}"),
        ("f(x = 1, y = _)", "(call f x=1 y=_)"),
        ("f(_, a)", "(call f _ a)"),
        ("error.NoMatch", "error.NoMatch"),
        ('"a\\"b"', "'a\"b'"),
        ("true && false", "(&& true false)"),
        ("(bit<8>)a + b", "(+ (cast bit<8> a) b)"),
        ("(bit<8>)a.b", "(cast bit<8> a.b)"),
        ("(int<8>)-x", "(cast int<8> (- x))"),
        ("(bit<(W + 1)>)x", "(cast bit<(+ W 1)> x)"),
        ("(bool)x", "(cast bool x)"),
        ("(bit)x", "(cast bit x)"),
    ],
)
def test_expression_shape(text: str, tree: str) -> None:
    assert expr(text) == tree


TYPES = "struct T { }\nenum E { A }\nextern X<Q> { X(); }\nheader H { }\n"


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("f<T>(c)", "(call f<T> c)"),
        ("a < T > (c)", "(call a<T> c)"),  # as in p4c: a type after `<` makes type arguments
        ("a < b > (c)", "(> (< a b) c)"),
        ("x.f<bit<8>>(c)", "(call x.f<bit<8>> c)"),
        ("f<T, bit<8>, _, void>()", "(call f<T, bit<8>, _, void>)"),
        ("f<tuple<T, bool>>()", "(call f<tuple<T, bool>>)"),
        ("f<H[2]>()", "(call f<H[2]>)"),
        ("a < E.A", "(< a E.A)"),
        ("E.A == .E.A", "(== E.A .E.A)"),
        ("(T)x", "(cast T x)"),
        ("(T){1, 2}", "(cast T {1 2})"),
        ("(E) - x", "(cast E (- x))"),
        ("(H[2])x", "(cast H[2] x)"),
        ("X<bit<32>>()", "(call X<bit<32>>)"),
        ("X<T>()", "(call X<T>)"),
        ("T.minSizeInBits()", "(call T.minSizeInBits)"),
    ],
)
def test_type_name_ambiguities(text: str, tree: str) -> None:
    assert expr(text, TYPES) == tree


def test_integer_literals() -> None:
    def lit(text: str) -> tuple[int, int | None, bool]:
        tree = p(f"const bit<8> c = {text};")
        v = tree.decls[0].value  # type: ignore[attr-defined]
        assert isinstance(v, A.IntLit) and v.text == text
        return v.value, v.width, v.signed

    assert lit("5") == (5, None, False)
    assert lit("1_000") == (1000, None, False)
    assert lit("0x1F") == (31, None, False)
    assert lit("0X1f") == (31, None, False)
    assert lit("0b101") == (5, None, False)
    assert lit("0o17") == (15, None, False)
    assert lit("0d19") == (19, None, False)
    assert lit("8w5") == (5, 8, False)
    assert lit("8s3") == (3, 8, True)
    assert lit("16w0xFFFF") == (0xFFFF, 16, False)
    assert lit("32s0x10") == (16, 32, True)
    assert lit("4w0b1010") == (10, 4, False)
    assert lit("9w0o777") == (511, 9, False)
    assert lit("32w1_000_000") == (1000000, 32, False)


# ------------------------------------------------------------------- type names


def test_type_parameters_are_scoped_to_their_declaration() -> None:
    text = """
        extern void f<T, M>(in T a, out M b);
        extern R g<R>();
        extern E<H> { E(); H get<D>(in D d); }
        control Ctl<H, M>(inout H h, inout M m);
        header T2 { bit<8> f; }
        control Use(inout T2 M) {
            bit<8> T = 1;
            bit<8> H = T + 1;
            E<bit<8>>() e;
            apply {
                M.f = T < H ? T : H;
                f(T, H);
                H = g<bit<8>>();
                H = e.get<bit<16>>(16w1) [7:0];
            }
        }
    """
    tree = p(text)
    f = decl(tree, "f")
    assert isinstance(f, A.ExternFunctionDecl)
    assert [ty(x.type_ref) for x in f.params] == ["T", "M"]
    g = decl(tree, "g")
    assert isinstance(g, A.ExternFunctionDecl) and ty(g.return_type) == "R"
    use = decl(tree, "Use")
    assert isinstance(use, A.ControlDecl)
    assert [(x.name, ty(x.type_ref)) for x in use.params] == [("M", "T2")]
    t_var, h_var, e_inst = use.locals
    assert isinstance(h_var, A.VarDecl) and sx(h_var.init) == "(+ T 1)"
    assert isinstance(e_inst, A.Instantiation) and ty(e_inst.type_ref) == "E<bit<8>>"
    assert [sx(s.value) if isinstance(s, A.Assign) else sx(s.call)  # type: ignore[attr-defined]
            for s in use.body.stmts] == [
        "(? (< T H) T H)", "(call f T H)", "(call g<bit<8>>)",
        "(call e.get<bit<16>> 16w1)[7:0]"]


def test_parameters_and_locals_hide_type_names() -> None:
    """As in p4c, a parameter or local with the name of a type is a plain name within
    its scope (and the type is a type again outside it)."""
    tree = p("""
        header h_t { bit<8> a; }
        struct headers { h_t h; }
        struct T { bit<8> f; }
        control C(inout headers headers) {
            action act(bit<8> h_t) { headers.h.a = h_t; }
            h_t saved;
            apply {
                headers.h.setValid();
                { bit<8> T = 1; T = T + 1; }
                T x;
                x.f = headers.h.a;
            }
        }
    """)
    c = decl(tree, "C")
    assert isinstance(c, A.ControlDecl)
    act, saved = c.locals
    assert isinstance(act, A.ActionDecl) and sx(act.body.stmts[0].value) == "h_t"  # type: ignore[attr-defined]
    assert isinstance(saved, A.VarDecl) and ty(saved.type_ref) == "h_t"
    call, block, x, assign = c.body.stmts
    assert isinstance(call, A.CallStmt) and sx(call.call) == "(call headers.h.setValid)"
    assert isinstance(block, A.Block)
    assert sx(block.stmts[1].value) == "(+ T 1)"  # type: ignore[attr-defined]
    assert isinstance(x, A.DeclStmt) and ty(x.decl.type_ref) == "T"  # type: ignore[attr-defined]
    assert isinstance(assign, A.Assign)


def test_type_names_in_statements() -> None:
    prelude = "struct S { bit<8> f; }\nextern Ext { Ext(bit<8> x); void m(); }\n"
    s = stmts("""
        S s;
        S t = { f = 1 };
        .S u;
        Ext(3) e;
        bit<8> b = (bit<8>)s.f;
        s.f = b;
        e.m();
        tuple<bit<8>, S> pair;
        S[3] stack;
    """, prelude)
    kinds = [(type(x.decl).__name__, x.decl.name) if isinstance(x, A.DeclStmt)
             else type(x).__name__ for x in s]
    assert kinds == [
        ("VarDecl", "s"), ("VarDecl", "t"), ("VarDecl", "u"), ("Instantiation", "e"),
        ("VarDecl", "b"), "Assign", "CallStmt", ("VarDecl", "pair"), ("VarDecl", "stack")]
    decls = [x.decl for x in s if isinstance(x, A.DeclStmt)]
    assert [ty(d.type_ref) for d in decls] == [  # type: ignore[attr-defined]
        "S", "S", ".S", "Ext", "bit<8>", "tuple<bit<8>, S>", "S[3]"]
    assert sx(decls[1].init) == "{f=1}"  # type: ignore[attr-defined]


def test_keywords_usable_as_names() -> None:
    tree = p("""
        header h_t { bit<8> type; bit<8> key; bit<8> state; bit<8> entries; bit<8> apply; }
        control C(inout h_t h) {
            bit<8> priority = 1;
            apply {
                h.type = h.key + h.state + h.entries + h.apply;
                priority = priority + 1;
            }
        }
    """)
    h = decl(tree, "h_t")
    assert [f.name for f in h.fields] == ["type", "key", "state", "entries", "apply"]  # type: ignore[attr-defined]
    c = decl(tree, "C")
    assert isinstance(c, A.ControlDecl)
    assert sx(c.body.stmts[0].value) == (  # type: ignore[attr-defined]
        "(+ (+ (+ h.key h.state) h.entries) h.apply)")


def test_shift_versus_closing_type_brackets() -> None:
    s = stmts("""
        register<bit<32>>(1) r;
        bit<32> x = y >> 2;
        x = y >> 2 >> 3;
        value_set_holder<tuple<bit<8>, bit<8>>>(1) v;
    """, "extern register<T> { register(bit<32> n); }\n"
       "extern value_set_holder<T> { value_set_holder(bit<8> n); }")
    r, x, again, v = s
    assert isinstance(r, A.DeclStmt) and ty(r.decl.type_ref) == "register<bit<32>>"  # type: ignore[attr-defined]
    assert isinstance(x, A.DeclStmt) and sx(x.decl.init) == "(>> y 2)"  # type: ignore[attr-defined]
    assert isinstance(again, A.Assign) and sx(again.value) == "(>> (>> y 2) 3)"
    assert isinstance(v, A.DeclStmt)
    assert ty(v.decl.type_ref) == "value_set_holder<tuple<bit<8>, bit<8>>>"  # type: ignore[attr-defined]


# -------------------------------------------------------------- declarations


def test_declaration_forms() -> None:
    tree = p("""
        typedef header inner_t { bit<8> a; } alias_t;
        header G<T> { T f; }
        struct P<T> { T a; G<bit<8>> g; }
        const P<bit<16>> k = { a = 1, g = { f = 2 } };
        extern Obj { Obj(); abstract void cb(in bit<8> x); }
        Obj() o = { void cb(in bit<8> x) { } };
        package Pkg<A1>(A1 a);
        ;
        action a(in bit<8> x, bit<8> y = 3, @optional bit<8> z) { }
        parser Prs<T>(in T t)(bit<8> ctor) { state start { } }
    """)
    names = [(type(d).__name__, d.name) for d in tree.decls]
    assert names == [
        ("HeaderDecl", "inner_t"), ("TypedefDecl", "alias_t"), ("HeaderDecl", "G"),
        ("StructDecl", "P"), ("ConstDecl", "k"), ("ExternDecl", "Obj"),
        ("Instantiation", "o"), ("PackageDecl", "Pkg"), ("ActionDecl", "a"),
        ("ParserDecl", "Prs")]
    alias = tree.decls[1]
    assert isinstance(alias, A.TypedefDecl) and ty(alias.type_ref) == "inner_t"
    g = tree.decls[2]
    assert isinstance(g, A.HeaderDecl) and g.type_params == ["T"]
    st_ = tree.decls[3]
    assert isinstance(st_, A.StructDecl) and ty(st_.fields[1].type_ref) == "G<bit<8>>"
    k = tree.decls[4]
    assert isinstance(k, A.ConstDecl) and sx(k.value) == "{a=1 g={f=2}}"
    o = tree.decls[6]
    assert isinstance(o, A.Instantiation) and o.initializer is not None
    (fdecl,) = o.initializer.stmts
    assert isinstance(fdecl, A.DeclStmt) and isinstance(fdecl.decl, A.FunctionDecl)
    a = tree.decls[8]
    assert isinstance(a, A.ActionDecl)
    assert [(x.direction, x.name, sx(x.default), x.optional) for x in a.params] == [
        ("in", "x", "_", False), ("", "y", "3", False), ("", "z", "_", True)]
    prs = tree.decls[9]
    assert isinstance(prs, A.ParserDecl) and prs.type_params == ["T"]
    assert [x.name for x in prs.ctor_params] == ["ctor"]
    assert prs.states[0].transition is None


def test_annotations() -> None:
    tree = p("""
        @name("x") @id(3) @hidden @my_unknown(a b + (c d) ;)
        @pragma some_opt on 1
        @kv[key = "v", n = 2] @lst[1, "two"]
        @p4runtime_translation("uri", string)
        struct S { }
    """)
    anns = tree.decls[0].annotations
    assert [a.name for a in anns] == [
        "name", "id", "hidden", "my_unknown", "some_opt", "kv", "lst", "p4runtime_translation"]
    name, id_, hidden, unknown, pragma, kv, lst, tr = anns
    assert [sx(x) for x in name.body] == ["'x'"] and name.raw == '"x"'
    assert [sx(x) for x in id_.body] == ["3"]
    assert hidden.body == [] and hidden.raw == ""
    assert unknown.body == [] and unknown.raw == "a b + (c d) ;"
    assert pragma.raw == "on 1"
    assert {k: sx(v) for k, v in kv.kv.items()} == {"key": "'v'", "n": "2"}
    assert [sx(x) for x in lst.body] == ["1", "'two'"]
    assert [sx(x) for x in tr.body] == ["'uri'", "''"]
    assert anns[0].pos == A.Pos(2, 9)


def test_annotation_positions_and_places() -> None:
    tree = p("""
control C(@optional in bit<8> x) {
    @name("t") table t {
        key = { x : exact @name("k"); }
        actions = { @defaultonly NoAction; }
        @name("impl") implementation = action_profile(4);
    }
    apply { @atomic { } }
}
""")
    c = tree.decls[0]
    assert isinstance(c, A.ControlDecl)
    assert c.params[0].optional and c.params[0].pos == A.Pos(2, 21)
    t = c.locals[0]
    assert isinstance(t, A.TableDecl) and t.pos == A.Pos(3, 16)
    assert t.annotations[0].pos == A.Pos(3, 5)
    assert t.keys[0].annotations[0].body[0].pos == A.Pos(4, 33)



def test_table_with_empty_parameter_list() -> None:
    """``table t() { ... }``, an older spelling p4c still accepts, is the same table."""
    tree = p("""
control C(inout bit<8> x) {
    table t() { key = { x : exact; } actions = { NoAction; } }
    apply { t.apply(); }
}
""")
    c = tree.decls[0]
    assert isinstance(c, A.ControlDecl)
    t = c.locals[0]
    assert isinstance(t, A.TableDecl) and t.name == "t" and len(t.keys) == 1
    assert "unexpected" in syntax_error("control C() { table t(bit<8> y) { } apply { } }")

# ----------------------------------------------------------------- statements


def test_statements() -> None:
    s = stmts("""
        ;
        if (a) if (b) x = 1; else x = 2;
        if (a) { } else if (b) { } else { }
        switch (k) { 1: 2: { } 3: { x = 3; } default: }
        switch (t.apply().action_run) { a1: { } default: { exit; } }
        t.apply();
        return;
        return x + 1;
        { bit<8> inner; inner = 1; }
        exit;
    """)
    kinds = [type(x).__name__ for x in s]
    assert kinds == ["Empty", "If", "If", "Switch", "Switch", "CallStmt", "Return", "Return",
                     "Block", "Exit"]
    nested = s[1]
    assert isinstance(nested, A.If) and nested.other is None  # the else is the inner if's
    assert isinstance(nested.then, A.If) and isinstance(nested.then.other, A.Assign)
    chain = s[2]
    assert isinstance(chain, A.If) and isinstance(chain.other, A.If)
    sw = s[3]
    assert isinstance(sw, A.Switch)
    assert [(sx(c.label), c.body is not None) for c in sw.cases] == [
        ("1", False), ("2", True), ("3", True), ("default", False)]
    assert isinstance(s[7], A.Return) and sx(s[7].value) == "(+ x 1)"


def test_for_statements() -> None:
    s = stmts("""
        for (bit<8> i = 0, j = 1; i < n; i = i + 1, f(i)) { if (i == 2) { continue; } break; }
        for (; x < 3;) x = x + 1;
        for (T e in hs) { }
        @unroll for (bit<8> k in lo .. hi + 1) ;
        for (bit<4> v in {1, 2, 3}) { }
    """, prelude="header T { bit<8> f; }\n")
    three = s[0]
    assert isinstance(three, A.For)
    assert [type(x).__name__ for x in three.init] == ["DeclStmt", "Assign"]
    assert sx(three.cond) == "(< i n)"
    assert [type(x).__name__ for x in three.updates] == ["Assign", "CallStmt"]
    assert isinstance(three.body, A.Block)
    assert [type(x).__name__ for x in three.body.stmts] == ["If", "Break"]
    empty = s[1]
    assert isinstance(empty, A.For) and empty.init == [] and empty.updates == []
    assert isinstance(empty.body, A.Assign)
    stack = s[2]
    assert isinstance(stack, A.ForIn) and stack.var.name == "e" and sx(stack.collection) == "hs"
    assert ty(stack.var.type_ref) == "T"
    rng = s[3]
    assert isinstance(rng, A.ForIn) and sx(rng.collection) == "(.. lo (+ hi 1))"
    assert [a.name for a in rng.annotations] == ["unroll"] and isinstance(rng.body, A.Empty)
    listed = s[4]
    assert isinstance(listed, A.ForIn) and sx(listed.collection) == "{1 2 3}"


def test_for_body_closes_like_an_if_body() -> None:
    # the else belongs to the if inside the loop body
    s = stmts("if (a) for (;b;) if (c) x = 1; else x = 2;")
    outer = s[0]
    assert isinstance(outer, A.If) and outer.other is None
    loop = outer.then
    assert isinstance(loop, A.For) and isinstance(loop.body, A.If)
    assert loop.body.other is not None


def test_for_needs_a_condition() -> None:
    assert syntax_error("control C() { apply { for (;;) { } } }") == \
        '<input>(1): error: syntax error, unexpected ";"'


def test_switch_label_may_not_start_with_a_brace() -> None:
    s = stmts("switch (k) { 1: { } (2): { } -3: { } }")
    sw = s[0]
    assert isinstance(sw, A.Switch)
    assert [sx(c.label) for c in sw.cases] == ["1", "2", "(- 3)"]


def test_direct_application_declares_a_fresh_instance() -> None:
    tree = p("control Sub(inout bit<8> v) { apply { } }\n"
             "control C(inout bit<8> x) { bit<8> y = 0; apply {\n"
             "  Sub.apply(x);\n  Sub.apply(y);\n} }\n")
    c = tree.decls[-1]
    assert isinstance(c, A.ControlDecl)
    insts = [d for d in c.locals if isinstance(d, A.Instantiation)]
    assert len(insts) == 2 and insts[0].name != insts[1].name
    assert all(sx_ref == "Sub" for sx_ref in (ty(i.type_ref) for i in insts))
    calls = [s for s in c.body.stmts if isinstance(s, A.CallStmt)]
    assert [sx(s.call.callee) for s in calls] == [f"{i.name}.apply" for i in insts]
    # p4c's control-plane name, the type's, for each (so two with tables clash in P4Info)
    assert [[a.name for a in i.annotations] for i in insts] == [["name"], ["name"]]


def test_unsupported_constructs() -> None:
    s = stmts("this.x = 1;")
    assert isinstance(s[0], A.Assign) and isinstance(s[0].target, A.Member)
    assert isinstance(s[0].target.expr, A.Unsupported)
    diags = Diagnostics()
    with pytest.raises(CompileError):
        parse("extern E { E(match_kind k); }", diags)
    assert diags.errors[0].message == "unsupported: the match_kind type"


# ------------------------------------------------------------------- positions


def test_positions() -> None:
    tree = p("""header h_t {
    bit<8> a;
}
control C(inout h_t h) {
    action act(bit<8> v) { h.a = v + 1; }
    apply {
        if (h.a == 2) {
            act(3);
        }
    }
}
""")
    h = tree.decls[0]
    assert isinstance(h, A.HeaderDecl)
    assert h.pos == A.Pos(1, 1) and h.fields[0].pos == A.Pos(2, 5)
    c = tree.decls[1]
    assert isinstance(c, A.ControlDecl) and c.pos == A.Pos(4, 1)
    assert c.params[0].pos == A.Pos(4, 11) and c.params[0].type_ref.pos == A.Pos(4, 17)
    act = c.locals[0]
    assert isinstance(act, A.ActionDecl) and act.pos == A.Pos(5, 5)
    assign = act.body.stmts[0]
    assert isinstance(assign, A.Assign) and assign.pos == A.Pos(5, 28)
    assert isinstance(assign.value, A.Binary) and assign.value.pos == A.Pos(5, 34)
    assert assign.value.right.pos == A.Pos(5, 38)
    cond = c.body.stmts[0]
    assert isinstance(cond, A.If) and cond.pos == A.Pos(7, 9)
    assert cond.cond.pos == A.Pos(7, 13)
    assert isinstance(cond.then, A.Block) and cond.then.pos == A.Pos(7, 23)
    call = cond.then.stmts[0]
    assert isinstance(call, A.CallStmt) and call.pos == A.Pos(8, 13)
    assert call.call.args[0].pos == A.Pos(8, 17)


# --------------------------------------------------------------- syntax errors


def test_missing_semicolon() -> None:
    text = "control C(inout bit<8> x) {\n    apply {\n        x = 1\n        x = 2;\n    }\n}\n"
    assert syntax_error(text) == '<input>(4): error: syntax error, unexpected IDENTIFIER "x"'


def test_syntax_error_lists_few_expected_tokens() -> None:
    msg = syntax_error("header h {\n  bit<8> a\n}\n")
    assert msg == '<input>(3): error: syntax error, unexpected "}", expecting ";"'


def test_syntax_error_positions_with_source_map() -> None:
    src = preprocess_text("#include <core.p4>\nstruct s { bit<8> a; }\nparser p() { state }\n",
                          "prog.p4")
    diags = Diagnostics(src, "prog.p4")
    with pytest.raises(CompileError) as info:
        parse(src.text, diags)
    (d,) = info.value.diagnostics
    assert (d.file, d.line, d.col) == ("prog.p4", 3, 20)
    assert d.message == 'syntax error, unexpected "}"'
    assert d.format().endswith("parser p() { state }\n                   ^")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo_t x;", 'syntax error, unexpected IDENTIFIER "foo_t"'),
        ("control C() { apply { foo_t x; } }", 'syntax error, unexpected IDENTIFIER "x"'),
        ("control C() { apply {", "syntax error, unexpected end of file"),
        ("const bit<8> x = 1 $ 2;", 'syntax error, unexpected character "$"'),
        ('const string s = "abc;', "syntax error, unterminated string literal"),
        ("const bit<8> x = 5 5;", 'syntax error, unexpected INTEGER "5"'),
        ("const bit<8> x = 0x_;", "0x_: invalid integer literal"),
        ("control C() { apply { if (x) else { } } }", "syntax error, unexpected ELSE"),
        ("struct S { } const bit<8> x = 1 S;", 'syntax error, unexpected TYPE_IDENTIFIER "S"'),
        ("@name(1 2) struct S { }", "@name: syntax error in annotation body"),
        ("table t { }", "syntax error, unexpected TABLE"),
        ("control C() { table t { key = { } foo = 1 } apply { } }",
         'syntax error, unexpected "}", expecting ";"'),
        ("control C() { table t { size = 1; size = 2; } apply { } }",
         "size: duplicate table property"),
    ],
)
def test_syntax_errors(text: str, message: str) -> None:
    diags = Diagnostics()
    with pytest.raises(CompileError):
        parse(text, diags)
    assert diags.errors[0].message == message


_FUZZ_TOKENS = [
    "header", "struct", "control", "parser", "state", "apply", "table", "key", "actions",
    "extern", "action", "transition", "select", "if", "else", "switch", "default", "_",
    "bit", "<", ">", ">>", "(", ")", "{", "}", "[", "]", ";", ",", ":", ".", "=", "@",
    "x", "T", "8w5", "0x1F", '"s"', "&&&", "..", "+", "-", "?", "!", "const", "typedef",
    "enum", "return", "exit", "this", "value_set", "tuple", "entries", "priority",
    "0x_", "8w0b_", "@name(", "$", '"', "typedef bit<8> T;", "extern", "T<", "x<T>(",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FUZZ_TOKENS), max_size=40))
def test_no_lark_exception_escapes(words: list[str]) -> None:
    text = "struct T { }\n" + " ".join(words)
    try:
        tree = parse(text, Diagnostics())
    except CompileError as e:
        assert e.diagnostics and all(d.severity in ("error", "warning") for d in e.diagnostics)
    else:
        assert isinstance(tree, A.SourceFile)


def test_program_with_includes_parses() -> None:
    tree = p(with_includes("""
        struct H { } struct M { }
        parser P(packet_in b, out H h, inout M m, inout standard_metadata_t s) {
            state start { transition accept; } }
        control V(inout H h, inout M m) { apply { } }
        control I(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
        control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
        control K(inout H h, inout M m) { apply { } }
        control D(packet_out b, in H h) { apply { b.emit(h); } }
        V1Switch(P(), V(), I(), E(), K(), D()) main;
    """))
    main = tree.decls[-1]
    assert isinstance(main, A.Instantiation) and len(main.args) == 6
