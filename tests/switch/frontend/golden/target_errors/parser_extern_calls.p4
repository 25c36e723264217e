// a parser state may only extract, look ahead, advance, verify, assign and log
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> w; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    state start {
        b.extract(h.h);
        r.read(m.x, 0);
        hash(m.z, HashAlgorithm.crc32, 32w0, { h.h.a }, 32w1024);
        mark_to_drop(sm);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
