// A header whose fields total 9 bits: BMv2 (and p4c-bm2-ss) only take headers whose
// fields add up to whole bytes, so the program is rejected.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<1> flag; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { sm.egress_spec = 0; } }
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
