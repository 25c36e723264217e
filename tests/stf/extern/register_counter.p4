/*
 * extern/register_counter: a per-slot packet counter kept in a register
 * (read-modify-write inside an action); the running count is written into
 * the packet and the final state is checked with register_read.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  slot;
    bit<16> count;
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
    register<bit<16>>(32w4) pkt_count;
    action count_packet() {
        bit<16> c;
        pkt_count.read(c, (bit<32>)hdr.h.slot);
        c = c + 1;
        pkt_count.write((bit<32>)hdr.h.slot, c);
        hdr.h.count = c;
    }
    apply {
        sm.egress_spec = 1;
        count_packet();
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
