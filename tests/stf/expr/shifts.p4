/*
 * expr/shifts: << and >> by constants and by a run-time bit<8> amount.
 * >> on int<W> is arithmetic (sign fill); shifting by >= W gives 0 for
 * bit<W> and for <<, and all sign bits for >> on int<W>.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    int<8> x;
    bit<8> sh;
    bit<16> w;
    bit<8> shl_c;
    bit<8> shr_c;
    bit<8> shl_v;
    bit<8> shr_v;
    int<8> ashr_c;
    int<8> ashr_v;
    int<8> ishl_v;
    bit<16> wshl;
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
        hdr.h.shl_c = hdr.h.a << 3;
        hdr.h.shr_c = hdr.h.a >> 3;
        hdr.h.shl_v = hdr.h.a << hdr.h.sh;
        hdr.h.shr_v = hdr.h.a >> hdr.h.sh;
        hdr.h.ashr_c = hdr.h.x >> 2;
        hdr.h.ashr_v = hdr.h.x >> hdr.h.sh;
        hdr.h.ishl_v = hdr.h.x << hdr.h.sh;
        hdr.h.wshl = hdr.h.w << hdr.h.sh;
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
