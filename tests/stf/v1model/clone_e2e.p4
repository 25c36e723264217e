/*
 * v1model/clone_e2e: clone(CloneType.E2E, session) in egress. The clone
 * carries the packet with the modifications made so far, runs egress again
 * with instance_type == 2 (PKT_INSTANCE_TYPE_EGRESS_CLONE) and leaves on
 * the session's port. Only normal packets clone (no clone loop).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  cnt;
    bit<8>  inst;
    bit<16> port;
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
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.h.cnt = hdr.h.cnt + 1;
        hdr.h.inst = (bit<8>)sm.instance_type;
        hdr.h.port = (bit<16>)sm.egress_port;
        if (sm.instance_type == 32w0) {
            clone(CloneType.E2E, 32w6);
        }
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
