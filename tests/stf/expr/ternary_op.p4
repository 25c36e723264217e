/*
 * expr/ternary_op: the conditional operator ?:, nested, and with a bool
 * variable as condition.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> mx;
    bit<8> cls;
    bit<16> sel;
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
        hdr.h.mx = (hdr.h.a > hdr.h.b) ? hdr.h.a : hdr.h.b;
        hdr.h.cls = (hdr.h.a == 8w0) ? 8w1 : ((hdr.h.a == 8w1) ? 8w2 : 8w3);
        bool less = hdr.h.a < hdr.h.b;
        hdr.h.sel = less ? 16w0x1111 : 16w0x2222;
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
