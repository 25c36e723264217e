/*
 * control/for_loop_control_flow: leaving loops.
 *   a, b: return inside two nested loops of an action leaves both loops and the
 *         action (0xEE only when no i * j equals n)
 *   c:    the condition reads what the update writes; it is tested again before
 *         every iteration (key counts up to 4; a condition with side effects, such
 *         as a call, is an error: golden/target_errors/for_condition_side_effects.p4)
 *   e, f: exit inside a loop ends the ingress control at once (n = 0xFF)
 * The loops are in actions: p4c-bm2-ss compiles a loop in a control's apply block
 * for BMv2 as if it ran once.
 */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; bit<8> key; bit<8> a; bit<8> b; bit<8> c; bit<8> e; bit<8> f; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }

control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    action nested_find(bit<8> target) {
        for (bit<8> i = 1; i <= 9; i = i + 1) {
            for (bit<8> j = 1; j <= 9; j = j + 1) {
                if (i * j == target) {
                    h.h.a = i;
                    h.h.b = j;
                    return;
                }
            }
        }
        h.h.a = 0xEE;
    }
    action count_key() {
        h.h.c = 0;
        for (h.h.key = h.h.key + 1; h.h.key < 4; h.h.key = h.h.key + 1) {
            h.h.c = h.h.c + 1;
        }
    }
    action count_up() {
        for (bit<8> i = 0; i <= 3; i = i + 1) {
            if (i == 2 && h.h.n == 0xFF) {
                exit;
            }
            h.h.e = h.h.e + 1;
        }
    }
    apply {
        sm.egress_spec = 0;
        nested_find(h.h.n);
        count_key();
        count_up();
        h.h.f = 1;
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
