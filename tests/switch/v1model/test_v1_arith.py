"""Expressions: widths, signedness, saturation, shifts, slices, concatenation, casts,
functions and copy-in/copy-out."""

from __future__ import annotations

from v1helpers import eth, program

ARITH = program(
    headers="""
header r_t {
    bit<8> add; bit<8> sub; bit<8> mul; bit<8> sat_add; bit<8> sat_sub;
    int<8> sadd; int<8> ssat; int<8> sneg; bit<8> shl; bit<8> shr_big; int<8> sshr;
    bit<16> concat; bit<8> slice; bit<8> cast_narrow; int<16> cast_sext; bit<8> not_;
    bit<8> mux; bit<8> fn; bit<8> inout_; bit<8> setslice;
}
struct H { ethernet_t e; r_t r; }
""",
    decls="""
bit<8> twice(in bit<8> x) { return x + x; }
void incr(inout bit<8> x, out bit<8> old) { old = x; x = x + 1; }
""",
    parser="state start { b.extract(h.e); b.extract(h.r); transition accept; }",
    ingress="""
    action bump(inout bit<8> v) { v = v + 3; }
    apply {
        sm.egress_spec = 1;
        bit<8> a = 200;
        bit<8> c = 100;
        int<8> s = 100;
        h.r.add = a + c;
        h.r.sub = c - a;
        h.r.mul = a * 3;
        h.r.sat_add = a |+| c;
        h.r.sat_sub = c |-| a;
        h.r.sadd = s + 100;
        h.r.ssat = s |+| 100;
        int<8> mn = -128;
        h.r.sneg = -mn;
        bit<8> n = (bit<8>)h.e.etype[7:0];
        h.r.shl = a << n;
        h.r.shr_big = a >> (bit<8>)9;
        h.r.sshr = mn >> 2;
        h.r.concat = a ++ c;
        h.r.slice = h.e.dst[11:4];
        h.r.cast_narrow = (bit<8>)h.e.src;
        h.r.cast_sext = (int<16>)mn;
        h.r.not_ = ~c;
        h.r.mux = n > 2 ? a : c;
        h.r.fn = twice(c);
        bit<8> old;
        bit<8> v = 7;
        incr(v, old);
        bump(v);
        h.r.inout_ = v ++ old == 0 ? 1 : v;
        bit<8> w = 0xff;
        w[3:0] = 0;
        h.r.setslice = w;
    }
""",
    deparser="b.emit(h.e); b.emit(h.r);",
)


def test_arithmetic(build):
    sw = build(ARITH)
    out = sw.inject(0, eth(dst=0xABC, src=0x1FF, etype=0x0001) + bytes(22))
    r = out[0][1][14:]
    assert r[0] == (300 & 0xFF)
    assert r[1] == (100 - 200) & 0xFF
    assert r[2] == (600 & 0xFF)
    assert r[3] == 255
    assert r[4] == 0
    assert r[5] == (200 - 256) & 0xFF  # int<8>: 100 + 100 wraps to -56
    assert r[6] == 127
    assert r[7] == 0x80  # -(-128) wraps
    assert r[8] == (200 << 1) & 0xFF
    assert r[9] == 0
    assert r[10] == (-32) & 0xFF
    assert r[11:13] == bytes([200, 100])
    assert r[13] == 0xAB
    assert r[14] == 0xFF
    assert r[15:17] == (0xFF80).to_bytes(2, "big")
    assert r[17] == 0xFF - 100
    assert r[18] == 100  # n = 1
    assert r[19] == 200
    assert r[20] == 11  # 7 -> incr 8 -> bump 11
    assert r[21] == 0xF0
    # shifting by a large amount from the packet
    out = sw.inject(0, eth(dst=0xABC, src=0x1FF, etype=0x00FF) + bytes(22))
    assert out[0][1][14 + 8] == 0
