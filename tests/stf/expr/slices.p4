/*
 * expr/slices: bit slices e[h:l] as values (also of an int<16>, which
 * gives an unsigned bit<8>) and as assignment targets (only the selected
 * bits change).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> a16;
    bit<32> a32;
    int<16> s16;
    bit<16> w;
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
        hdr.h.r1 = hdr.h.a16[11:4];
        hdr.h.r2 = hdr.h.a32[31:24];
        bit<8> tmp = 8w0;
        tmp[7:4] = hdr.h.a16[3:0];
        tmp[3:0] = 4w0xA;
        hdr.h.r3 = tmp;
        hdr.h.r4 = hdr.h.s16[15:8];
        hdr.h.w[15:8] = 8w0xAB;
        hdr.h.w[0:0] = 1w1;
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
