/*
 * parser/select_tuple: select on a tuple of two fields, with the
 * don't-care keyset _ inside tuples and a default case.
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
        transition select(hdr.s.k1, hdr.s.k2) {
            (8w1, 8w1): p1;
            (8w1, _): p2;
            (_, 8w2): p3;
            (8w0xA0 &&& 8w0xF0, 8w5 .. 8w7): p4;
            default: p5;
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
    state p5 {
        hdr.s.path = 5;
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
