"""csum16 over a field list is computed from the fields' 16-bit word sum, without
serialising them: it must equal the Internet checksum of the serialised bytes for
odd widths, fields of several headers interleaved, an invalid header (left out), a
varbit of changing width, and totals that are not whole words."""

from __future__ import annotations

import random

from switch.engine.hashes import csum16
from switch.frontend import compile_text
from switch.v1model import V1Switch

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<3> x; bit<13> y; bit<8> z; bit<32> w; bit<4> q; bit<4> n; }
header b_t { varbit<64> v; }
header c_t { bit<16> csum; bit<8> pad; bit<8> err; }
struct h_t { a_t a; b_t b; c_t c; }
struct m_t { bit<8> unused; }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.a);
        transition select(h.a.n) { 0: no_b; default: with_b; }
    }
    state with_b { pk.extract(h.b, (bit<32>)h.a.n * 8); transition no_b; }
    state no_b { pk.extract(h.c); transition accept; }
}
control V(inout h_t h, inout m_t m) {
    apply {
        verify_checksum(true, { h.a.x, h.a.y, h.b.v, h.a.z, h.c.pad, h.a.q },
                        h.c.csum, HashAlgorithm.csum16);
    }
}
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; h.c.err = (bit<8>)sm.checksum_error; }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout h_t h, inout m_t m) {
    apply {
        update_checksum(true, { h.a.x, h.a.y, h.b.v, h.a.z, h.c.pad, h.a.q },
                        h.c.csum, HashAlgorithm.csum16);
        update_checksum(h.a.w[0:0] == 1, { h.a.w, h.a.y }, h.a.w[31:16], HashAlgorithm.csum16);
    }
}
control D(packet_out pk, in h_t h) { apply { pk.emit(h.a); pk.emit(h.b); pk.emit(h.c); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def _reference(fields: list[tuple[int, int]]) -> int:
    """csum16 of the fields' bits concatenated and padded to a whole byte."""
    acc, total = 0, 0
    for value, width in fields:
        acc, total = (acc << width) | value, total + width
    pad = -total % 8
    return csum16((acc << pad).to_bytes((total + pad) // 8, "big"))


def test_word_sum_checksums_equal_the_bytes_checksum() -> None:
    sw = V1Switch(compile_text(PROGRAM, "csum.p4"))
    rng = random.Random(5)
    for i in range(300):
        n = rng.choice([0, 0, 1, 2, 3, 5, 8])
        a = rng.getrandbits(64) & ~0xF | n
        b = rng.getrandbits(8 * n) if n else 0
        if i % 7 == 0:
            a, b = n, 0  # zero fields (and all-zero data)
        x, y, z = a >> 61, (a >> 48) & 0x1FFF, (a >> 40) & 0xFF
        w, q = (a >> 8) & 0xFFFFFFFF, (a >> 4) & 0xF
        pad = rng.randrange(256)
        fields = [(x, 3), (y, 13)] + ([(b, 8 * n)] if n else []) + [(z, 8), (pad, 8), (q, 4)]
        good = _reference(fields)
        csum = good if i % 3 else rng.randrange(1 << 16)
        pkt = a.to_bytes(8, "big") + (b.to_bytes(n, "big") if n else b"") \
            + csum.to_bytes(2, "big") + bytes([pad, 0])
        (_port, out), = sw.inject(0, pkt)
        c = out[8 + n:]
        assert int.from_bytes(c[0:2], "big") == good, i
        assert c[3] == (csum != good), i  # verify_checksum's verdict
        w_out = int.from_bytes(out[3:7], "big")
        if w & 1:  # the second update writes w's top half from (w, y)
            assert w_out >> 16 == _reference([(w, 32), (y, 13)]), i
        else:
            assert w_out == w, i
