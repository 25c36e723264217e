"""Consecutive emits merged into one pack (``codegen_emits``) give the same bytes as
one emit at a time (the traced switch does not merge), whichever headers are valid."""

from __future__ import annotations

import random

from switch.frontend import compile_text
from switch.v1model import V1Switch

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<4> x; bit<4> y; bit<8> z; int<16> s; bit<48> mac; }
header b_t { bool f; bit<7> g; bit<32> v; }
header c_t { bit<8> c0; bit<8> c1; bit<8> c2; bit<8> c3; bit<8> c4; bit<8> c5; }
header d_t { bit<8> kill; }
struct h_t { d_t d; a_t a; b_t b; c_t c; }
struct m_t { bit<8> unused; }
parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.d); pk.extract(h.a); pk.extract(h.b); pk.extract(h.c);
                  transition accept; }
}
control V(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.a.s = h.a.s - 1;
        h.b.f = !h.b.f;
        if (h.d.kill & 1 != 0) { h.a.setInvalid(); }
        if (h.d.kill & 2 != 0) { h.b.setInvalid(); }
        if (h.d.kill & 4 != 0) { h.c.setInvalid(); }
    }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pk, in h_t h) {
    apply { pk.emit(h.d); pk.emit(h.a); pk.emit(h.b); pk.emit(h.c); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_merged_emits_give_the_bytes_of_single_emits() -> None:
    merged = V1Switch(compile_text(PROGRAM, "emits.p4"))
    single = V1Switch(compile_text(PROGRAM, "emits.p4"), trace=lambda line: None)
    assert merged.compiled().source.count("_g_emit") == 1  # one merged pack
    rng = random.Random(3)
    for kill in range(8):
        for _ in range(20):
            pkt = bytes([kill]) + bytes(rng.randrange(256) for _ in range(25))
            out = merged.inject(0, pkt)
            assert out == single.inject(0, pkt)
            (_port, data), = out
            assert len(data) == 26 - 10 * (kill & 1) - 5 * (kill >> 1 & 1) - 6 * (kill >> 2 & 1)
