/*
 * expr/typedef_type: typedef aliases (interchangeable with the underlying
 * type) and a `type` declaration (a new type, converted with explicit casts
 * and compared with ==).
 */

#include <core.p4>
#include <v1model.p4>

typedef bit<8>  byte_t;
typedef bit<16> word_t;
type bit<8> tag_t;

header h_t {
    byte_t a;
    word_t w;
    byte_t r;
    byte_t m;
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
        tag_t t = (tag_t)hdr.h.a;
        byte_t b = (byte_t)t;
        hdr.h.r = b + 8w1;
        hdr.h.w = hdr.h.w + (word_t)b;
        if (t == (tag_t)8w5) {
            hdr.h.m = 8w0x55;
        } else {
            hdr.h.m = 8w0xAA;
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
