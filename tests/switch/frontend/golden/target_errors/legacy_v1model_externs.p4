// v1model externs p4c-bm2-ss no longer implements
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
    Checksum16() ck;
    apply {
        mark_to_drop();
        clone3(CloneType.I2E, 6, { h.h.a });
        resubmit({ h.h.a });
        recirculate({ h.h.b });
        h.h.c = ck.get({ h.h.a });
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
