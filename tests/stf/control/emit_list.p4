/*
 * control/emit_list: a deparser emits a list of headers (a tuple), in the list's
 * order, skipping the invalid ones, and a local tuple variable the same way.
 */

#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> v; }
header b_t { bit<16> v; }

struct headers_t {
    a_t a;
    b_t b;
    a_t extra;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
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
        sm.egress_spec = 1;
        if (hdr.a.v == 1) {
            hdr.extra.setValid();
            hdr.extra.v = 0xEE;
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
        pkt.emit({ hdr.b, hdr.extra });
        tuple<a_t> rest = { hdr.a };
        pkt.emit(rest);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
