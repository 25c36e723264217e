/*
 * expr/int_literals: literal forms: width-prefixed (8w, 8s), hex 0x/0X,
 * binary 0b, octal 0o, underscores, infinite-precision literals converted
 * to the target type, and arithmetic on literals.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<16> r5;
    bit<16> r6;
    bit<8> r7;
    bit<8> r8;
    int<8> s1;
    int<8> s2;
    int<8> s3;
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
        hdr.h.r1 = 8w0xFF;
        hdr.h.r2 = 8w0b1010_0101;
        hdr.h.r3 = 8w0o17;
        hdr.h.r4 = 8w255 + 8w1;
        hdr.h.r5 = 1_000;
        hdr.h.r6 = 16w0X12Ab;
        hdr.h.r7 = 10 + 20;
        hdr.h.r8 = 8w5 - 8w10;
        hdr.h.s1 = -8s3;
        hdr.h.s2 = (int<8>)8w200;
        hdr.h.s3 = 8s0x7F;
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
