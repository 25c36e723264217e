"""Compound assignments (``a op= b``, P4_16 1.2.4): parsed as ``a = a op b`` with
``Assign.op`` set, checked as that assignment, statements only (also in ``for``
clauses), and run with the l-value evaluated once. Each syntax error and type error
below is one p4c 1.2.5.16 also reports (its wording differs where noted)."""

from __future__ import annotations

import random

import pytest

from switch.frontend import CompileError, compile_text
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.diagnostics import Diagnostics
from switch.frontend.parser import parse

OPS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "|+|", "|-|"]

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; int<8> c; }
struct headers_t { h_t h; h_t[2] s; }
struct meta_t { bit<8> m; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    LOCALS
    apply {
        sm.egress_spec = 1;
        BODY
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def program(body: str, locals_: str = "") -> str:
    return PROGRAM.replace("BODY", body).replace("LOCALS", locals_)


def statements(text: str) -> list[A.Stmt]:
    tree = parse("control C() { apply {\n" + text + "\n} }\n", Diagnostics())
    c = tree.decls[-1]
    assert isinstance(c, A.ControlDecl)
    return c.body.stmts


def errors(src: str) -> list[str]:
    with pytest.raises(CompileError) as info:
        compile_text(src, "test.p4")
    return [d.format() for d in info.value.diagnostics if d.severity == "error"]


def text_of(e: A.Expr) -> str:
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Member):
        return f"{text_of(e.expr)}.{e.name}"
    if isinstance(e, A.Index):
        return f"{text_of(e.expr)}[{text_of(e.index)}]"
    if isinstance(e, A.Slice):
        return f"{text_of(e.expr)}[{text_of(e.hi)}:{text_of(e.lo)}]"
    if isinstance(e, A.IntLit):
        return e.text
    if isinstance(e, A.Binary):
        return f"({e.op} {text_of(e.left)} {text_of(e.right)})"
    raise AssertionError(e)


# ----------------------------------------------------------------------- parsing


@pytest.mark.parametrize("op", OPS)
def test_each_operator_parses_as_the_plain_assignment(op: str) -> None:
    (s,) = statements(f"x.y {op}= z;")
    assert isinstance(s, A.Assign)
    assert s.op == op
    assert text_of(s.target) == "x.y"
    assert text_of(s.value) == f"({op} x.y z)"
    # the left operand is a copy: checking one must not retype the other
    assert isinstance(s.value, A.Binary) and s.value.left is not s.target


def test_plain_assignment_has_no_operator() -> None:
    (s,) = statements("x = y;")
    assert isinstance(s, A.Assign) and s.op == ""


def test_lvalues_with_slices_and_indices() -> None:
    a, b = statements("s[i].f[3:0] += 1;\nt[2] >>= n;")
    assert isinstance(a, A.Assign) and isinstance(b, A.Assign)
    assert text_of(a.value) == "(+ s[i].f[3:0] 1)"
    assert text_of(b.value) == "(>> t[2] n)"


def test_shift_right_does_not_swallow_comparisons() -> None:
    (s,) = statements("x = a >> b >= c ? 1 : 0;")
    assert isinstance(s, A.Assign) and s.op == ""


def test_in_for_clauses() -> None:
    (loop,) = statements("for (i += 1; i < 8; i <<= 1) { x |= i; }")
    assert isinstance(loop, A.For)
    (init,) = loop.init
    (update,) = loop.updates
    assert isinstance(init, A.Assign) and init.op == "+"
    assert isinstance(update, A.Assign) and update.op == "<<"


@pytest.mark.parametrize(("text", "message"), [
    # as p4c: the operator is one token, an expression cannot hold it
    ("x + = 1;", 'syntax error, unexpected "+"'),
    ("x = y += 1;", 'syntax error, unexpected "+="'),
    ("if (x += 1) { }", 'syntax error, unexpected "+="'),
    ("x >> = 1;", 'syntax error, unexpected ">", expecting ">="'),
    ("x ++= 1;", 'syntax error, unexpected "++"'),
    ("f(x += 1);", 'syntax error, unexpected "+="'),
])
def test_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(CompileError) as info:
        statements(text)
    assert info.value.diagnostics[0].message == message


# ---------------------------------------------------------------------- checking


def _reference(a: int, b: int, c: int) -> tuple[int, int, int]:
    """What ``test_every_operator_checks_on_bits``'s statements make of ``a, b, c``
    (bit<8>, bit<8>, int<8>), one after the other."""
    for op in OPS:
        if op not in ("/", "%"):
            a = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b,
                 "<<": a << b, ">>": a >> b, "|+|": min(a + b, 255),
                 "|-|": max(a - b, 0)}[op] & 0xFF
    a = a // 4 % 4
    c = max(min(c + 1, 127), -128) >> b
    return a, b, c


def test_every_operator_checks_on_bits() -> None:
    from switch.v1model import V1Switch

    body = "\n".join(f"hdr.h.a {op}= hdr.h.b;" for op in OPS if op not in ("/", "%"))
    body += "\nhdr.h.a /= 4; hdr.h.a %= 4; hdr.h.c |+|= 1; hdr.h.c >>= hdr.h.b;"
    prog = compile_text(program(body), "test.p4")
    block = prog.pipeline["ig"].decl
    assert isinstance(block, A.ControlDecl)
    assigns = block.body.stmts[1:]
    expected = [("hdr.h.a", op) for op in OPS if op not in ("/", "%")] + [
        ("hdr.h.a", "/"), ("hdr.h.a", "%"), ("hdr.h.c", "|+|"), ("hdr.h.c", ">>")]
    assert [(text_of(s.target), s.op) for s in assigns  # type: ignore[attr-defined]
            ] == expected
    for s in assigns:
        assert isinstance(s, A.Assign) and isinstance(s.value, A.Binary)
        # checked as target = target op value, on the target's type
        want = T.Bits(8, signed=text_of(s.target) == "hdr.h.c")
        assert s.value.op == s.op and text_of(s.value.left) == text_of(s.target)
        assert s.target.type == s.value.type == s.value.left.type == want, s.op
        if s.op not in ("<<", ">>"):  # a shift amount keeps its own type
            assert s.value.right.type == want, s.op
    # and each runs as that: the packet's a, b, c against the reference, for values
    # that saturate, wrap and shift out
    switch = V1Switch(prog)
    rng = random.Random(7)
    cases = [(200, 3, 127), (1, 200, -128), (255, 255, -1), (0, 0, 0)] + [
        (rng.randrange(256), rng.randrange(10), rng.randrange(-128, 128)) for _ in range(40)]
    for a, b, c in cases:
        out = switch.inject(0, bytes([a, b, c & 0xFF]))
        ra, rb, rc = _reference(a, b, c)
        assert out == [(1, bytes([ra, rb, rc & 0xFF]))], (a, b, c)


def test_a_constant_operand_takes_the_target_type() -> None:
    prog = compile_text(program("hdr.h.a += 300;"), "test.p4")
    block = prog.pipeline["ig"].decl
    assert isinstance(block, A.ControlDecl)
    s = block.body.stmts[1]
    assert isinstance(s, A.Assign) and isinstance(s.value, A.Binary)
    right = s.value.right
    assert isinstance(right, A.IntLit) and right.value == 300 % 256


@pytest.mark.parametrize(("body", "message"), [
    ("bool f = true; f &= false;",
     "&: cannot be applied to expression 'f' with type 'bool'"),
    ("hdr.h.a += 16w1;",
     "hdr.h.a + 16w1: Cannot operate on values with different widths 8 and 16"),
    ("hdr.h.a <<= hdr.h.c;", "hdr.h.c: Shift amount must be an unsigned number"),
    ("hdr.h.a <<= -1;", "hdr.h.a << -1: Negative shift amount -1"),
    ("hdr.h += hdr.h;", "+: cannot be applied to expression 'hdr.h'"),
])
def test_type_errors(body: str, message: str) -> None:
    found = errors(program(body))
    assert found and message in found[0], found


def test_the_target_must_be_writable() -> None:
    found = errors(program("bump(hdr.h.a);",
                           "action bump(in bit<8> x) { x += 1; }"))
    assert "x: cannot write to 'in' parameter x" in found[0]


def test_error_position_is_the_target() -> None:
    found = errors(program("hdr.h.a <<= -1;"))
    assert found[0].splitlines()[1:] == ["        hdr.h.a <<= -1;",
                                         "        ^^^^^^^^^^^^^"]


# ------------------------------------------------------------------------ running


def test_compound_assignment_in_a_loop_runs() -> None:
    # p4c-bm2-ss 1.2.5.16 compiles this loop to nothing, so it is tested here on the
    # built-in switch only (tests/stf/expr/compound_assign.p4 covers the rest on both)
    from switch.v1model import V1Switch

    body = "for (bit<8> i = 1; i < 100; i <<= 1) { hdr.h.a += i; }"
    switch = V1Switch(compile_text(program(body), "test.p4"))
    out = switch.inject(0, bytes([0x80, 0x00, 0x00]))
    assert out == [(1, bytes([0x80 + 127, 0x00, 0x00]))]
