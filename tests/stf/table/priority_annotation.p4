/*
 * table/priority_annotation: @priority(N) on const entries is the entry's BMv2
 * priority, where the smaller value wins (p4c-bm2-ss passes it through; entries
 * without one rank by position): k = 0x11 matches both entries and takes the
 * @priority(10) one, port 2.
 */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { h.h.k : ternary; }
        actions = { fwd; }
        default_action = fwd(0);
        const entries = {
            0x10 &&& 0xF0 : fwd(1) @priority(20);
            0x11 &&& 0xFF : fwd(2) @priority(10);
        }
    }
    apply { t.apply(); }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
