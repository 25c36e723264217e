/*
 * expr/wide_bits: arithmetic, shifts and slices on bit<64> and bit<48>
 * values wrap modulo 2^64 / 2^48.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<64> a;
    bit<64> b;
    bit<48> m;
    bit<64> add;
    bit<64> sub;
    bit<64> mul;
    bit<48> minc;
    bit<64> shl;
    bit<32> hi;
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
        hdr.h.add = hdr.h.a + hdr.h.b;
        hdr.h.sub = hdr.h.a - hdr.h.b;
        hdr.h.mul = hdr.h.a * hdr.h.b;
        hdr.h.minc = hdr.h.m + 1;
        hdr.h.shl = hdr.h.a << 4;
        hdr.h.hi = hdr.h.a[63:32];
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
