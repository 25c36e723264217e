#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; int<8> c; }
struct headers { h_t h; }
struct metadata { bool f; }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action bump(in bit<8> x) { x += 1; }
    apply {
        m.f &= true;
        h.h.a += 16w1;
        h.h.a <<= h.h.c;
        h.h.a >>= -1;
        h.h += h.h;
        bump(h.h.a);
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
