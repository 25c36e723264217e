/*
 * extern/register_typedef: a register declared through a typedef of its specialized
 * type (typedef register<bit<32>> Counts_t; Counts_t(16) counts;) is a register like
 * any other: the data plane counts packets per index in it, the control plane reads
 * and writes it. p4c-bm2-ss crashes on this program (Compiler Bug: expected
 * Type_Specialized), so its test runs on the built-in switch only.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  idx;
    bit<32> count;
}
struct headers_t { h_t h; }
struct meta_t { }

typedef register<bit<32>> Counts_t;

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
    Counts_t(16) counts;
    apply {
        sm.egress_spec = 1;
        bit<32> n;
        counts.read(n, (bit<32>)hdr.h.idx);
        n = n + 1;
        counts.write((bit<32>)hdr.h.idx, n);
        hdr.h.count = n;
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
