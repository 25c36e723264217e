/*
 * expr/concat: ++ concatenates bit strings, the left operand supplying
 * the most significant bits; widths add up.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<16> c;
    bit<16> ab;
    bit<24> ac;
    bit<16> nib;
    bit<32> abc;
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
        hdr.h.ab = hdr.h.a ++ hdr.h.b;
        hdr.h.ac = hdr.h.a ++ hdr.h.c;
        hdr.h.nib = hdr.h.a[3:0] ++ hdr.h.b ++ 4w0xF;
        hdr.h.abc = hdr.h.a ++ hdr.h.b ++ hdr.h.c;
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
