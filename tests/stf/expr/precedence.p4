/*
 * expr/precedence: * binds tighter than +, - is left associative, +
 * binds tighter than <<, ! binds tighter than && which binds tighter than
 * ||.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
}
struct headers_t { h_t h; }
struct meta_t { }

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
        hdr.h.r1 = hdr.h.a + hdr.h.b * hdr.h.c;
        hdr.h.r2 = hdr.h.a - hdr.h.b - hdr.h.c;
        hdr.h.r3 = hdr.h.a << 1 + 1;
        bool p = hdr.h.a == 8w1;
        bool q = hdr.h.b == 8w2;
        bool z = hdr.h.c == 8w3;
        hdr.h.r4 = (!p && q || z) ? 8w1 : 8w2;
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
