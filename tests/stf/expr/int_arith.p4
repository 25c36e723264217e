/*
 * expr/int_arith: + - * and unary minus on int<8> / int<16> use two's
 * complement and wrap around (e.g. 100 + 100 = -56, -(-128) = -128).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    int<8> x;
    int<8> y;
    int<16> p;
    int<16> q;
    int<8> add8;
    int<8> sub8;
    int<8> mul8;
    int<8> neg8;
    int<16> add16;
    int<16> sub16;
    int<16> mul16;
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
        hdr.h.add8 = hdr.h.x + hdr.h.y;
        hdr.h.sub8 = hdr.h.x - hdr.h.y;
        hdr.h.mul8 = hdr.h.x * hdr.h.y;
        hdr.h.neg8 = -hdr.h.x;
        hdr.h.add16 = hdr.h.p + hdr.h.q;
        hdr.h.sub16 = hdr.h.p - hdr.h.q;
        hdr.h.mul16 = hdr.h.p * hdr.h.q;
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
