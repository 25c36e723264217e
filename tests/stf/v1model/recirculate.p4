/*
 * v1model/recirculate: recirculate_preserving_field_list(1) in egress sends
 * the deparsed packet (with its modifications) back to ingress with
 * instance_type == 4 (PKT_INSTANCE_TYPE_RECIRC, visible in ingress); the
 * @field_list(1) metadata field counts the recirculations. A counter in the
 * packet stops the loop after three egress passes.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> cnt;
    bit<8> inst;
    bit<8> rc;
}
struct headers_t { h_t h; }
struct meta_t {
    @field_list(1)
    bit<8> rc;
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
        hdr.h.inst = (bit<8>)sm.instance_type;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.h.cnt = hdr.h.cnt + 1;
        if (hdr.h.cnt < 8w3) {
            meta.rc = meta.rc + 1;
            recirculate_preserving_field_list(8w1);
        }
        hdr.h.rc = meta.rc;
    }
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
