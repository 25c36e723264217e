/*
 * expr/tuple_element_assign: an element of a tuple variable is an l-value (x[0] = v),
 * also a field of a header element (x[1].f = v) and a slice of an element; the other
 * elements keep their values.
 */

#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
header tag_t { bit<8> v; }

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
        tuple<bit<8>, tag_t, bit<8>> t = { hdr.h.a, { 8w0x11 }, hdr.h.c };
        t[0] = t[0] + 1;
        t[1].v = hdr.h.b;
        t[2][3:0] = 4w0;
        hdr.h.a = t[0];
        hdr.h.b = t[1].v + 1;
        hdr.h.c = t[2];
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
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
