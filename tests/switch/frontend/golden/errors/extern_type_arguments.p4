// Extern type arguments BMv2 cannot hold: p4c-bm2-ss takes only bit<W> or int<W>
// register elements (bool and structs are refused), no register of size 0, and the
// values random, hash and meters write are single fields.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct meta_t { }
struct pair_t { bit<8> lo; bit<8> hi; }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    register<pair_t>(16) pairs;
    register<bool>(16) flags;
    register<bit<8>>(0) direct;
    apply {
        pair_t p;
        random(p, { 8w0, 8w0 }, { 8w1, 8w1 });
        sm.egress_spec = 0;
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
