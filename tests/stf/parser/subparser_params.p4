/*
 * parser/subparser_params: sub-parsers whatever their parameters. Count takes no
 * packet_in (it only works on metadata); Second takes the packet after another
 * parameter and extracts a header from where its caller stopped. Ingress writes
 * what they found into the first header.
 */

#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
header g_t { bit<8> c; }
struct headers_t { h_t h; g_t g; }
struct meta_t { bit<8> x; }

parser Count(inout meta_t m, in bit<8> v) {
    state start {
        m.x = v + 1;
        transition accept;
    }
}

parser Second(inout headers_t hdr, packet_in pkt) {
    state start {
        pkt.extract(hdr.g);
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    Count() count;
    Second() second;
    state start {
        pkt.extract(hdr.h);
        count.apply(meta, hdr.h.a);
        second.apply(hdr, pkt);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.b = meta.x + hdr.g.c;
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.g);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
