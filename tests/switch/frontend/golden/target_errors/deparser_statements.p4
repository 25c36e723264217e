// a deparser only emits (and calls extern functions)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> w; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) {
    register<bit<8>>(1) r;
    apply {
        if (h.h.a == 1) {
            b.emit(h.h);
        }
        r.write(0, h.h.b);
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
