/*
 * control/assign_lvalue_first: the left-hand side of an assignment is evaluated
 * to an l-value, including its stack index, before the right-hand side (P4_16
 * spec, assignment statement): s[0] gets 0xAA although the right-hand side call
 * increments idx.
 */
#include <core.p4>
#include <v1model.p4>

header i_t { bit<8> idx; }
header e_t { bit<8> a; }
struct headers { i_t i; e_t[2] s; }
struct meta_t { }

bit<8> bump(inout bit<8> x) {
    x = x + 1;
    return 8w0xAA;
}

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.i);
        pkt.extract(h.s.next);
        pkt.extract(h.s.next);
        transition accept;
    }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 0;
        h.s[h.i.idx].a = bump(h.i.idx);
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
