/*
 * parser/lookahead: lookahead<bit<8>>() peeks at the next byte without
 * consuming it; select on the peeked value decides whether an optional tag
 * header is present.
 */

#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> t;
    bit<8> v;
}
header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t { tag_t tag; h_t h; }
struct meta_t { bit<8> first; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        meta.first = pkt.lookahead<bit<8>>();
        transition select(pkt.lookahead<bit<8>>()) {
            8w0xAA: parse_tag;
            default: parse_h;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition parse_h;
    }
    state parse_h {
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
        if (hdr.tag.isValid()) {
            hdr.h.b = hdr.tag.v;
        } else {
            hdr.h.b = meta.first + 1;
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
        pkt.emit(hdr.tag);
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
