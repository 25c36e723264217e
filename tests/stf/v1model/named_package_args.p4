/*
 * v1model/named_package_args: V1Switch's arguments given by name, in another order
 * than its parameters (p = ..., ig = ..., vr = ...): each block still takes the
 * place its name says. Ingress sets the port, egress marks the packet, the
 * checksum control computes a checksum over it.
 */

#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> seen; bit<16> sum; }
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
        sm.egress_spec = (bit<9>)hdr.h.a;
        hdr.h.seen = 8w1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.h.seen = hdr.h.seen | 8w2;
    }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(true, { hdr.h.a, hdr.h.seen }, hdr.h.sum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(dep = MyDeparser(),
         eg = MyEgress(),
         p = MyParser(),
         ck = MyComputeChecksum(),
         ig = MyIngress(),
         vr = MyVerifyChecksum()) main;
