"""``codegen_alias``: which aggregate arguments a call copies (the others are passed by
reference, which nobody can tell apart). The behaviour itself is tested on both
targets by tests/stf/control/copy_in_out_aliasing.p4; here, that the analysis copies
only where it must, so that ordinary calls stay as cheap as before."""

from __future__ import annotations

import pytest

from switch.engine.codegen_alias import action_reach, copied_arguments, may_overlap
from switch.frontend import ast as A
from switch.frontend import compile_text

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; h_t g; h_t[2] s; }
struct meta_t { bit<8> i; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action own_only(inout h_t x, in h_t y) { bit<8> t = y.a; x.a = t; }
    action writes_hdr(inout h_t x) { hdr.g.b = 1; x.a = 2; }
    action calls_writer(inout h_t x) { writes_hdr(hdr.s[0]); x.a = 3; }
    action reads_meta(inout h_t x) { x.a = meta.i; }
    apply {
        CALL;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def call_of(text: str) -> tuple[A.ActionDecl, A.Call]:
    prog = compile_text(PROGRAM.replace("CALL", text), "alias.p4")
    block = prog.pipeline["ig"].decl
    assert isinstance(block, A.ControlDecl)
    stmt = block.body.stmts[0]
    assert isinstance(stmt, A.CallStmt) and isinstance(stmt.call.target, A.CallAction)
    return stmt.call.target.action, stmt.call


def copied(text: str) -> set[int]:
    action, call = call_of(text)
    args = call.resolved_args
    return copied_arguments(action.params, args, [True] * len(args), action_reach(action))


@pytest.mark.parametrize(("call", "expected"), [
    ("own_only(hdr.h, hdr.g)", set()),  # the action reaches only its parameters
    ("own_only(hdr.h, hdr.h)", {0, 1}),  # the same header, written through one of them
    ("own_only(hdr.s[0], hdr.s[1])", set()),  # different stack elements
    ("own_only(hdr.s[meta.i], hdr.s[1])", {0, 1}),  # maybe the same element
    ("writes_hdr(hdr.h)", {0}),  # writes hdr.g: the same root as the argument
    ("calls_writer(hdr.h)", {0}),  # so does the action it calls
    ("reads_meta(hdr.h)", set()),  # meta is not the argument's root
])
def test_copied_arguments(call: str, expected: set[int]) -> None:
    assert copied(call) == expected


def test_overlap_follows_members_and_constant_indices() -> None:
    _action, call = call_of("own_only(hdr.s[0], hdr.s[1])")
    first, second = call.resolved_args
    assert first is not None and second is not None
    assert not may_overlap(first, second)
    assert may_overlap(first, first)
