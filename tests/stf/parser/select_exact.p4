/*
 * parser/select_exact: select on a field with exact values and default.
 * The chosen state extracts a different header; ingress modifies whichever
 * header is valid so the output shows which path was taken.
 */

#include <core.p4>
#include <v1model.p4>

header t_t { bit<8> kind; }
header a_t { bit<16> x; }
header b_t { bit<8> y; }
struct headers_t { t_t t; a_t a; b_t b; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.t);
        transition select(hdr.t.kind) {
            8w1: parse_a;
            8w2: parse_b;
            default: accept;
        }
    }
    state parse_a {
        pkt.extract(hdr.a);
        transition accept;
    }
    state parse_b {
        pkt.extract(hdr.b);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.a.isValid()) {
            hdr.a.x = hdr.a.x + 1;
            sm.egress_spec = 1;
        } else if (hdr.b.isValid()) {
            hdr.b.y = ~hdr.b.y;
            sm.egress_spec = 2;
        } else {
            sm.egress_spec = 3;
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
        pkt.emit(hdr.t);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
