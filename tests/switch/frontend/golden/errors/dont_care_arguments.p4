#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { bit<8> x; }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        b.extract(_);
        b.extract<bit<8>>(_);
        b.extract(h.h);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action set(inout bit<8> v) { v = 1; }
    apply {
        hash(_, HashAlgorithm.crc16, 16w0, { h.h.a }, 16w0xFFFF);
        set(_);
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
