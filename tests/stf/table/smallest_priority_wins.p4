/*
 * table/smallest_priority_wins: with largest_priority_wins = false the entry
 * with the smallest written priority wins among the program's entries
 * (priority=1 beats priority=2 whatever their order). Entries the control plane
 * adds still follow the STF and P4Runtime rule: the larger priority wins.
 */

#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> r; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { h.h.r = v; }
    table t {
        key = { h.h.k : ternary; }
        actions = { set; }
        default_action = set(0);
        largest_priority_wins = false;
        entries = {
            priority=2: 0x10 &&& 0xF0 : set(2);
            priority=1: 0x11 &&& 0xFF : set(1);
        }
    }
    apply { sm.egress_spec = 0; t.apply(); }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
