/*
 * expr/saturating: |+| and |-| saturate instead of wrapping: to
 * [0, 2^W-1] for bit<W> and to [-2^(W-1), 2^(W-1)-1] for int<W>.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    int<8> x;
    int<8> y;
    bit<16> c;
    bit<16> d;
    bit<8> ua;
    bit<8> us;
    int<8> sa;
    int<8> ss;
    bit<16> ua16;
    bit<16> us16;
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
        hdr.h.ua = hdr.h.a |+| hdr.h.b;
        hdr.h.us = hdr.h.a |-| hdr.h.b;
        hdr.h.sa = hdr.h.x |+| hdr.h.y;
        hdr.h.ss = hdr.h.x |-| hdr.h.y;
        hdr.h.ua16 = hdr.h.c |+| hdr.h.d;
        hdr.h.us16 = hdr.h.c |-| hdr.h.d;
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
