// BMv2 shifts by at most 8 bits: a bit<W> amount wider than that, even a constant one
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> w; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action shift_by(bit<16> s) { h.h.w = h.h.w << s; }
    table t { key = { h.h.a : exact; } actions = { shift_by; } }
    apply {
        t.apply();
        h.h.w = (bit<32>)1 << m.y;
        h.h.w = h.h.w >> 16w3;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
