/*
 * expr/header_validity: isValid / setValid / setInvalid. The deparser
 * emits only valid headers: a parsed header made invalid disappears from
 * the output, a header made valid in ingress (all fields assigned) is
 * inserted.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> flags;
    bit<8> kind;
}
header g_t { bit<8> v; }
header n_t { bit<16> v; }
struct headers_t { h_t h; n_t n; g_t g; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) {
            8w1: parse_g;
            default: accept;
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
        bit<8> f = 8w0;
        if (hdr.h.isValid()) {
            f = f | 8w1;
        }
        if (hdr.g.isValid()) {
            f = f | 8w2;
        }
        if (hdr.n.isValid()) {
            f = f | 8w4;
        }
        hdr.h.flags = f;
        if (hdr.g.isValid()) {
            hdr.g.setInvalid();
        } else {
            hdr.n.setValid();
            hdr.n.v = 16w0xBEEF;
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
        pkt.emit(hdr.n);
        pkt.emit(hdr.g);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
