"""Parsers: select forms, stacks, errors, lookahead, varbit."""

from __future__ import annotations

import pytest
from v1helpers import eth, program

from switch.engine.runtime import Exact, Ternary

SELECT = program(
    headers="""
header b8_t { bit<8> v; }
struct H { ethernet_t e; b8_t a; b8_t b; b8_t c; }
""",
    parser="""
    state start {
        b.extract(h.e);
        transition select(h.e.etype) {
            0x0800 &&& 0xff00: pa;
            0x1000 .. 0x10ff: pb;
            0x2000: pc;
            default: accept;
        }
    }
    state pa { b.extract(h.a); transition select(h.a.v, h.e.dst[7:0]) {
        (1, 2): pb;
        (_, 3): pc;
        default: accept; } }
    state pb { b.extract(h.b); transition accept; }
    state pc { b.extract(h.c); transition accept; }
""",
    ingress="""
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.PacketTooShort) { h.e.src = 1; }
        else if (sm.parser_error == error.NoMatch) { h.e.src = 2; }
        else if (sm.parser_error == error.StackOutOfBounds) { h.e.src = 3; }
        else { h.e.src = 0; }
    }
""",
    deparser="b.emit(h.e); b.emit(h.a); b.emit(h.b); b.emit(h.c);",
)


def test_select_masks_ranges_tuples(build):
    sw = build(SELECT)

    def run(etype, rest, dst=1):
        out = sw.inject(0, eth(dst=dst, etype=etype) + rest)
        assert len(out) == 1
        return out[0][1]

    # masked: 0x08xx -> pa; a.v=1 and dst low byte 2 -> pb
    d = run(0x0842, b"\x01\x07zz", dst=2)
    assert d[14:16] == b"\x01\x07" and d[16:] == b"zz"
    # (_, 3) -> pc
    d = run(0x0800, b"\x05\x09", dst=3)
    assert d[14:] == b"\x05\x09"
    # range
    d = run(0x1080, b"\x11rest")
    assert d[14:] == b"\x11rest"
    # default
    d = run(0x3000, b"abc")
    assert d[14:] == b"abc"
    # too short: pb wants one more byte -> parser_error PacketTooShort, pipeline goes on
    d = run(0x1000, b"")
    assert int.from_bytes(d[6:12], "big") == 1
    assert len(d) == 14


STACK = program(
    headers="""
header tag_t { bit<7> v; bit<1> bos; }
struct H { ethernet_t e; tag_t[3] tags; }
""",
    meta="struct M { bit<32> n; }",
    parser="""
    state start { b.extract(h.e); transition parse_tag; }
    state parse_tag {
        b.extract(h.tags.next);
        m.n = h.tags.lastIndex;
        transition select(h.tags.last.bos) { 1: accept; default: parse_tag; }
    }
""",
    ingress="""
    apply {
        sm.egress_spec = 2;
        h.e.src = (bit<48>)m.n;
        if (sm.parser_error == error.StackOutOfBounds) { h.e.dst = 3; }
        if (h.tags[0].v == 5) {
            h.tags.push_front(1);
            h.tags[0].setValid();
            h.tags[0].v = 9;
        } else if (h.tags[0].v == 6) {
            h.tags.pop_front(1);
        }
    }
""",
    deparser="b.emit(h.e); b.emit(h.tags);",
)


def test_header_stack(build):
    sw = build(STACK)
    out = sw.inject(0, eth() + bytes([2 << 1, 3 << 1 | 1]) + b"P")
    assert out[0][1][6:12] == (1).to_bytes(6, "big")
    assert out[0][1][14:] == bytes([2 << 1, 3 << 1 | 1]) + b"P"
    # push_front: new element 0 with v=9, old ones shifted
    out = sw.inject(0, eth() + bytes([5 << 1 | 1]))
    assert out[0][1][14:] == bytes([9 << 1, 5 << 1 | 1])
    # pop_front
    out = sw.inject(0, eth() + bytes([6 << 1, 7 << 1 | 1]))
    assert out[0][1][14:] == bytes([7 << 1 | 1])
    # four tags overflow the stack: StackOutOfBounds, first three extracted
    out = sw.inject(0, eth() + bytes([2, 2, 2, 3]))
    d = out[0][1]
    assert d[14:] == bytes([2, 2, 2, 3])
    assert int.from_bytes(d[0:6], "big") == 3


LOOKAHEAD = program(
    headers="""
header opt_t { bit<8> kind; bit<8> len; varbit<64> data; }
header b16_t { bit<16> v; }
struct H { ethernet_t e; opt_t o; b16_t x; }
""",
    parser="""
    state start {
        b.extract(h.e);
        transition select(b.lookahead<bit<8>>()) { 0x07: opt; default: plain; }
    }
    state opt {
        bit<8> l = b.lookahead<bit<16>>()[7:0];
        b.extract(h.o, (bit<32>)(l - 2) * 8);
        transition plain;
    }
    state plain {
        verify(b.lookahead<bit<8>>() != 0xff, error.NoMatch);
        b.extract(h.x);
        b.advance(8);
        transition accept;
    }
""",
    ingress="""
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.PacketTooShort) { h.e.src = 1; }
        else if (sm.parser_error == error.NoMatch) { h.e.src = 2; }
        else { h.e.src = 0; }
    }
""",
    deparser="b.emit(h.e); b.emit(h.o); b.emit(h.x);",
)


def test_lookahead_varbit_verify_advance(build):
    sw = build(LOOKAHEAD)
    opt = bytes([7, 5, 0xAA, 0xBB, 0xCC])
    out = sw.inject(0, eth() + opt + b"\x12\x34" + b"S" + b"tail")
    d = out[0][1]
    assert d[6:12] == bytes(6)
    assert d[14:] == opt + b"\x12\x34" + b"tail"  # the advanced byte is dropped
    out = sw.inject(0, eth() + b"\xff\x00")
    assert int.from_bytes(out[0][1][6:12], "big") == 2


VALUESET = program(
    decls="",
    parser="""
    value_set<bit<16>>(4) types;
    state start {
        b.extract(h.e);
        transition select(h.e.etype) { types: special; default: accept; }
    }
    state special { h.e.dst = 0xAAAA; transition accept; }
""",
    ingress="apply { sm.egress_spec = 1; }",
)


@pytest.mark.parametrize("element", ["bit<16>", "one_t"])
def test_value_set(build, element: str):
    # a value set of a struct of one field matches a key of that field's type, as with
    # p4c (its sample pvs-struct-1-bmv2.p4)
    source = "struct one_t { bit<16> etype; }\n" + VALUESET.replace("bit<16>", element)
    sw = build(source)
    assert sw.inject(0, eth(etype=0x9000))[0][1] == eth(etype=0x9000)
    sw.value_set_set("types", [[Exact(0x9000)], [Ternary(0x8800, 0xFF00)]])
    assert sw.inject(0, eth(etype=0x9000))[0][1] == eth(dst=0xAAAA, etype=0x9000)
    assert sw.inject(0, eth(etype=0x88CC))[0][1] == eth(dst=0xAAAA, etype=0x88CC)
    assert sw.inject(0, eth(etype=0x8900))[0][1] == eth(etype=0x8900)
