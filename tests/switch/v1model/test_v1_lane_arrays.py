"""Header fields that lane fusion keeps in one array are copied on write: the copies a
multicast makes share the array until one of them writes a field, a header made valid
again starts from zeros, and every output carries its own values."""

from __future__ import annotations

import struct

from switch.frontend import compile_text
from switch.v1model import V1Switch

K = 8
LANES = "\n".join(f"r{i}.read(x, 0); h.vals.v{i} = h.vals.v{i} + x;" for i in range(K))
REGS = "\n".join(f"register<bit<32>>(1) r{i};" for i in range(K))
FIELDS = " ".join(f"bit<32> v{i};" for i in range(K))

PROGRAM = f"""
#include <core.p4>
#include <v1model.p4>
header tag_t {{ bit<8> op; }}
header vals_t {{ {FIELDS} }}
struct headers_t {{ tag_t tag; vals_t vals; }}
struct meta_t {{ bit<8> unused; }}
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pk.extract(h.tag); pk.extract(h.vals); transition accept; }}
}}
control VC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    {REGS}
    apply {{
        bit<32> x;
        {LANES}
        sm.mcast_grp = 1;
    }}
}}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    apply {{
        if (sm.egress_port == 2) {{
            h.vals.v3 = 99;
        }} else if (sm.egress_port == 3) {{
            h.vals.setInvalid();
            h.vals.setValid();
            h.vals.v0 = 7;
        }}
    }}
}}
control CC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control D(packet_out pk, in headers_t h) {{ apply {{ pk.emit(h.tag); pk.emit(h.vals); }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_multicast_copies_write_their_own_fields() -> None:
    sw = V1Switch(compile_text(PROGRAM, "arrays.p4"))
    assert "# fused:" in sw.compiled().source
    sw.mc_group_set(1, [(1, 0), (2, 0), (3, 0), (4, 0)])
    for i in range(K):
        sw.register_write(f"r{i}", 0, 1000 * i)
    values = [i + 1 for i in range(K)]
    frame = b"\x05" + struct.pack(f">{K}I", *values)
    for _ in range(2):  # the second time, the deparser's bytes of the first are stale
        out = dict(sw.inject(9, frame))
        summed = [v + 1000 * i for i, v in enumerate(values)]
        assert set(out) == {1, 2, 3, 4}
        assert struct.unpack(f">{K}I", out[1][1:]) == tuple(summed)
        assert struct.unpack(f">{K}I", out[4][1:]) == tuple(summed)
        two = list(summed)
        two[3] = 99
        assert struct.unpack(f">{K}I", out[2][1:]) == tuple(two)
        assert struct.unpack(f">{K}I", out[3][1:]) == (7,) + (0,) * (K - 1)


TWO = f"""
#include <core.p4>
#include <v1model.p4>
header vals_t {{ {FIELDS} }}
struct headers_t {{ vals_t a; vals_t b; }}
struct meta_t {{ bit<8> unused; }}
parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    state start {{ pk.extract(h.a); transition accept; }}
}}
control VC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    apply {{
        sm.egress_spec = 1;
        h.b.setValid();
        bit<32> x;
        {" ".join(f"x = h.a.v{i} + 1; h.a.v{i} = x; h.b.v{i} = x;" for i in range(K))}
        h.b.v3 = 99;
    }}
}}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {{
    apply {{ h.a.v5 = 55; }}
}}
control CC(inout headers_t h, inout meta_t m) {{ apply {{ }} }}
control D(packet_out pk, in headers_t h) {{ apply {{ pk.emit(h.a); pk.emit(h.b); }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_a_value_stored_into_two_headers() -> None:
    """Both headers get the lanes' one array: each writes its own field after."""
    sw = V1Switch(compile_text(TWO, "two.p4"))
    assert "# fused:" in sw.compiled().source
    values = [10 * i for i in range(K)]
    (port, out), = sw.inject(0, struct.pack(f">{K}I", *values))
    a = [v + 1 for v in values]
    b = list(a)
    a[5] = 55
    b[3] = 99
    assert struct.unpack(f">{2 * K}I", out) == (*a, *b)
