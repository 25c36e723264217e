/*
 * control/for_loop_forms: the forms of the three-clause for statement, in actions
 * (p4c-bm2-ss rejects for-in loops: golden/target_errors/for_in_range.p4; it
 * compiles a loop in a control's apply block for BMv2 as if it ran once).
 *   a: a loop whose continue still runs the update (sum of the even numbers in
 *      0..n, wrapping in bit<8>)
 *   b: no iteration when the condition is false at the start (counts n .. 2)
 *   c: a header stack element indexed by the loop variable
 *   d: an update that is not an increment (sum of the odd numbers 3, 5, 7)
 *   e: nested loops; break leaves the inner loop only
 *   f: return inside a loop of an action ends the action (0xFF only when the
 *      loop runs to its end)
 *   g: return inside a loop of a function
 */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> g; }
header s_t { bit<8> v; }
struct headers { h_t h; s_t[3] s; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.h);
        pkt.extract(h.s[0]);
        pkt.extract(h.s[1]);
        pkt.extract(h.s[2]);
        transition accept;
    }
}
control VC(inout headers h, inout meta_t m) { apply { } }

bit<8> first_square_over(in bit<8> limit) {
    for (bit<8> i = 1; i <= 200; i = i + 1) {
        if ((bit<16>)i * (bit<16>)i > (bit<16>)limit) {
            return i;
        }
    }
    return 0;
}

control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    action even_sum() {
        h.h.a = 0;
        for (bit<8> i = 0; i <= h.h.n; i = i + 1) {
            if (i[0:0] == 1) {
                continue;
            }
            h.h.a = h.h.a + i;
        }
    }
    action count_range() {
        h.h.b = 0;
        for (bit<8> k = h.h.n; k <= 2; k = k + 1) {
            h.h.b = h.h.b + 1;
        }
    }
    action stack_sum() {
        h.h.c = 0;
        for (bit<32> i = 0; i < 3; i = i + 1) {
            h.h.c = h.h.c + h.s[i].v;
        }
    }
    action find(bit<8> target) {
        for (bit<8> i = 1; i < 50; i = i + 1) {
            if (i * 3 >= target) {
                h.h.f = i;
                return;
            }
        }
        h.h.f = 0xFF;
    }
    action odd_sum() {
        h.h.d = 0;
        for (bit<8> w = 3; w <= 7; w = w + 2) {
            h.h.d = h.h.d + w;
        }
    }
    action nested() {
        h.h.e = 0;
        for (bit<8> i = 0; i <= 3; i = i + 1) {
            for (bit<8> j = 0; j <= 3; j = j + 1) {
                if (j > i) {
                    break;
                }
                h.h.e = h.h.e + 1;
            }
        }
    }
    action square() {
        h.h.g = first_square_over(h.h.n);
    }
    apply {
        sm.egress_spec = 0;
        even_sum();
        count_range();
        stack_sum();
        odd_sum();
        nested();
        find(h.h.n);
        square();
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
