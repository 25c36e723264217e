/*
 * extern/register_rw: register read and write from the data plane, checked
 * against control-plane register_write / register_read / register_reset.
 * Registers start at 0.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  idx;
    bit<32> val;
    bit<32> old;
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
    register<bit<32>>(32w16) regs;
    apply {
        sm.egress_spec = 1;
        bit<32> o;
        regs.read(o, (bit<32>)hdr.h.idx);
        hdr.h.old = o;
        regs.write((bit<32>)hdr.h.idx, hdr.h.val);
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
