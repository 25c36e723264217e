/*
 * parser/advance: pkt.advance(16) skips two bytes. Skipped bytes are
 * consumed by the parser and are therefore not part of the deparsed
 * output (only emitted headers + the unparsed remainder are sent).
 */

#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
header g_t { bit<8> b; }
struct headers_t { h_t h; g_t g; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.advance(32w16);
        pkt.extract(hdr.g);
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
        hdr.g.b = hdr.g.b + hdr.h.a;
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
        pkt.emit(hdr.g);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
