"""Header unions, sub-parsers, sub-controls with scalar parameters, struct lookahead,
tables with an action selector, const entries, ternary priorities."""

from __future__ import annotations

from v1helpers import eth, program

from switch.engine.runtime import Exact, Ternary

UNION = program(
    headers="""
header a_t { bit<8> v; }
header b_t { bit<16> v; }
header_union u_t { a_t a; b_t b; }
struct H { ethernet_t e; u_t u; }
""",
    decls="""
parser Sub(packet_in b, out u_t u, in bit<16> kind) {
    state start { transition select(kind) { 1: pa; default: pb; } }
    state pa { b.extract(u.a); transition accept; }
    state pb { b.extract(u.b); transition accept; }
}
control Bump(inout bit<8> x, in bit<8> by) { apply { x = x + by; } }
""",
    parser="""
    Sub() sub;
    state start { b.extract(h.e); sub.apply(b, h.u, h.e.etype); transition accept; }
""",
    ingress="""
    Bump() bump;
    apply {
        sm.egress_spec = 1;
        if (h.u.a.isValid()) {
            bump.apply(h.u.a.v, 2);
        } else if (h.e.etype == 3) {
            h.u.a.setValid();
            h.u.a.v = 0x55;
        }
        h.e.src = h.u.isValid() ? 48w1 : 48w0;
    }
""",
    deparser="b.emit(h.e); b.emit(h.u);",
)


def test_union_subparser_subcontrol(build):
    sw = build(UNION)
    assert sw.inject(0, eth(etype=1) + b"\x10rest")[0][1] == eth(src=1, etype=1) + b"\x12rest"
    assert sw.inject(0, eth(etype=2) + b"\x10\x20x")[0][1] == eth(src=1, etype=2) + b"\x10\x20x"
    # etype 3: b extracted, then a set valid (b invalidated)
    assert sw.inject(0, eth(etype=3) + b"\x10\x20")[0][1] == eth(src=1, etype=3) + b"\x55"


LOOK_STRUCT = program(
    headers="""
header b8_t { bit<8> v; }
struct pair_t { bit<4> hi; bit<4> lo; }
struct H { ethernet_t e; b8_t x; }
""",
    parser="""
    state start {
        b.extract(h.e);
        pair_t p = b.lookahead<pair_t>();
        transition select(p.hi, p.lo) { (1, 2): take; default: accept; }
    }
    state take { b.extract(h.x); h.x.v = h.x.v + 1; transition accept; }
""",
    ingress="apply { sm.egress_spec = 1; }",
    deparser="b.emit(h.e); b.emit(h.x);",
)


def test_lookahead_struct(build):
    sw = build(LOOK_STRUCT)
    assert sw.inject(0, eth() + b"\x12")[0][1] == eth() + b"\x13"
    assert sw.inject(0, eth() + b"\x13")[0][1] == eth() + b"\x13"


TABLES = program(
    ingress="""
    action set(bit<9> p) { sm.egress_spec = p; }
    action_selector(HashAlgorithm.crc16, 32w16, 32w10) sel;
    table ecmp {
        key = { h.e.dst: exact; h.e.src: selector; }
        actions = { set; }
        implementation = sel;
    }
    table acl {
        key = { h.e.etype: ternary; h.e.dst: lpm; }
        actions = { set; NoAction; }
        const entries = {
            (0x0800 &&& 0xff00, _): set(7);
            (_, 0x000000000005 &&& 0xffffffffffff): set(8);
        }
    }
    table tern {
        key = { h.e.etype: ternary; }
        actions = { set; NoAction; }
    }
    apply {
        sm.egress_spec = 1;
        ecmp.apply();
        acl.apply();
        tern.apply();
    }
""",
)


def test_selector_const_entries_priorities(build):
    sw = build(TABLES)
    sw.table_add("ecmp", {"h.e.dst": Exact(9)}, "set", [4])
    assert sw.inject(0, eth(dst=9))[0][0] == 4
    # const entries: the first listed wins
    assert sw.inject(0, eth(dst=5, etype=0x0801))[0][0] == 7
    assert sw.inject(0, eth(dst=5, etype=0x0901))[0][0] == 8
    sw.table_add("tern", [Ternary(0x1200, 0xFF00)], "set", [20], priority=1)
    sw.table_add("tern", [Ternary(0x1234, 0xFFFF)], "set", [21], priority=2)
    assert sw.inject(0, eth(etype=0x1234))[0][0] == 21
    assert sw.inject(0, eth(etype=0x1235))[0][0] == 20
