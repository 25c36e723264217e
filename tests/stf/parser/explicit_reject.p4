/*
 * parser/explicit_reject: transition accept / transition reject.
 * A packet reaching reject in v1model still goes to ingress with the headers
 * extracted before the reject (only the packet path is checked here, not the
 * parser_error value, which the spec leaves to the architecture).
 */

#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> kind; }
header g_t { bit<8> v; }
struct headers_t { h_t h; g_t g; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) {
            8w1: parse_g;
            default: reject;
        }
    }
    state parse_g {
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
        if (hdr.g.isValid()) {
            hdr.g.v = hdr.g.v + 1;
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
        pkt.emit(hdr.g);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
