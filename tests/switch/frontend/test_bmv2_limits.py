"""The BMv2 target checks (``switch/frontend/check/check_bmv2_limits.py``) on what they
must let through: the near neighbours of each rejected construct, and the operators
p4c folds before it judges them (``simplify_as_p4c.py``: ``16w0 >> f(x)``), all of which
p4c-bm2-ss compiles; and on the neighbours they must still reject. The other rejected
programs are golden programs (``golden/target_errors``). ``test_p4c_differential.py``
compiles all of these with p4c-bm2-ss too, and checks that it accepts and rejects the
same ones.
"""

from __future__ import annotations

import pytest

from switch.frontend import CompileError, compile_text

HEAD = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> w; }
struct headers { h_t h; h_t h2; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }
"""
PARSER = """parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
"""
VC = "control VC(inout headers h, inout metadata m) { apply { } }\n"
CC = "control CC(inout headers h, inout metadata m) { apply { } }\n"
DEP = "control D(packet_out b, in headers h) { apply { b.emit(h.h); } }\n"


def program(ingress: str = "", locals_: str = "", top: str = "", parser: str = PARSER,
            vc: str = VC, cc: str = CC, dep: str = DEP) -> str:
    return (HEAD + top + parser + vc
            + "control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {\n"
            + locals_ + "    apply {\n" + ingress + "\n    }\n}\n"
            + "control E(inout headers h, inout metadata m, inout standard_metadata_t sm) "
            + "{ apply { } }\n" + cc + dep + "V1Switch(P(), VC(), I(), E(), CC(), D()) main;\n")


TABLE = "    table t { key = { h.h.a : exact; } actions = { NoAction; } }\n"
SUB = "control Sub(inout bit<8> v) { apply { v = v + 1; } }\n"
# Functions with a side effect, for the operators p4c folds around a call.
CALLS = """bit<16> f(inout bit<16> x) { x = x + 1; return x; }
bit<8> g(inout bit<8> x) { x = x + 1; return x; }
"""
STACKS = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> more; }
header w_t { bit<16> w; }
header_union u_t { h_t h; w_t w; }
struct headers { h_t[4] s; u_t u; }
struct metadata { bit<8> x; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.s.next);
        m.x = h.s.last.a;
        transition select(h.s.last.more) { 0: accept; default: start; }
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
DEAD_STATE = """
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition %s }
    state dead { mark_to_drop(sm); h.h.a = h.h.a / h.h.b; transition accept; }
}
"""

ACCEPTED = {
    "shift by an 8-bit amount": program("h.h.w = h.h.w << m.x; h.h.w = h.h.w >> h.h.b;"),
    "shift by a narrowed amount": program("h.h.w = (bit<32>)1 << (bit<8>)m.y;"),
    "shift that folds": program("h.h.w = (bit<32>)1 << 16w3; h.h.w = h.h.w << 31;"),
    "division by powers of two": program("h.h.a = h.h.a / 4; h.h.c = h.h.c % 16w8;"),
    "division that folds": program("h.h.a = 8w100 / 8w7 + (bit<8>)(17 % 5);"),
    "three-clause for in an action": program(
        "count();", "    action count() { for (bit<8> i = 0; i < h.h.a; i = i + 1) "
        "{ m.x = m.x + 1; } }\n"),
    "table applied on two branches": program(
        "if (h.h.a == 1) { t.apply(); } else { t.apply(); }", TABLE),
    "table applied on the cases of a switch": program(
        "switch (h.h.a) { 1: { t.apply(); } default: { t.apply(); } }", TABLE),
    "table applied before a return and after the if": program(
        "if (h.h.a == 1) { t.apply(); return; } t.apply();", TABLE),
    "table applied on two branches, then more": program(
        "if (h.h.a == 1) { t.apply(); } else { t.apply(); } m.x = 1;", TABLE),
    "sub-control without tables applied twice": program(
        "s.apply(h.h.a); s.apply(h.h.b); Sub.apply(h.h.a); Sub.apply(h.h.b);",
        "    Sub() s;\n", SUB),
    "parser statements BMv2 runs": program(parser="""
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.h);
        m.y = b.lookahead<bit<16>>();
        b.advance(8);
        if (h.h.a == 1) { h.h2.setValid(); } else { m.x = 2; }
        verify(h.h.b != 0, error.NoMatch);
        log_msg("a={}", { h.h.a });
        transition accept;
    }
}
"""),
    "a value set as a whole keyset": program(parser="""
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) vs;
    state start {
        b.extract(h.h);
        transition select(h.h.a) { vs: accept; default: reject; }
    }
}
"""),
    "checksum functions in their controls": program(
        vc="""control VC(inout headers h, inout metadata m) {
    apply { verify_checksum(h.h.isValid(), { h.h.a, h.h.b }, h.h.c, HashAlgorithm.csum16); }
}
""",
        cc="""control CC(inout headers h, inout metadata m) {
    apply {
        update_checksum(true, { h.h.a }, h.h.c, HashAlgorithm.csum16);
        update_checksum_with_payload(true, { h.h.b }, h.h.c, HashAlgorithm.csum16);
    }
}
"""),
    "deparser emits and logs": program(
        dep="control D(packet_out b, in headers h) { apply { log_msg(\"out\"); b.emit(h); } }\n"),
    # p4c judges shifts and divisions once it has folded what it can, with every call
    # moved out of the expression (it still runs)
    "shift and modulo of 0 by a call": program(
        "h.h.c = 16w0 >> f(h.h.c); h.h.c = 16w0 << f(h.h.c) + 1; h.h.a = 8w0 % g(h.h.b); "
        "h.h.a = 8w0 / g(h.h.b); h.h.a = (8w0 % g(h.h.b)) |+| 1;", top=CALLS),
    "shift by an amount that folds to 0": program(
        "h.h.c = h.h.c << 16w0; h.h.c = h.h.c << (16w0 & f(h.h.c)); "
        "h.h.c = h.h.c << (h.h.c - h.h.c);", top=CALLS),
    "division whose value folds": program(
        "h.h.a = (h.h.a / h.h.b) * 0; h.h.a = (h.h.a / h.h.b) & 0; h.h.a = 8w0 / h.h.b; "
        "h.h.a = (h.h.a / h.h.b) ^ (h.h.a / h.h.b); h.h.a = 8w0 |-| (h.h.a % h.h.b); "
        "m.x = (h.h.a / g(h.h.b)) * 0;", top=CALLS),
    "comparisons that fold": program(
        "m.x = (bit<8>)(bit<1>)((h.h.a / h.h.b == 1) && false); "
        "m.x = (bit<8>)(bit<1>)(h.h.a / h.h.b >= 0); "
        "m.x = (bit<8>)(bit<1>)(h.h.a / h.h.b == h.h.a / h.h.b); "
        "m.x = (bit<8>)(bit<1>)(h.h.a / h.h.b >= (8w0 & g(m.x)));", top=CALLS),
    "slices that drop the operator": program(
        "h.h.a = (h.h.w >> 16w3)[7:0]; h.h.a = (h.h.w << 16w3)[7:0]; "
        "h.h.a = (h.h.a ++ h.h.a / h.h.b)[15:8]; h.h.a = (h.h.a ++ h.h.a / g(h.h.b))[15:8];",
        top=CALLS),
    "a divisor that isValid() leaves constant": program(
        "h.h.a = h.h.a / ((8w0 & (bit<8>)(bit<1>)h.h.isValid()) | 4);"),
    "branches a constant condition leaves out": program(
        "if (false) { h.h.a = h.h.a / h.h.b; } if (h.h.a < 0) { h.h.c = h.h.c << m.y; } "
        "if ((8w0 & g(h.h.b)) != 0) { h.h.a = h.h.a / h.h.b; } "
        "if (false) { t.apply(); } t.apply();", TABLE, top=CALLS),
    "parser states no packet reaches": program(parser=DEAD_STATE % "accept;"),
    "parser states a constant select leaves out": program(
        parser=DEAD_STATE % "select(8w1) { 0: dead; default: accept; }"),
    "one lpm key among others": program(
        "routes.apply();", "    table routes { key = { h.h.w : lpm; h.h.c : ternary; "
        "h.h.a : exact; } actions = { NoAction; } }\n"),
    "entries of numbers and bools, a key of errors": program(
        "t.apply(); u.apply();",
        "    table t { key = { h.h.isValid() : exact; h.h.a : ternary; } actions = { "
        "NoAction; } const entries = { (true, 1 &&& 3) : NoAction(); } }\n"
        "    table u { key = { sm.parser_error : exact; } actions = { NoAction; } }\n"),
    "checksum data of fields and constants": program(cc="""
control CC(inout headers h, inout metadata m) {
    apply {
        update_checksum(true, { h.h.a, 8w0 | h.h.b, 16w7, m.x }, h.h.c, HashAlgorithm.csum16);
    }
}
"""),
    "a direct meter read in its table's action": program(
        "t.apply();", "    direct_meter<bit<8>>(MeterType.packets) dm;\n"
        "    action color() { dm.read(m.x); }\n"
        "    table t { key = { h.h.a : exact; } actions = { color; NoAction; } meters = dm; }\n"),
    "headers of a stack and a union, next extracted, last read": STACKS,
    "a header of odd width only declared": program(
        top="@controller_header(\"packet_in\") header odd_t { bit<9> port; bit<9> to; }\n"),
    "v1model externs BMv2 has": program(
        "mark_to_drop(sm); hash(m.z, HashAlgorithm.crc32, 32w0, h.h, 32w1024); "
        "log_msg(\"{}\", { h.h.a }); clone(CloneType.I2E, 5); truncate(64); r.write(0, 1); "
        "random(m.x, 0, 7); digest(1, h.h.a);",
        "    register<bit<8>>(4) r;\n"),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_compiles(name: str) -> None:
    try:
        compile_text(ACCEPTED[name], "test.p4")
    except CompileError as e:
        pytest.fail(f"{name}:\n{e}")


NEIGHBOURS = [
    ("h.h.w = h.h.w << m.y;", "h.h.w << m.y: shift amount limited to 8 bits on this target"),
    ("h.h.a = h.h.a / 3;", "h.h.a / 3: could not evaluate expression at compilation time"),
    ("t.apply(); if (h.h.a == 2) { t.apply(); }",
     "Program can not be implemented on this target since it contains a path from table "
     "I.t back to itself"),
    ("if (h.h.a == 1) { t.apply(); exit; } t.apply();",
     "Program is not supported by this target, because table I.t has multiple successors"),
    ("if (h.h.a == 1) { t.apply(); m.x = 1; } else { t.apply(); }",
     "Program is not supported by this target, because table I.t has multiple successors"),
]


@pytest.mark.parametrize("body, message", NEIGHBOURS)
def test_the_neighbours_are_rejected_with_their_class(body: str, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_text(program(body, TABLE), "test.p4")
    [d] = [d for d in info.value.diagnostics if d.severity == "error"]
    assert d.message == message
    assert d.kind in ("overlimit", "invalid")
    assert d.format().startswith(f"test.p4({d.line}): [--Werror={d.kind}] error: ")


# What p4c folds does not save these: the operator it judges is still there.
REJECTED = {
    "a 16-bit amount that folds to a constant": (
        "h.h.c = h.h.c << ((16w0 & f(h.h.c)) + 16w3);",
        "h.h.c << 16w3: shift amount limited to 8 bits on this target"),
    "shifts that add up to more than 256": (
        "h.h.c = (h.h.c << 200) << 100;",
        "h.h.c << 300: shift amount limited to 256 on this target"),
    "x && false where x calls something": (
        "m.x = (bit<8>)(bit<1>)((g(h.h.a) / h.h.b == 1) && false);",
        "g(h.h.a) / h.h.b: could not evaluate expression at compilation time"),
    "a left operand the call writes": (
        "m.x = (bit<8>)(bit<1>)(h.h.a / h.h.b >= (8w0 & g(h.h.b)));",
        "h.h.a / h.h.b: could not evaluate expression at compilation time"),
    "the same division on both branches": (
        "h.h.a = m.x == 1 ? h.h.a / h.h.b : h.h.a / h.h.b;",
        "h.h.a / h.h.b: could not evaluate expression at compilation time"),
    "a slice of bits the shift moves in": (
        "h.h.a = (h.h.w >> 16w3)[31:24];",
        "h.h.w >> 16w3: shift amount limited to 8 bits on this target"),
    "a divisor that folds to 0": (
        "h.h.a = h.h.a / (8w0 & g(h.h.b));", "h.h.a / 8w0: Division by zero"),
}


def rejected_program(name: str) -> str:
    return program(REJECTED[name][0], TABLE, top=CALLS)


@pytest.mark.parametrize("name", list(REJECTED))
def test_what_p4c_still_judges_is_rejected(name: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_text(rejected_program(name), "test.p4")
    [d] = [d for d in info.value.diagnostics if d.severity == "error"]
    assert d.message == REJECTED[name][1]
