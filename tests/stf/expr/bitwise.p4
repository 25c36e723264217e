/*
 * expr/bitwise: ~ & | ^ on bit<8>, bit<16> and int<8> operands.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<16> c;
    bit<16> d;
    int<8> x;
    int<8> y;
    bit<8> not8;
    bit<8> and8;
    bit<8> or8;
    bit<8> xor8;
    bit<16> not16;
    bit<16> and16;
    bit<16> or16;
    bit<16> xor16;
    int<8> notx;
    int<8> andxy;
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
        hdr.h.not8 = ~hdr.h.a;
        hdr.h.and8 = hdr.h.a & hdr.h.b;
        hdr.h.or8 = hdr.h.a | hdr.h.b;
        hdr.h.xor8 = hdr.h.a ^ hdr.h.b;
        hdr.h.not16 = ~hdr.h.c;
        hdr.h.and16 = hdr.h.c & hdr.h.d;
        hdr.h.or16 = hdr.h.c | hdr.h.d;
        hdr.h.xor16 = hdr.h.c ^ hdr.h.d;
        hdr.h.notx = ~hdr.h.x;
        hdr.h.andxy = hdr.h.x & hdr.h.y;
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
