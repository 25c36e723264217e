/*
 * control/for_loop_control_flow: leaving loops.
 *   a, b: return inside two nested for-in loops of an action leaves both loops
 *         and the action (0xEE only when no i * j equals n)
 *   c:    the condition calls a function with an inout argument; it runs again
 *         before every iteration (key counts up to 4)
 *   e, f: exit inside a loop ends the ingress control at once (n = 0xFF)
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

bool step(inout bit<8> x) {
    x = x + 1;
    return x < 4;
}

control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    action nested_find(bit<8> target) {
        for (bit<8> i in 1 .. 9) {
            for (bit<8> j in 1 .. 9) {
                if (i * j == target) {
                    h.h.a = i;
                    h.h.b = j;
                    return;
                }
            }
        }
        h.h.a = 0xEE;
    }
    action count_up() {
        for (bit<8> i in 0 .. 3) {
            if (i == 2 && h.h.n == 0xFF) {
                exit;
            }
            h.h.e = h.h.e + 1;
        }
    }
    apply {
        sm.egress_spec = 0;
        nested_find(h.h.n);
        h.h.c = 0;
        for (; step(h.h.key);) {
            h.h.c = h.h.c + 1;
        }
        count_up();
        h.h.f = 1;
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
