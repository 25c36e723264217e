/*
 * expr/unary_minus: -e on bit<8> is 2^8 - e (mod 2^8); on int<8> it is
 * two's complement negation (-(-128) == -128); negative literal -8s5.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    int<8> x;
    bit<8> na;
    int<8> nx;
    int<8> lit;
    bit<8> dbl;
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
        hdr.h.na = -hdr.h.a;
        hdr.h.nx = -hdr.h.x;
        hdr.h.lit = -8s5;
        hdr.h.dbl = -(-hdr.h.a);
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
