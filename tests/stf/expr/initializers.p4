/*
 * expr/initializers: list expressions { ... } and structure-valued
 * expressions { f = e, ... } assigned to headers (which makes the header
 * valid), to struct members and to local struct variables.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> k;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
}
header n_t {
    bit<8>  a;
    bit<16> b;
}
struct pair_t {
    bit<8> u;
    bit<8> v;
}
struct headers_t { h_t h; n_t n; }
struct meta_t {
    pair_t p;
    pair_t q;
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
        hdr.n = { 8w1, 16w0x0203 };
        meta.p = { 8w7, 8w9 };
        meta.q = { u = 8w0x21, v = 8w0x43 };
        pair_t loc = { hdr.h.k, hdr.h.k + 8w1 };
        hdr.h.r1 = meta.p.u + meta.p.v;
        hdr.h.r2 = meta.q.v;
        hdr.h.r3 = loc.v;
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
        pkt.emit(hdr.n);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
