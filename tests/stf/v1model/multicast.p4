/*
 * v1model/multicast: mcast_grp selects a multicast group configured by the
 * control plane; one copy per (port, rid) node member. Egress sees
 * egress_port, egress_rid and instance_type == 5 (PKT_INSTANCE_TYPE_REPLICATION)
 * for each copy. A group without members produces no packet.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  mode;
    bit<16> rid;
    bit<16> port;
    bit<8>  inst;
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
        if (hdr.h.mode == 8w1) {
            sm.mcast_grp = 16w1;
        } else if (hdr.h.mode == 8w2) {
            sm.mcast_grp = 16w2;
        } else {
            sm.egress_spec = 6;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.h.rid = sm.egress_rid;
        hdr.h.port = (bit<16>)sm.egress_port;
        hdr.h.inst = (bit<8>)sm.instance_type;
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
