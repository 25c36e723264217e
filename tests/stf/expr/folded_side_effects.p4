/*
 * expr/folded_side_effects: an operator whose value p4c folds (0 >> f(x), 0 % f(x),
 * 0 & f(x), x << (0 & f(x)), a slice that reads none of f's bits, an if whose
 * condition folds) still calls f, once: its side effect (it counts its calls in c*)
 * shows in the packet, as on BMv2. bump8 returns the count before the call, so the
 * first call divides 0 by 0, which the folded operator never does.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> c1; bit<8> c2; bit<8> c3; bit<8> c4; bit<8> c5; bit<8> c6; bit<8> c7;
    bit<8> c8;
    bit<16> s;
    bit<16> r16;
    bit<8> r8a; bit<8> r8b; bit<8> r8c; bit<8> r8d; bit<8> r8e;
}
struct headers_t { h_t h; }
struct meta_t { }

bit<16> bump16(inout bit<8> count) {
    count = count + 1;
    return 16w0x0100 + (bit<16>)count;
}

bit<8> bump8(inout bit<8> count) {
    count = count + 1;
    return count - 1;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.r16 = 16w0 >> bump16(hdr.h.c1);
        hdr.h.r16 = hdr.h.r16 | 16w0 << bump16(hdr.h.c2);
        hdr.h.r8a = 8w0 % bump8(hdr.h.c3);
        hdr.h.r8b = 8w0 / bump8(hdr.h.c4);
        hdr.h.r8c = 8w0 & bump8(hdr.h.c5);
        hdr.h.s = hdr.h.s << (16w0 & bump16(hdr.h.c6));
        hdr.h.r8d = (hdr.h.r8d ++ hdr.h.r8d / bump8(hdr.h.c7))[15:8];
        if ((8w0 * bump8(hdr.h.c8)) != 0) {
            hdr.h.r8e = hdr.h.r8e / hdr.h.c8;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
