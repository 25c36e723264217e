"""The checking passes: name resolution, types, calls, folding, tables, parsers and the
instantiation of ``main`` into a ``Program`` with p4c's control-plane names."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from switch.frontend import CompileError, compile_text
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.program import Program

GOLDEN_OK = sorted((Path(__file__).parent / "golden" / "ok").glob("*.p4"))

HEAD = """#include <core.p4>
#include <v1model.p4>
"""

HEADERS = """
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ipv4_t { bit<8> ttl; bit<8> protocol; bit<32> srcAddr; bit<32> dstAddr; }
struct headers { ethernet_t ethernet; ipv4_t ipv4; }
struct metadata { bit<8> x; bit<16> y; bool f; int<8> s; bit<32> w; }
"""

PARSER = """
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
"""

REST = """
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ethernet); } }
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
"""


def ingress(body: str, locals_: str = "", top: str = "", parser: str = PARSER) -> str:
    """A complete v1model program whose ingress has ``locals_`` and apply ``body``."""
    return (
        HEAD
        + HEADERS
        + top
        + parser
        + "control MyIngress(inout headers hdr, inout metadata meta,\n"
        + "                  inout standard_metadata_t standard_metadata) {\n"
        + locals_
        + "\n    apply {\n"
        + body
        + "\n    }\n}\n"
        + REST
    )


def compile_ok(src: str) -> Program:
    return compile_text(src, "test.p4")


def checked(src: str) -> Program:
    """The checker's output alone: parsed and checked, without the BMv2 target checks
    that reject some of what the checker takes (for-in loops, ``mark_to_drop()``, ...)."""
    from switch.frontend.check import check
    from switch.frontend.diagnostics import Diagnostics
    from switch.frontend.parser import parse
    from switch.frontend.preprocess import preprocess_text

    source = preprocess_text(src, "test.p4", [], {})
    diags = Diagnostics(source, "test.p4")
    program = check(parse(source.text, diags), source, diags)
    diags.check()
    return program


def diagnostics(src: str) -> list[str]:
    """The error messages of a program that must not compile."""
    with pytest.raises(CompileError) as info:
        compile_text(src, "test.p4")
    return [d.message for d in info.value.diagnostics if d.severity == "error"]


def first_error(src: str) -> tuple[str, int, int]:
    with pytest.raises(CompileError) as info:
        compile_text(src, "test.p4")
    d = next(d for d in info.value.diagnostics if d.severity == "error")
    return d.message, d.line, d.col


def line_of(src: str, needle: str) -> int:
    for i, line in enumerate(src.splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def col_of(src: str, needle: str, at: str | None = None) -> int:
    line = src.splitlines()[line_of(src, needle) - 1]
    return line.index(at if at is not None else needle) + 1


def walk(node: object) -> Iterator[object]:
    """Every syntax-tree node reachable from ``node``."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        if isinstance(n, list):
            stack.extend(reversed(n))
            continue
        if isinstance(n, tuple):
            stack.extend(reversed(n))
            continue
        if not dataclasses.is_dataclass(n) or isinstance(n, type) or isinstance(n, T.Type):
            continue
        if isinstance(n, (A.Name, A.TypeRef)):
            continue  # not into declarations through references, nor into written types
        for f in dataclasses.fields(n):
            if f.name in ("decl", "target", "action", "resolved", "type", "annotations"):
                continue
            stack.append(getattr(n, f.name))


def ingress_decl(program: Program) -> A.ControlDecl:
    block = program.pipeline["ig"].decl
    assert isinstance(block, A.ControlDecl)
    return block


def calls_in(node: object) -> list[A.Call]:
    return [n for n in walk(node) if isinstance(n, A.Call)]


def const_value(program: Program, name: str) -> A.Expr:
    for d in program.decls:
        if isinstance(d, A.ConstDecl) and d.name == name:
            return d.value
    raise AssertionError(name)


# ------------------------------------------------------------------ folding


class TestFoldingArithmetic:
    def test_wrap_into_unsigned_and_signed_ranges(self) -> None:
        assert F.wrap(300, T.Bits(8)) == 44
        assert F.wrap(-1, T.Bits(8)) == 255
        assert F.wrap(128, T.Bits(8, True)) == -128
        assert F.wrap(-129, T.Bits(8, True)) == 127

    def test_saturating_operators(self) -> None:
        assert F.arith("|+|", 200, 100, T.Bits(8)) == 255
        assert F.arith("|-|", 5, 10, T.Bits(8)) == 0
        assert F.arith("|+|", 100, 100, T.Bits(8, True)) == 127
        assert F.arith("|-|", -100, 100, T.Bits(8, True)) == -128

    def test_bitwise_on_signed_values_use_twos_complement(self) -> None:
        assert F.arith("&", -1, 0x0F, T.Bits(8, True)) == 0x0F
        assert F.arith("^", -1, 1, T.Bits(8, True)) == -2
        assert F.unary("~", 0, T.Bits(8, True)) == -1
        assert F.unary("~", 0, T.Bits(8)) == 255

    def test_shifts(self) -> None:
        assert F.shift("<<", 1, 8, T.Bits(8)) == 0
        assert F.shift("<<", 0x81, 1, T.Bits(8)) == 2
        assert F.shift(">>", -16, 2, T.Bits(8, True)) == -4
        assert F.shift(">>", -16, 9, T.Bits(8, True)) == -1
        assert F.shift(">>", 0x80, 9, T.Bits(8)) == 0
        assert F.shift("<<", 1, 100, T.InfInt()) == 1 << 100

    def test_division_by_zero_is_not_folded(self) -> None:
        assert F.arith("/", 1, 0, T.InfInt()) is None
        assert F.arith("%", 7, 3, T.Bits(8)) == 1

    def test_concat_and_slice(self) -> None:
        value, t = F.concat(0xAB, T.Bits(8), 0xCD, T.Bits(8))
        assert (value, t) == (0xABCD, T.Bits(16))
        value, t = F.concat(-1, T.Bits(4, True), 0, T.Bits(4))
        assert (value, t) == (-16, T.Bits(8, True))
        assert F.slice_bits(0xABCD, 16, 11, 8) == 0xB
        assert F.slice_bits(-1, 8, 7, 4) == 0xF

    @given(st.integers(min_value=1, max_value=64), st.booleans(), st.integers(), st.integers())
    def test_results_stay_in_range(self, width: int, signed: bool, a: int, b: int) -> None:
        t = T.Bits(width, signed)
        x, y = F.wrap(a, t), F.wrap(b, t)
        for op in ("+", "-", "*", "&", "|", "^", "|+|", "|-|"):
            r = F.arith(op, x, y, t)
            assert r is not None and F.fits(r, t), (op, x, y, t)
        assert F.fits(F.unary("-", x, t), t)
        assert F.fits(F.unary("~", x, t), t)

    @given(st.integers(min_value=1, max_value=64), st.integers())
    def test_unsigned_arithmetic_is_modular(self, width: int, a: int) -> None:
        t = T.Bits(width)
        x = F.wrap(a, t)
        assert F.arith("+", x, 1, t) == (x + 1) % (1 << width)
        assert F.arith("-", x, 1, t) == (x - 1) % (1 << width)


class TestFoldedConstants:
    SRC = ingress(
        "meta.x = ADD;",
        top="""
const bit<8> BASE = 8w200;
const bit<8> ADD = BASE + 100;
const bit<8> SAT = BASE |+| 100;
const int<8> NEG = -8s100 - 50;
const bit<16> CAT = 8w0xAB ++ 8w0xCD;
const bit<4> NIB = CAT[11:8];
const int K = 3;
const bit<(K * 8)> WIDE = 1;
const bool B = K > 2 && !(K == 4);
const bit<8> FROM_SIGNED = (bit<8>)(-8s1);
const int<16> ASR = -16s256 >> 4;
const bit<8> MUX = B ? 8w1 : 8w2;
const bit<8> BIG = 300;
""",
    )

    @pytest.fixture(scope="class")
    @classmethod
    def program(cls) -> Program:
        return compile_ok(cls.SRC)

    @pytest.mark.parametrize(
        "name,value,type_",
        [
            ("ADD", 44, T.Bits(8)),
            ("SAT", 255, T.Bits(8)),
            ("NEG", 106, T.Bits(8, True)),
            ("CAT", 0xABCD, T.Bits(16)),
            ("NIB", 0xB, T.Bits(4)),
            ("K", 3, T.InfInt()),
            ("WIDE", 1, T.Bits(24)),
            ("FROM_SIGNED", 255, T.Bits(8)),
            ("ASR", -16, T.Bits(16, True)),
            ("MUX", 1, T.Bits(8)),
            ("BIG", 44, T.Bits(8)),
        ],
    )
    def test_value(self, program: Program, name: str, value: int, type_: T.Type) -> None:
        v = const_value(program, name)
        assert isinstance(v, A.IntLit)
        assert (v.value, v.type) == (value, type_)

    def test_bool_constant(self, program: Program) -> None:
        v = const_value(program, "B")
        assert isinstance(v, A.BoolLit) and v.value is True

    def test_references_to_constants_are_replaced_by_values(self, program: Program) -> None:
        body = ingress_decl(program).body
        assign = body.stmts[0]
        assert isinstance(assign, A.Assign)
        assert isinstance(assign.value, A.IntLit) and assign.value.value == 44

    def test_value_that_does_not_fit_warns(self, program: Program) -> None:
        messages = [getattr(w, "message", "") for w in program.warnings]
        assert "300: value does not fit in 8 bits" in messages

    def test_width_literal_overflow_warns_and_wraps(self) -> None:
        program = compile_ok(ingress("meta.x = 8w300;"))
        assign = ingress_decl(program).body.stmts[0]
        assert isinstance(assign, A.Assign) and isinstance(assign.value, A.IntLit)
        assert assign.value.value == 44
        assert any("8w300: value does not fit in 8 bits" in getattr(w, "message", "")
                   for w in program.warnings)


class TestImplicitConstants:
    def test_untyped_constant_takes_the_other_operand_type(self) -> None:
        program = compile_ok(ingress("meta.y = meta.y + 1;"))
        assign = ingress_decl(program).body.stmts[0]
        assert isinstance(assign, A.Assign) and isinstance(assign.value, A.Binary)
        right = assign.value.right
        assert isinstance(right, A.IntLit) and right.type == T.Bits(16)
        assert assign.value.type == T.Bits(16)

    def test_negative_constant_into_signed(self) -> None:
        program = compile_ok(ingress("meta.s = -5;"))
        assign = ingress_decl(program).body.stmts[0]
        assert isinstance(assign, A.Assign) and isinstance(assign.value, A.IntLit)
        assert (assign.value.value, assign.value.type) == (-5, T.Bits(8, True))

    def test_negative_constant_into_unsigned_wraps(self) -> None:
        program = compile_ok(ingress("meta.x = -1;"))
        assign = ingress_decl(program).body.stmts[0]
        assert isinstance(assign, A.Assign) and isinstance(assign.value, A.IntLit)
        assert assign.value.value == 255

    def test_shift_amount_may_stay_untyped(self) -> None:
        program = compile_ok(ingress("meta.y = meta.y << 3;"))
        assign = ingress_decl(program).body.stmts[0]
        assert isinstance(assign, A.Assign) and isinstance(assign.value, A.Binary)
        assert assign.value.type == T.Bits(16)
        assert assign.value.right.type == T.InfInt()


# ------------------------------------------------------------ error messages


class TestErrors:
    def test_undeclared_name_position_and_text(self) -> None:
        src = ingress("meta.x = nothing_here;")
        message, line, col = first_error(src)
        assert message == "nothing_here: declaration not found"
        assert line == line_of(src, "nothing_here")
        assert col == col_of(src, "nothing_here")

    def test_duplicate_declaration(self) -> None:
        src = ingress("", locals_="    action a() { }\n    action a() { }\n")
        assert diagnostics(src) == ["a: duplicate declaration"]

    def test_width_mismatch(self) -> None:
        src = ingress("meta.y = meta.x + meta.y;")
        message, line, col = first_error(src)
        assert message == ("meta.x + meta.y: Cannot operate on values with different widths "
                           "8 and 16")
        assert line == line_of(src, "meta.x + meta.y")
        assert col == col_of(src, "meta.x + meta.y")

    def test_sign_mismatch(self) -> None:
        src = ingress("meta.x = meta.x + (bit<8>)meta.s; meta.s = meta.s + meta.x;")
        assert diagnostics(src) == [
            "meta.s + meta.x: Cannot operate on values with different signs"
        ]

    def test_cast_from_bool(self) -> None:
        src = ingress("meta.x = (bit<8>)meta.f;")
        assert diagnostics(src) == ["(bit<8>)meta.f: cannot cast from bool to bit<8>"]

    def test_cast_changing_width_and_sign_at_once(self) -> None:
        src = ingress("meta.y = (bit<16>)meta.s;")
        assert diagnostics(src) == ["(bit<16>)meta.s: cannot cast from int<8> to bit<16>"]

    def test_no_implicit_widening(self) -> None:
        src = ingress("meta.y = meta.x;")
        assert diagnostics(src) == [
            "meta.y = meta.x: cannot assign a value of type 'bit<8>' to 'meta.y' of type "
            "'bit<16>'"
        ]

    def test_assign_to_in_parameter(self) -> None:
        src = ingress("", locals_="    action a(in bit<8> v) { v = 1; }\n")
        assert diagnostics(src) == ["v: cannot write to 'in' parameter v"]

    def test_assign_to_action_data(self) -> None:
        src = ingress("", locals_="    action a(bit<8> v) { v = 1; }\n")
        assert diagnostics(src) == ["v: cannot write to directionless parameter v"]

    def test_out_argument_must_be_lvalue(self) -> None:
        src = ingress("random(meta.x + 1, 8w0, 8w10);")
        assert diagnostics(src) == ["meta.x + 1: must be a left-value"]

    def test_wrong_number_of_arguments(self) -> None:
        src = ingress("mark_to_drop(standard_metadata, standard_metadata);")
        assert diagnostics(src) == [
            "mark_to_drop: wrong number of arguments: expected 0 or 1, got 2"
        ]

    def test_not_on_bits(self) -> None:
        src = ingress("meta.f = !meta.x;")
        assert diagnostics(src) == ["Cannot apply ! to value meta.x of type bit<8>"]

    def test_and_on_bits(self) -> None:
        src = ingress("meta.f = meta.f && meta.x;")
        assert diagnostics(src) == ["meta.f && meta.x: not defined on bool and bit<8>"]

    def test_comparison_of_different_types(self) -> None:
        src = ingress("meta.f = meta.x == meta.y;")
        assert diagnostics(src) == [
            "'meta.x' with type 'bit<8>' cannot be compared to 'meta.y' with type 'bit<16>'"
        ]

    def test_relation_on_bool(self) -> None:
        src = ingress("meta.f = meta.f < true;")
        assert diagnostics(src) == ["meta.f < true: not defined on bool and bool"]

    def test_mux_arms_must_agree(self) -> None:
        src = ingress("meta.x = meta.f ? meta.x : meta.y;")
        assert diagnostics(src) == [
            "The expressions in a ?: conditional have different types 'bit<8>' and 'bit<16>'"
        ]

    def test_slice_bounds(self) -> None:
        src = ingress("meta.x = meta.y[16:9];")
        assert diagnostics(src) == ["Bit index 16 greater than width 16"]
        src = ingress("meta.x = meta.y[2:5][7:0];")
        assert diagnostics(src)[0] == "LSB index 5 greater than MSB index 2"

    def test_shift_by_signed_amount(self) -> None:
        src = ingress("meta.x = meta.x << meta.s;")
        assert diagnostics(src) == ["meta.s: Shift amount must be an unsigned number"]

    def test_concat_of_untyped_constant(self) -> None:
        src = ingress("meta.y = meta.x ++ 1;")
        assert diagnostics(src) == [
            "meta.x ++ 1: Concatenation not defined on bit<8> and int",
            "Please specify a width for the operand 1 of a concatenation",
        ]

    def test_condition_must_be_bool(self) -> None:
        src = ingress("if (meta.x) { meta.y = 1; }")
        assert diagnostics(src) == ["meta.x: condition must be a bool, not bit<8>"]

    def test_unknown_field(self) -> None:
        src = ingress("meta.nope = 1;")
        message, line, col = first_error(src)
        assert message == "Field nope is not a member of structure metadata"
        assert col == col_of(src, "meta.nope", "nope")

    def test_division_by_zero(self) -> None:
        src = ingress("meta.x = meta.x / 0;")
        assert diagnostics(src) == ["meta.x / 0: division by zero"]

    def test_signed_division(self) -> None:
        src = ingress("meta.s = meta.s / 2;")
        assert diagnostics(src) == ["meta.s / 2: Cannot operate on signed values"]

    def test_bit_complement_of_untyped_constant(self) -> None:
        src = ingress("meta.x = ~1;")
        assert diagnostics(src) == [
            "~1: '~' cannot be applied to an operand with an unknown width"
        ]

    def test_assigning_to_a_constant(self) -> None:
        src = ingress("LIMIT = 1;", top="const bit<8> LIMIT = 10;\n")
        assert diagnostics(src) == ["Expression LIMIT cannot be the target of an assignment"]

    def test_exit_in_function(self) -> None:
        src = ingress("", top="void f() { exit; }\n")
        assert diagnostics(src) == ["exit: not allowed in a function"]

    def test_function_missing_return(self) -> None:
        src = ingress("", top="bit<8> f(in bit<8> a) { if (a > 1) { return a; } }\n")
        assert diagnostics(src) == ["Function f does not return a value on all paths"]

    def test_action_call_in_parser(self) -> None:
        parser = """
action nop() { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start { nop(); transition accept; }
}
"""
        assert diagnostics(ingress("", parser=parser)) == [
            "nop(): Action calls are not allowed within parsers"
        ]

    def test_header_field_type_restriction(self) -> None:
        top = ("header in_t { bit<8> a; }\nstruct s_t { bit<8> a; in_t h; }\n"
               "header bad_t { s_t inner; }\n")
        assert diagnostics(ingress("", top=top)) == [
            "Field inner of header bad_t cannot have type s_t"]

    def test_header_field_may_be_a_struct_of_bits(self) -> None:
        top = ("struct in_t { bit<4> x; bool b; int<3> y; }\nstruct s_t { bit<8> a; in_t i; }\n"
               "header ok_t { s_t inner; }\n")
        program = compile_ok(ingress("ok_t v = { { 1, { 2, true, -1 } } };\n"
                                     "meta.x = v.inner.a + (bit<8>)v.inner.i.x;", top=top))
        members = {n.name: n.type for n in walk(program.decls) if isinstance(n, A.Member)}
        assert members["inner"] == T.Struct("s_t", ())
        assert members["x"] == T.Bits(4)

    def test_header_must_be_whole_bytes(self) -> None:
        top = "header odd_t { bit<8> a; bit<4> b; varbit<16> v; }\n"
        assert diagnostics(ingress("odd_t v; v.setInvalid();", top=top)) == [
            "header odd_t: Found header with fields totaling 28 bits.  BMv2 target only "
            "supports headers with fields totaling a multiple of 8 bits."]

    def test_header_only_declared_may_be_any_width(self) -> None:
        # p4c-bm2-ss lays out (and checks) the headers the program has storage of
        compile_ok(ingress("", top="header odd_t { bit<8> a; bit<4> b; }\n"))

    def test_varbits_compare_only_with_the_same_type(self) -> None:
        top = ("header v8_t { varbit<8> v; }\nheader v16_t { varbit<16> v; }\n"
               "struct vs_t { v8_t a; v16_t b; v16_t c; }\n")
        src = ingress("meta.f = s.b.v == s.c.v || s.b != s.c;\nmeta.f = s.a.v == s.b.v;",
                      locals_="    vs_t s;", top=top)
        assert diagnostics(src) == ["'s.a.v' with type 'varbit<8>' cannot be compared to "
                                    "'s.b.v' with type 'varbit<16>'"]

    def test_stack_next_outside_parser(self) -> None:
        top = "header tag_t { bit<8> v; }\nstruct st_t { tag_t[2] tags; }\n"
        src = ingress("", locals_="    st_t s;\n    action a() { s.tags.next.v = 1; }\n",
                      top=top)
        assert diagnostics(src) == [
            "s.tags.next: 'last', and 'next' for stacks can only be used in a parser"
        ]

    def test_stack_index_out_of_bounds(self) -> None:
        top = "header tag_t { bit<8> v; }\nstruct st_t { tag_t[2] tags; }\n"
        src = ingress("", locals_="    st_t s;\n    action a() { s.tags[2].v = 1; }\n", top=top)
        assert diagnostics(src) == ["Array index 2 larger or equal to array size 2"]

    def test_errors_do_not_cascade(self) -> None:
        src = ingress("meta.x = (nothing + 1) * 2 + meta.x;")
        assert diagnostics(src) == ["nothing: declaration not found"]


# -------------------------------------------------------------------- calls


class TestCalls:
    SRC = ingress(
        """
        mark_to_drop();
        mark_to_drop(standard_metadata);
        hash(meta.y, HashAlgorithm.crc16, 16w0, { hdr.ipv4.srcAddr, meta.x }, 32w1024);
        hash(max = 32w8, data = meta.x, base = 16w1, algo = HashAlgorithm.crc32,
             result = meta.y);
        reg.read(meta.w, 5);
        reg.write(7, meta.w + 1);
        log_msg("hello");
        log_msg("x={}", { meta.x });
        a1(3);
        t.apply();
        if (hdr.ipv4.isValid()) { hdr.ipv4.setInvalid(); }
        digest<learn_t>(1, { meta.x, meta.y });
        digest(1, meta);
        """,
        locals_="""
    register<bit<32>>(64) reg;
    action a1(bit<8> v) { meta.x = v; }
    table t { key = { meta.x: exact; } actions = { a1; } }
""",
        top="struct learn_t { bit<8> x; bit<16> y; }\n",
        parser="""
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract<ipv4_t>(hdr.ipv4);
        meta.y = pkt.lookahead<bit<16>>();
        pkt.advance(8);
        transition accept;
    }
}
""",
    )

    @pytest.fixture(scope="class")
    @classmethod
    def program(cls) -> Program:
        return checked(cls.SRC)  # mark_to_drop() and a bare hash data are v1model's

    @pytest.fixture(scope="class")
    @classmethod
    def calls(cls, program: Program) -> list[A.Call]:
        found = calls_in(ingress_decl(program).body)
        return sorted(found, key=lambda c: (c.pos.line, c.pos.col))

    def test_every_call_has_a_target_and_a_type(self, calls: list[A.Call]) -> None:
        for c in calls:
            assert c.target is not None, c
            assert c.type is not None

    def test_overloads_chosen_by_arity(self, calls: list[A.Call]) -> None:
        drops = [c for c in calls if isinstance(c.target, A.CallExternFunction)
                 and c.target.function.name == "mark_to_drop"]
        assert [len(c.target.function.params) for c in drops] == [0, 1]  # type: ignore[union-attr]
        logs = [c for c in calls if isinstance(c.target, A.CallExternFunction)
                and c.target.function.name == "log_msg"]
        assert [len(c.target.function.params) for c in logs] == [1, 2]  # type: ignore[union-attr]

    def test_named_arguments_are_put_in_parameter_order(self, calls: list[A.Call]) -> None:
        hashes = [c for c in calls if isinstance(c.target, A.CallExternFunction)
                  and c.target.function.name == "hash"]
        named = hashes[1]
        args = named.resolved_args
        assert isinstance(args[0], A.Member) and args[0].name == "y"
        assert isinstance(args[1], A.EnumValue) and args[1].member == "crc32"
        assert isinstance(args[2], A.IntLit) and (args[2].value, args[2].type) == (1, T.Bits(16))
        assert isinstance(args[3], A.Member) and args[3].name == "x"
        assert isinstance(args[4], A.IntLit) and args[4].value == 8

    def test_type_arguments_inferred_from_arguments(self, calls: list[A.Call]) -> None:
        h = next(c for c in calls if isinstance(c.target, A.CallExternFunction)
                 and c.target.function.name == "hash")
        data = h.resolved_args[3]
        assert isinstance(data, A.ListExpr)
        assert data.type == T.Tuple((T.Bits(32), T.Bits(8)))

    def test_register_methods_use_the_instance_type(self, calls: list[A.Call]) -> None:
        reads = [c for c in calls if isinstance(c.target, A.CallExternMethod)]
        read = next(c for c in reads if c.target.method == "read")  # type: ignore[union-attr]
        write = next(c for c in reads if c.target.method == "write")  # type: ignore[union-attr]
        assert read.target.extern == "register"  # type: ignore[union-attr]
        index = read.resolved_args[1]
        assert isinstance(index, A.IntLit) and index.type == T.Bits(32)
        value = write.resolved_args[1]
        assert value is not None and value.type == T.Bits(32)

    def test_action_table_and_builtin_calls(self, calls: list[A.Call]) -> None:
        kinds = {type(c.target) for c in calls}
        assert {A.CallAction, A.CallTableApply, A.CallBuiltin} <= kinds
        apply_ = next(c for c in calls if isinstance(c.target, A.CallTableApply))
        assert apply_.type == T.TableApplyResult("t")
        action = next(c for c in calls if isinstance(c.target, A.CallAction))
        arg = action.resolved_args[0]
        assert isinstance(arg, A.IntLit) and arg.type == T.Bits(8)
        valid = next(c for c in calls if isinstance(c.target, A.CallBuiltin)
                     and c.target.method == "isValid")
        assert valid.type == T.Bool()

    def test_parser_extract_and_lookahead(self, program: Program) -> None:
        parser = program.pipeline["p"].decl
        found = calls_in(parser)
        extracts = [c for c in found if isinstance(c.target, A.CallExternMethod)
                    and c.target.method == "extract"]
        assert len(extracts) == 2
        assert all(len(c.target.overload.params) == 1 for c in extracts)  # type: ignore[union-attr]
        look = next(c for c in found if isinstance(c.target, A.CallExternMethod)
                    and c.target.method == "lookahead")
        assert look.type == T.Bits(16)

    def test_digests_one_per_type(self, program: Program) -> None:
        assert list(program.digests) == ["learn_t", "metadata"]
        learn, meta = program.digests["learn_t"].type, program.digests["metadata"].type
        assert isinstance(learn, T.Struct) and isinstance(meta, T.Struct)
        assert [(f.name, f.type) for f in learn.fields] == [("x", T.Bits(8)), ("y", T.Bits(16))]
        assert [f.name for f in meta.fields] == ["x", "y", "f", "s", "w"]

    def test_extract_with_two_arguments(self) -> None:
        top = "header opt_t { varbit<64> data; }\n"
        parser = """
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    opt_t o;
    state start { pkt.extract(o, 32); transition accept; }
}
"""
        program = compile_ok(ingress("", top=top, parser=parser))
        call = next(c for c in calls_in(program.pipeline["p"].decl)
                    if isinstance(c.target, A.CallExternMethod))
        assert len(call.target.overload.params) == 2  # type: ignore[union-attr]
        size = call.resolved_args[1]
        assert isinstance(size, A.IntLit) and size.type == T.Bits(32)

    def test_uninferable_type_parameter(self) -> None:
        src = ingress("hash(meta.y, HashAlgorithm.crc16, 0, { meta.x }, 32w16);")
        assert diagnostics(src) == [
            "0: cannot infer a type for type parameter T of hash; give the value a width"
        ]

    def test_conflicting_type_arguments(self) -> None:
        src = ingress("random(meta.x, 16w0, 16w10);")
        assert diagnostics(src)[0].startswith("16w0: cannot pass a value of type 'bit<16>'")

    def test_apply_in_action_is_an_error(self) -> None:
        src = ingress("", locals_="""
    table t { actions = { NoAction; } }
    action a() { t.apply(); }
""")
        assert diagnostics(src) == ["t.apply(): apply cannot be called from actions"]

    def test_missing_action_argument(self) -> None:
        src = ingress("a(meta.x);", locals_="    action a(bit<8> v, bit<8> w) { }\n")
        assert diagnostics(src) == ["a(meta.x): parameter w must be bound"]


# ------------------------------------------------------------- enums, errors


class TestEnumsAndErrors:
    def test_error_codes(self) -> None:
        program = compile_ok(ingress("", top="error { MyFirst, MySecond }\n"))
        assert program.errors == {
            "NoError": 0, "PacketTooShort": 1, "NoMatch": 2, "StackOutOfBounds": 3,
            "HeaderTooShort": 4, "ParserTimeout": 5, "ParserInvalidArgument": 6,
            "MyFirst": 7, "MySecond": 8,
        }

    def test_enum_members_become_enum_values(self) -> None:
        top = "enum bit<8> Kind { A = 1, B = 0x20 }\nenum Plain { X, Y, Z }\n"
        locals_ = "    Kind k;\n    Plain p;\n"
        body = "k = Kind.B; p = Plain.Z; if (standard_metadata.parser_error == error.NoMatch) { }"
        program = compile_ok(ingress(body, locals_=locals_, top=top))
        values = [n for n in walk(ingress_decl(program).body) if isinstance(n, A.EnumValue)]
        assert [(v.enum, v.member, v.value) for v in values] == [
            ("Kind", "B", 0x20), ("Plain", "Z", 2), ("error", "NoMatch", 2)
        ]

    def test_serializable_enum_reads_as_its_underlying_type(self) -> None:
        top = "enum bit<8> Kind { A = 1, B = 2 }\n"
        program = compile_ok(ingress("meta.x = Kind.B + 1;", top=top))
        assign = ingress_decl(program).body.stmts[0]
        assert isinstance(assign, A.Assign) and isinstance(assign.value, A.IntLit)
        assert (assign.value.value, assign.value.type) == (3, T.Bits(8))

    def test_invalid_enum_member(self) -> None:
        src = ingress("meta.x = (bit<8>)Kind.C;", top="enum bit<8> Kind { A = 1 }\n")
        assert diagnostics(src) == ["Kind.C: Invalid enum tag"]


# ------------------------------------------------------------------ parsers


class TestParsers:
    def _parser(self, states: str, locals_: str = "") -> str:
        return f"""
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {{
{locals_}
{states}
}}
"""

    def test_select_keysets_are_folded(self) -> None:
        parser = self._parser("""
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType, hdr.ethernet.dst[7:0]) {
            (0x800, 1 + 1): accept;
            (0x86dd &&& 0xffff, 0 .. 9): accept;
            default: check_vs;
        }
    }
    state check_vs {
        transition select(hdr.ethernet.dst[7:0]) {
            vs: accept;
            default: reject;
        }
    }
""", "    value_set<bit<8>>(4) vs;")
        program = compile_ok(ingress("", parser=parser))
        decl = program.pipeline["p"].decl
        assert isinstance(decl, A.ParserDecl)
        sel = decl.states[0].transition
        assert isinstance(sel, A.Select)
        first = sel.cases[0].keyset
        assert isinstance(first, A.ListExpr)
        assert [(e.value, e.type) for e in first.elements] == [  # type: ignore[attr-defined]
            (0x800, T.Bits(16)), (2, T.Bits(8))
        ]
        mask = sel.cases[1].keyset.elements[0]  # type: ignore[attr-defined]
        assert isinstance(mask, A.Binary) and mask.op == "&&&"
        assert isinstance(mask.right, A.IntLit) and mask.right.type == T.Bits(16)
        assert isinstance(sel.cases[2].keyset, A.DefaultExpr)
        assert list(program.value_sets) == ["MyParser.vs"]
        assert program.value_sets["MyParser.vs"].size == 4

    def test_keyset_arity(self) -> None:
        parser = self._parser("""
    state start {
        transition select(hdr.ethernet.etherType, meta.x) {
            (1, 2, 3): accept;
            default: accept;
        }
    }
""")
        assert diagnostics(ingress("", parser=parser)) == [
            "(1, 2, 3): Size of keyset (3) must match the number of keys (2)"
        ]

    def test_missing_start_state(self) -> None:
        parser = self._parser("    state begin { transition accept; }")
        assert diagnostics(ingress("", parser=parser)) == [
            "MyParser: parser has no 'start' state"
        ]

    def test_no_loops_in_a_parser(self) -> None:
        parser = self._parser("""
    state start {
        if (meta.x == 0) {
            for (bit<8> i = 0; i < 2; i = i + 1) { meta.y = meta.y + 1; }
        }
        transition accept;
    }
""")
        src = ingress("", parser=parser)
        message, line, col = first_error(src)
        assert message == "for: loops are not allowed in a parser"
        assert (line, col) == (line_of(src, "for (bit<8>"), col_of(src, "for (bit<8>"))

    def test_transition_to_unknown_state(self) -> None:
        parser = self._parser("    state start { transition nowhere; }")
        src = ingress("", parser=parser)
        message, line, col = first_error(src)
        assert message == "nowhere: declaration not found"
        assert (line, col) == (line_of(src, "transition nowhere"),
                               col_of(src, "transition nowhere", "nowhere"))


# -------------------------------------------------------------------- loops


class TestLoops:
    def test_checked_loops(self) -> None:
        top = "header tag_t { bit<8> v; }\nstruct st_t { tag_t[2] tags; }\n"
        program = checked(ingress("""
        for (bit<8> i = 0; i < meta.x; i = i + 1) { if (i == 3) { break; } continue; }
        for (int<8> k in -2 .. 2) { meta.s = meta.s + k; }
        for (tag_t t in s.tags) { meta.x = meta.x + t.v; }
""", locals_="    st_t s;", top=top))  # BMv2 runs no for-in loops: see the target errors
        body = program.pipeline["ig"].decl.body.stmts  # type: ignore[attr-defined]
        three, rng, stack = body
        assert isinstance(three, A.For) and three.cond.type == T.Bool()
        assert isinstance(rng, A.ForIn) and isinstance(rng.collection, A.Binary)
        lo, hi = rng.collection.left, rng.collection.right
        assert (lo.value, lo.type, hi.value, hi.type) == (  # type: ignore[attr-defined]
            -2, T.Bits(8, True), 2, T.Bits(8, True))
        assert isinstance(stack, A.ForIn) and stack.collection.type == T.Stack(
            T.Header("tag_t", ()), 2)

    @pytest.mark.parametrize("body, message, at", [
        ("break;", "break: only allowed inside a 'for' loop", "break"),
        ("if (meta.f) { continue; }", "continue: only allowed inside a 'for' loop",
         "continue"),
        ("for (bit<8> i = 0; meta.x; i = i + 1) { }",
         "meta.x: condition must be a bool, not bit<8>", "meta.x"),
        ("for (bool b in false .. true) { }",
         "false .. true: a range can only be iterated with a bit<W> or int<W> variable, "
         "not bool", "false"),
        ("for (bit<8> v in meta.x) { }",
         "meta.x: cannot iterate over a value of type bit<8>; use a range (lo .. hi) or a "
         "header stack", "meta.x"),
        ("for (bit<16> w in {1, 2, meta.x ++ meta.x}) { }",
         "Typechecking does not support iteration over this collection of type "
         "tuple<int, int, bit<16>>", "{1"),
        ("for (bit<8> i = 0; i < 3 && t.apply().hit; i = i + 1) { }",
         "Side effects in for condition not supported", "i < 3"),
        ("for (bit<8> i in 0 .. 3) { } meta.x = i;", "i: declaration not found", "i;"),
    ])
    def test_loop_errors(self, body: str, message: str, at: str) -> None:
        src = ingress(body, locals_="    table t { actions = { NoAction; } }")
        assert first_error(src) == (message, line_of(src, body), col_of(src, body, at))

    def test_stack_element_type_must_match(self) -> None:
        top = "header tag_t { bit<8> v; }\nheader other_t { bit<8> v; }\n" \
              "struct st_t { tag_t[2] tags; }\n"
        src = ingress("for (other_t o in s.tags) { }", locals_="    st_t s;", top=top)
        assert diagnostics(src) == ["o: the elements of s.tags have type tag_t, not other_t"]


# ------------------------------------------------------------------- tables


class TestTables:
    SRC = ingress(
        "t.apply(); t2.apply(); s.apply(hdr, meta);",
        locals_="""
    direct_counter(CounterType.packets) dc;
    @name("renamed_meter") meter(32, MeterType.bytes) m;
    action set(bit<8> v, bit<16> w) { meta.x = v; meta.y = w; }
    @name(".global_action") action glob() { }
    table t {
        key = {
            hdr.ipv4.dstAddr: lpm;
            meta.w[7:0]: exact;
            hdr.ipv4.isValid(): exact;
            meta.x: ternary @name("renamed_key");
        }
        actions = { set; glob; }
        default_action = set(1, 2);
        counters = dc;
        size = 4 * 64;
    }
    @name("other") table t2 {
        key = { meta.x: ternary; }
        actions = { set; NoAction; }
        const entries = {
            0x10 &&& 0xf0 : set(1, 1);
            0x20 : set(2, 2);
            _ : NoAction();
        }
    }
    Sub() s;
""",
        top="""
control Sub(inout headers hdr, inout metadata meta) {
    register<bit<8>>(16) r;
    action a() { r.write(0, 1); }
    table t {
        key = { meta.x: exact; }
        actions = { a; }
        @name("shared_profile") implementation = action_profile(32);
    }
    @name(".top_t") table t3 { actions = { a; } }
    apply { t.apply(); t3.apply(); }
}
""",
    )

    @pytest.fixture(scope="class")
    @classmethod
    def program(cls) -> Program:
        return compile_ok(cls.SRC)

    def test_fully_qualified_names(self, program: Program) -> None:
        assert set(program.tables) == {"MyIngress.t", "MyIngress.other", "MyIngress.s.t",
                                       "top_t"}
        assert {"MyIngress.set", "global_action", "MyIngress.s.a", "NoAction"} <= set(
            program.actions)
        assert {"MyIngress.dc", "MyIngress.renamed_meter", "MyIngress.s.r",
                "shared_profile"} <= set(program.externs)

    def test_keys(self, program: Program) -> None:
        t = program.tables["MyIngress.t"]
        assert [(k.name, k.match_kind, k.width) for k in t.keys] == [
            ("hdr.ipv4.dstAddr", "lpm", 32),
            ("meta.w[7:0]", "exact", 8),
            ("hdr.ipv4.$valid$", "exact", 1),
            ("renamed_key", "ternary", 8),
        ]

    def test_table_properties(self, program: Program) -> None:
        t = program.tables["MyIngress.t"]
        assert t.actions == ["MyIngress.set", "global_action"]
        assert (t.default_action, t.default_args) == ("MyIngress.set", [1, 2])
        assert t.size == 256
        assert t.direct_counter == "MyIngress.dc"
        sub = program.tables["MyIngress.s.t"]
        assert sub.implementation == "shared_profile"
        assert program.externs["shared_profile"].extern == "action_profile"
        assert program.externs["shared_profile"].args == [32]

    def test_defaults_when_absent(self, program: Program) -> None:
        t2 = program.tables["MyIngress.other"]
        assert t2.default_action == "NoAction"
        assert t2.size == 1024

    def test_const_entries_get_priorities_first_highest(self, program: Program) -> None:
        entries = program.tables["MyIngress.other"].decl.entries
        prios = [e.priority.value for e in entries]  # type: ignore[union-attr]
        assert prios == [3, 2, 1]
        first = entries[0].keys[0]
        assert isinstance(first, A.Binary) and first.op == "&&&"
        assert isinstance(entries[2].keys[0], A.DefaultExpr)

    def test_extern_constructor_arguments(self, program: Program) -> None:
        assert program.externs["MyIngress.renamed_meter"].args == [32, "bytes"]
        assert program.externs["MyIngress.dc"].args == ["packets"]
        assert program.externs["MyIngress.s.r"].args == [16]
        assert program.externs["MyIngress.s.r"].type == T.Extern("register", (T.Bits(8),))

    def test_instance_names(self, program: Program) -> None:
        ig = ingress_decl(program)
        t = next(d for d in ig.locals if isinstance(d, A.TableDecl) and d.name == "t")
        assert program.instance_names[(id(t), "MyIngress")] == "MyIngress.t"
        sub = program.pipeline["ig"].children["s"]
        assert sub.fqn == "MyIngress.s"

    def test_default_action_must_be_listed(self) -> None:
        src = ingress("t.apply();", locals_="""
    action a() { }
    action b() { }
    table t { key = { meta.x: exact; } actions = { a; } default_action = b(); }
""")
        assert diagnostics(src) == ["b not present in action list"]

    def test_unknown_match_kind(self) -> None:
        src = ingress("t.apply();", locals_="""
    table t { key = { meta.x: fuzzy; } actions = { NoAction; } }
""")
        assert diagnostics(src) == ["fuzzy: declaration not found"]

    def test_entry_types(self) -> None:
        src = ingress("t.apply();", locals_="""
    action a() { }
    table t {
        key = { meta.x: exact; meta.f: exact; }
        actions = { a; }
        const entries = { (1, 2): a(); }
    }
""")
        assert diagnostics(src) == [
            "'entries' case label '2' has type 'int' which does not match the expected type "
            "'bool'"
        ]

    def test_control_plane_argument_in_action_list(self) -> None:
        src = ingress("t.apply();", locals_="""
    action a(bit<8> v) { }
    table t { key = { meta.x: exact; } actions = { a(5); } }
""")
        assert diagnostics(src) == [
            "5: parameter v cannot be bound: it is set by the control plane"
        ]

    def test_action_run_switch(self) -> None:
        program = compile_ok(ingress("""
        switch (t.apply().action_run) {
            a: { meta.x = 1; }
            default: { }
        }
""", locals_="""
    action a() { }
    action b() { }
    table t { key = { meta.x: exact; } actions = { a; b; } }
"""))
        sw = ingress_decl(program).body.stmts[0]
        assert isinstance(sw, A.Switch)
        assert sw.expr.type == T.ActionEnum("t")

    def test_switch_label_must_be_listed_action(self) -> None:
        src = ingress("switch (t.apply().action_run) { b: { } }", locals_="""
    action a() { }
    action b() { }
    table t { key = { meta.x: exact; } actions = { a; } }
""")
        assert diagnostics(src) == ["b is not a legal label (action name)"]


# ---------------------------------------------------------------- instances


class TestInstantiation:
    def test_pipeline_blocks_named_after_their_types(self) -> None:
        program = compile_ok(ingress(""))
        assert {k: b.fqn for k, b in program.pipeline.items()} == {
            "p": "MyParser", "vr": "MyVerifyChecksum", "ig": "MyIngress", "eg": "MyEgress",
            "ck": "MyComputeChecksum", "dep": "MyDeparser",
        }
        assert program.arch == "v1model"

    def test_constructor_parameters(self) -> None:
        top = """
control Sub(inout bit<8> v)(bit<8> step) {
    apply { v = v + step; }
}
"""
        program = compile_ok(ingress("s1.apply(meta.x); s2.apply(meta.x);",
                                     locals_="    Sub(3) s1;\n    Sub(step = 4) s2;\n",
                                     top=top))
        ig = program.pipeline["ig"]
        assert ig.children["s1"].ctor_args == {"step": 3}
        assert ig.children["s2"].ctor_args == {"step": 4}

    def test_package_parameter_types_must_agree(self) -> None:
        src = ingress("").replace(
            "control MyEgress(inout headers hdr",
            "struct other_t { }\ncontrol MyEgress(inout other_t hdr",
        )
        errors = diagnostics(src)
        assert errors == [
            "MyEgress(): parameter hdr has type other_t but V1Switch expects headers (H = "
            "headers)"
        ]

    def test_missing_main(self) -> None:
        src = HEAD + HEADERS
        assert diagnostics(src) == [
            "Could not locate top-level block; is there a 'main' package?"
        ]

    def test_controller_headers(self) -> None:
        top = """
@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> pad; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> pad; }
"""
        program = compile_ok(ingress("", top=top))
        assert {k: str(v.type) for k, v in program.controller_headers.items()} == {
            "packet_in": "packet_in_t", "packet_out": "packet_out_t"
        }


# ---------------------------------------------------------------- invariants


ALLOWED_INFINT_PARENTS = (A.Slice,)


def _check_tree(program: Program) -> list[str]:
    """Violations of what the engine relies on after checking."""
    problems: list[str] = []
    blocks = [d for d in program.decls if isinstance(d, (A.ControlDecl, A.ParserDecl,
                                                         A.ActionDecl, A.FunctionDecl))]
    for block in blocks:
        allowed: set[int] = set()
        constructors: set[int] = set()
        for n in walk(block):
            if isinstance(n, A.Slice):
                allowed.update((id(n.hi), id(n.lo)))
            elif isinstance(n, A.Index):
                allowed.add(id(n.index))
            elif isinstance(n, A.Binary) and n.op in ("<<", ">>"):
                allowed.add(id(n.right))
            elif isinstance(n, A.Call) and isinstance(n.target, A.CallBuiltin):
                allowed.update(id(a) for a in n.resolved_args)
            elif isinstance(n, A.TableDecl):
                allowed.add(id(n.size))
                allowed.add(id(n.priority_delta))
                allowed.update(id(e.priority) for e in n.entries)
            elif isinstance(n, A.ValueSetDecl):
                allowed.add(id(n.size))
            elif isinstance(n, A.TableProperty) and isinstance(n.value, A.Call):
                constructors.add(id(n.value))  # constructor calls have no CallTarget
        for n in walk(block):
            if isinstance(n, A.Expr):
                if n.type is None:
                    problems.append(f"untyped {type(n).__name__} at {n.pos}")
                elif type(n.type).__name__ == "Unknown":
                    problems.append(f"unknown type at {n.pos}")
            if isinstance(n, A.IntLit) and n.type == T.InfInt() and id(n) not in allowed:
                problems.append(f"untyped constant {n.value} at {n.pos}")
            if isinstance(n, A.IntLit) and isinstance(n.type, T.Bits) and not F.fits(n.value,
                                                                                     n.type):
                problems.append(f"constant {n.value} out of range of {n.type} at {n.pos}")
            if isinstance(n, A.Call) and n.target is None and id(n) not in constructors:
                problems.append(f"unresolved call at {n.pos}")
            if isinstance(n, A.Name) and n.decl is None:
                problems.append(f"unresolved name {n.name} at {n.pos}")
            if isinstance(n, A.Member) and isinstance(n.expr, A.Name) and isinstance(
                n.expr.decl, (A.EnumDecl, A.ErrorDecl)
            ):
                problems.append(f"enum member not replaced at {n.pos}")
    return problems


@pytest.mark.parametrize("path", GOLDEN_OK, ids=[p.stem for p in GOLDEN_OK])
def test_checked_tree_invariants(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from switch.frontend import compile_file

    monkeypatch.chdir(Path(__file__).resolve().parents[3])
    program = compile_file(path)
    assert _check_tree(program) == []


# ------------------------------------------------------------- more calls


class TestParametersAndConstants:
    def test_optional_and_default_parameters(self) -> None:
        top = """
extern void notify(in bit<8> a, @optional in bit<8> b);
bit<8> add(in bit<8> a, in bit<8> b = 3) { return a + b; }
"""
        # BMv2 has no extern functions of the program's own: the checker's result alone
        program = checked(ingress("notify(meta.x); meta.x = add(meta.x);", top=top))
        found = calls_in(ingress_decl(program).body)
        notify = next(c for c in found if isinstance(c.target, A.CallExternFunction))
        assert len(notify.resolved_args) == 2 and notify.resolved_args[1] is None
        add = next(c for c in found if isinstance(c.target, A.CallFunction))
        default = add.resolved_args[1]
        assert isinstance(default, A.IntLit) and (default.value, default.type) == (3, T.Bits(8))

    def test_generic_function_type_argument(self) -> None:
        top = "T pick<T>(in bool c, in T a, in T b) { return c ? a : b; }\n"
        program = compile_ok(ingress("meta.y = pick(meta.f, meta.y, 16w7);", top=top))
        call = calls_in(ingress_decl(program).body)[0]
        assert call.type == T.Bits(16)
        assert isinstance(call.target, A.CallFunction)

    def test_field_of_a_constant_struct_is_folded(self) -> None:
        top = "struct pair_t { bit<8> a; bit<8> b; }\nconst pair_t P = { 3, 4 };\n"
        program = compile_ok(ingress("meta.x = P.b;", top=top))
        assign = ingress_decl(program).body.stmts[0]
        assert isinstance(assign, A.Assign) and isinstance(assign.value, A.IntLit)
        assert assign.value.value == 4

    def test_static_assert(self) -> None:
        compile_ok(ingress("", top="const bool ok = static_assert(8 * 2 == 16);\n"))
        src = ingress("", top='const bool bad = static_assert(1 == 2, "sizes differ");\n')
        assert diagnostics(src) == ['static_assert(false, "sizes differ"): sizes differ']

    def test_constructor_arguments_from_constructor_parameters(self) -> None:
        top = """
control Sub(inout bit<8> v)(bit<8> n) {
    register<bit<8>>((bit<32>)n * 4 + 1) r;
    table t { key = { v: exact; } actions = { NoAction; } size = n; }
    apply { t.apply(); }
}
"""
        program = compile_ok(ingress("s.apply(meta.x);", locals_="    Sub(3) s;\n", top=top))
        assert program.externs["MyIngress.s.r"].args == [13]
        assert program.tables["MyIngress.s.t"].size == 3

    def test_entries_with_explicit_priorities(self) -> None:
        program = compile_ok(ingress("t.apply();", locals_="""
    action a() { }
    table t {
        key = { meta.x: ternary; }
        actions = { a; }
        entries = {
            priority = 10: 0x10 &&& 0xf0 : a();
            0x11 &&& 0xff : a();
            priority = 30: 0x12 &&& 0xff : a();
        }
    }
"""))
        entries = program.tables["MyIngress.t"].decl.entries
        assert [e.priority.value for e in entries] == [10, 9, 30]  # type: ignore[union-attr]

    def test_new_type_constants_are_constants(self) -> None:
        top = "type bit<9> port_t;\n"
        program = compile_ok(ingress("t.apply();", top=top, locals_="""
    action set(port_t p) { standard_metadata.egress_spec = (bit<9>)p; }
    table t { key = { meta.x: exact; } actions = { set; } default_action = set((port_t)4); }
"""))
        assert program.tables["MyIngress.t"].default_args == [4]

    def test_unknown_table_properties_are_ignored_with_a_warning(self) -> None:
        # as p4c-bm2-ss does (its value is still checked)
        src = ingress("t.apply();",
                      locals_="    table t { actions = { NoAction; } psa_empty = true; }\n")
        [w] = compile_ok(src).warnings
        assert w.format().startswith(  # type: ignore[attr-defined]
            "test.p4(15): [--Wwarn=ignore-prop] warning: Unknown table property: psa_empty")
        bad = ingress("t.apply();",
                      locals_="    table t { actions = { NoAction; } junk = meta.nope; }\n")
        assert diagnostics(bad) == ["Field nope is not a member of structure metadata"]


def test_instantiations_get_their_control_plane_names() -> None:
    top = "control Sub(inout bit<8> v) { register<bit<8>>(2) r; apply { r.write(0, v); } }\n"
    program = compile_ok(ingress("s.apply(meta.x);", locals_="    @name(\"renamed\") Sub() s;\n",
                                 top=top))
    ig = ingress_decl(program)
    s = next(d for d in ig.locals if isinstance(d, A.Instantiation))
    assert s.fqn == "MyIngress.renamed"
    assert s.type == T.ParserOrControl("control", "Sub")
    r = program.externs["MyIngress.renamed.r"]
    assert r.decl.fqn == "MyIngress.renamed.r"
