"""The top-level parser reads at offsets known when the code is generated and builds
the headers of its out struct as it extracts them: the packets and the headers the
pipeline sees are the same as with the plain code (which tracing runs), whatever the
path, including packets cut short anywhere, headers used before they are extracted,
headers extracted twice, a header that does not fill whole bytes and a sub-parser."""

from __future__ import annotations

import random

import pytest

from switch.frontend import compile_text
from switch.v1model import V1Switch

PREAMBLE = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> kind; bit<16> x; }
header b_t { bit<32> y; bit<8> z; }
header n_t { bit<4> hi; bit<4> lo; }
header out_t { bit<8> err; bit<8> valid; bit<32> y; bit<16> x; bit<8> nib; }
struct headers_t { a_t a; b_t b; n_t n; b_t b2; out_t res; }
struct meta_t { bit<8> seen; }
"""

SUB = """
parser Sub(packet_in pk, inout headers_t h) {
    state start { pk.extract(h.b2); transition accept; }
}
"""

TAIL = """
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.res.setValid();
        h.res.err = sm.parser_error == error.NoError ? 8w0 : 8w1;
        h.res.valid = (h.a.isValid() ? 8w1 : 8w0) | (h.b.isValid() ? 8w2 : 8w0)
                      | (h.n.isValid() ? 8w4 : 8w0) | (h.b2.isValid() ? 8w8 : 8w0);
        h.res.y = h.b.y + h.b2.y;
        h.res.x = h.a.x;
        h.res.nib = (bit<8>)h.n.lo;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t h) {
    apply { pk.emit(h.res); pk.emit(h.a); pk.emit(h.n); pk.emit(h.b); pk.emit(h.b2); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""

PARSERS = {
    "paths": """
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.a);
        transition select(h.a.kind) { 1: one; 2: nibble; 3: twice; default: accept; }
    }
    state one { pk.extract(h.b); transition accept; }
    state nibble { pk.extract(h.n); pk.extract(h.b); transition accept; }
    state twice { pk.extract(h.b); pk.extract(h.b); transition select(h.b.z) {
        0: reject; default: accept; } }
}
""",
    "used before extracted": """
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        h.b.setValid();
        h.b.y = 7;
        pk.extract(h.a);
        transition select(h.b.isValid(), h.a.kind) { (true, 1): more; default: accept; }
    }
    state more { pk.extract(h.b); verify(h.b.z != 9, error.ParserInvalidArgument);
                 transition accept; }
}
""",
    "sub-parser": SUB + """
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pk.extract(h.a);
        transition select(h.a.kind) { 1: call; default: accept; }
    }
    state call { sub.apply(pk, h); pk.extract(h.b); transition accept; }
}
""",
}


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_parser_paths_as_the_plain_code(name: str) -> None:
    src = PREAMBLE + PARSERS[name] + TAIL
    fast = V1Switch(compile_text(src, "paths.p4"))
    plain = V1Switch(compile_text(src, "paths.p4"), trace=lambda line: None)
    assert "_new(H_a_t)" in fast.compiled().source  # built by the parser
    rng = random.Random(7)
    seen_errors = set()
    for n in range(400):
        body = bytes([rng.choice([0, 1, 2, 3, 9])]) + bytes(
            rng.choice([0, 9, rng.randrange(256)]) for _ in range(15))
        pkt = body[:rng.randrange(len(body) + 1)]
        out = plain.inject(0, pkt)
        assert fast.inject(0, pkt) == out, f"packet {n}: {pkt.hex()}"
        seen_errors.add(out[0][1][0])
    assert seen_errors == {0, 1}  # some parsed whole, some failed half-way
