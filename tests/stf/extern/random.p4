/*
 * extern/random: random(result, lo, hi) always returns a value in
 * [lo, hi]; with lo == hi the result is exactly lo.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  r8;
    bit<16> r16;
    bit<32> r32;
    bit<8>  inrange;
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
        random(hdr.h.r8, 8w5, 8w5);
        random(hdr.h.r16, 16w7, 16w7);
        random(hdr.h.r32, 32w0x12345678, 32w0x12345678);
        bit<8> x;
        random(x, 8w10, 8w20);
        if (x >= 8w10 && x <= 8w20) {
            hdr.h.inrange = 8w1;
        } else {
            hdr.h.inrange = 8w2;
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
