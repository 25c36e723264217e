/*
 * expr/header_assign: header assignment copies the fields and the
 * validity bit (assigning from a never-valid header invalidates the
 * target); struct assignment copies all members by value.
 */

#include <core.p4>
#include <v1model.p4>

header p_t {
    bit<8>  x;
    bit<16> y;
}
struct pair_t {
    bit<8> u;
    bit<8> v;
}
struct headers_t {
    p_t a;
    p_t b;
    p_t c;
    p_t never;
}
struct meta_t {
    pair_t s1;
    pair_t s2;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        pkt.extract(hdr.c);
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
        hdr.b = hdr.a;
        hdr.b.x = hdr.b.x + 1;
        hdr.c = hdr.never;
        meta.s1.u = hdr.a.x;
        meta.s1.v = 8w0x5A;
        meta.s2 = meta.s1;
        meta.s1.u = 8w0;
        hdr.a.y = meta.s2.u ++ meta.s2.v;
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
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
        pkt.emit(hdr.c);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
