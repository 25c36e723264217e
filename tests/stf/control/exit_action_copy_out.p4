/*
 * control/exit_action_copy_out: exit inside a directly called action still
 * copies out the action's out/inout arguments (P4_16 spec, exit statement): x is
 * 7 and the statement after the call does not run, so y stays 0.
 */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> x; bit<8> y; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    action set_and_exit(inout bit<8> v) {
        v = 7;
        exit;
    }
    apply {
        sm.egress_spec = 0;
        set_and_exit(h.h.x);
        h.h.y = 9;
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
