/*
 * v1model/resubmit: resubmit_preserving_field_list(1) restarts ingress
 * with the original packet (header modifications of the first pass are
 * lost) and instance_type == 6 (PKT_INSTANCE_TYPE_RESUBMIT). Only metadata
 * annotated @field_list(1) survive, with their values at the end of the
 * first pass. Resubmit takes precedence over egress_spec.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> x;
    bit<8> inst;
    bit<8> mark;
    bit<8> other;
}
struct headers_t { h_t h; }
struct meta_t {
    @field_list(1)
    bit<8> mark;
    bit<8> other;
}

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
        if (sm.instance_type == 32w0) {
            hdr.h.x = 8w0xEE;
            meta.other = 8w0x99;
            resubmit_preserving_field_list(8w1);
            meta.mark = 8w0x42;
        } else {
            hdr.h.inst = (bit<8>)sm.instance_type;
            hdr.h.mark = meta.mark;
            hdr.h.other = meta.other;
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
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
