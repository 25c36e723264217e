/*
 * expr/bool_type: bool local variables, a bool metadata field, bool
 * literals, == / != on bools, and casts bool -> bit<1> and bit<1> -> bool.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<1> f;
    bit<7> pad;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
}
struct headers_t { h_t h; }
struct meta_t { bool flag; }

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
        bool big = hdr.h.a > 8w5;
        meta.flag = !big;
        hdr.h.r1 = (bit<8>)((bit<1>)big);
        hdr.h.r2 = meta.flag ? 8w0x22 : 8w0x33;
        hdr.h.r3 = (bit<8>)((bit<1>)true);
        bool g = (bool)hdr.h.f;
        if (g == true && big != g) {
            hdr.h.r4 = 8w1;
        } else {
            hdr.h.r4 = 8w2;
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
