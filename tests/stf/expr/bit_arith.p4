/*
 * expr/bit_arith: + - * on bit<8> and bit<16> wrap around modulo 2^W.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a8;
    bit<8> b8;
    bit<16> a16;
    bit<16> b16;
    bit<8> add8;
    bit<8> sub8;
    bit<8> mul8;
    bit<16> add16;
    bit<16> sub16;
    bit<16> mul16;
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
        hdr.h.add8 = hdr.h.a8 + hdr.h.b8;
        hdr.h.sub8 = hdr.h.a8 - hdr.h.b8;
        hdr.h.mul8 = hdr.h.a8 * hdr.h.b8;
        hdr.h.add16 = hdr.h.a16 + hdr.h.b16;
        hdr.h.sub16 = hdr.h.a16 - hdr.h.b16;
        hdr.h.mul16 = hdr.h.a16 * hdr.h.b16;
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
