// a generic block is checked with its type parameters as types of their own
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; }
control Same<T>(inout T v, in T w)(T init) {
    apply {
        if (v == w) {
            v = init;
        }
        v = v + w;
    }
}
parser Take<H>(packet_in b, out H hdr) {
    state start { b.extract(hdr); transition accept; }
}
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    Same<bit<8>>(8w0) same;
    apply {
        same.apply(h.h.a, h.h.b);
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
