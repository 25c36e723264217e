/*
 * parser/select_range: select with lo .. hi range keysets (inclusive).
 * Overlapping ranges: the first case in program order wins.
 */

#include <core.p4>
#include <v1model.p4>

header s_t {
    bit<8> k1;
    bit<8> k2;
    bit<8> path;
}
struct headers_t { s_t s; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s);
        transition select(hdr.s.k1) {
            8w0 .. 8w9: p1;
            8w10 .. 8w19: p2;
            8w15 .. 8w30: p3;
            default: p4;
        }
    }

    state p1 {
        hdr.s.path = 1;
        transition accept;
    }
    state p2 {
        hdr.s.path = 2;
        transition accept;
    }
    state p3 {
        hdr.s.path = 3;
        transition accept;
    }
    state p4 {
        hdr.s.path = 4;
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
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.s);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
