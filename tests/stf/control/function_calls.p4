/*
 * control/function_calls: top-level functions with a return value
 * (return in both branches) and void functions with inout parameters.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> m;
    bit<8> n;
}
struct headers_t { h_t h; }
struct meta_t { }

bit<8> max8(in bit<8> x, in bit<8> y) {
    if (x > y) {
        return x;
    }
    return y;
}

void incr_both(inout bit<8> x, inout bit<8> y) {
    x = x + 1;
    y = y + 1;
}

bit<8> twice_plus(in bit<8> x, in bit<8> k) {
    bit<8> t = x + x;
    return t + k;
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
        hdr.h.m = max8(hdr.h.a, hdr.h.b);
        incr_both(hdr.h.a, hdr.h.b);
        hdr.h.n = twice_plus(hdr.h.m, 8w3);
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
