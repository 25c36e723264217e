/*
 * control/for_loop: P4_16 1.2.5 three-clause for statements inside an action.
 * The first loop adds 1..n (its body never runs when n = 0); the second loop
 * leaves through break when j == 4, after four increments of cnt.
 */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; bit<16> sum; bit<8> cnt; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    action loops() {
        h.h.sum = 0;
        for (bit<8> i = 1; i <= h.h.n; i = i + 1) {
            h.h.sum = h.h.sum + (bit<16>)i;
        }
        h.h.cnt = 0;
        for (bit<8> j = 0; j < 10; j = j + 1) {
            if (j == 4) {
                break;
            }
            h.h.cnt = h.h.cnt + 1;
        }
    }
    apply {
        sm.egress_spec = 0;
        loops();
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
