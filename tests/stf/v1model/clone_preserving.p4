/*
 * v1model/clone_preserving: clone_preserving_field_list(I2E, session, 1)
 * copies only the metadata fields annotated @field_list(1) into the clone
 * (other user metadata start at 0); the original keeps all metadata.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> keep;
    bit<8> lose;
    bit<8> inst;
}
struct headers_t { h_t h; }
struct meta_t {
    @field_list(1)
    bit<8> keep;
    bit<8> lose;
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
        meta.keep = 8w0x5A;
        meta.lose = 8w0x77;
        clone_preserving_field_list(CloneType.I2E, 32w5, 8w1);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.h.keep = meta.keep;
        hdr.h.lose = meta.lose;
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
