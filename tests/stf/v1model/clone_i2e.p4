/*
 * v1model/clone_i2e: clone(CloneType.I2E, session) in ingress. The clone
 * goes to the port of the mirroring session and carries the packet as it
 * was received (ingress modifications are not applied); egress sees
 * instance_type == 1 (PKT_INSTANCE_TYPE_INGRESS_CLONE) for the clone and 0
 * for the original.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  x;
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
        hdr.h.x = 8w0xAA;
        clone(CloneType.I2E, 32w5);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.h.inst = (bit<8>)sm.instance_type;
        hdr.h.port = (bit<16>)sm.egress_port;
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
