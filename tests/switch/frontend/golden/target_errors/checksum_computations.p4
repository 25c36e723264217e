// BMv2 computes a checksum over fields and constants only: a computed value in the
// data is refused (the outermost operator of it)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> w; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; bool t; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) {
    apply {
        update_checksum(true, { h.h.a ++ h.h.b, h.h.w, 8w0 | h.h.a }, h.h.c,
                        HashAlgorithm.csum16);
        update_checksum(h.h.isValid(), { h.h.a, (bit<16>)m.x + 1, true }, h.h.c,
                        HashAlgorithm.csum16);
    }
}
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
