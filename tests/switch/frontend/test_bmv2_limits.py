"""The BMv2 target checks (``switch/frontend/check/check_bmv2_limits.py``) on what they
must let through: the near neighbours of each rejected construct, all of which
p4c-bm2-ss compiles. The rejected ones are golden programs
(``golden/target_errors``); ``test_p4c_differential.py`` compares both with p4c-bm2-ss.
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


@pytest.mark.parametrize("body, message", [
    ("h.h.w = h.h.w << m.y;", "h.h.w << m.y: shift amount limited to 8 bits on this target"),
    ("h.h.a = h.h.a / 3;", "h.h.a / 3: could not evaluate expression at compilation time"),
    ("t.apply(); if (h.h.a == 2) { t.apply(); }",
     "Program can not be implemented on this target since it contains a path from table "
     "I.t back to itself"),
    ("if (h.h.a == 1) { t.apply(); exit; } t.apply();",
     "Program is not supported by this target, because table I.t has multiple successors"),
    ("if (h.h.a == 1) { t.apply(); m.x = 1; } else { t.apply(); }",
     "Program is not supported by this target, because table I.t has multiple successors"),
])
def test_the_neighbours_are_rejected_with_their_class(body: str, message: str) -> None:
    with pytest.raises(CompileError) as info:
        compile_text(program(body, TABLE), "test.p4")
    [d] = [d for d in info.value.diagnostics if d.severity == "error"]
    assert d.message == message
    assert d.kind in ("overlimit", "invalid")
    assert d.format().startswith(f"test.p4({d.line}): [--Werror={d.kind}] error: ")
