/*
 * expr/compare: == != < <= > >= on bit<8> (unsigned) and int<8> (signed)
 * operands; results stored as bit<1> via ?: and via a bool -> bit<1> cast.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    int<8> x;
    int<8> y;
    bit<1> u_eq;
    bit<1> u_ne;
    bit<1> u_lt;
    bit<1> u_le;
    bit<1> u_gt;
    bit<1> u_ge;
    bit<1> s_eq;
    bit<1> s_ne;
    bit<1> s_lt;
    bit<1> s_le;
    bit<1> s_gt;
    bit<1> s_ge;
    bit<4> pad;
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
        hdr.h.u_eq = (hdr.h.a == hdr.h.b) ? 1w1 : 1w0;
        hdr.h.u_ne = (hdr.h.a != hdr.h.b) ? 1w1 : 1w0;
        hdr.h.u_lt = (hdr.h.a < hdr.h.b) ? 1w1 : 1w0;
        hdr.h.u_le = (hdr.h.a <= hdr.h.b) ? 1w1 : 1w0;
        hdr.h.u_gt = (hdr.h.a > hdr.h.b) ? 1w1 : 1w0;
        hdr.h.u_ge = (hdr.h.a >= hdr.h.b) ? 1w1 : 1w0;
        hdr.h.s_eq = (bit<1>)(hdr.h.x == hdr.h.y);
        hdr.h.s_ne = (bit<1>)(hdr.h.x != hdr.h.y);
        hdr.h.s_lt = (bit<1>)(hdr.h.x < hdr.h.y);
        hdr.h.s_le = (bit<1>)(hdr.h.x <= hdr.h.y);
        hdr.h.s_gt = (bit<1>)(hdr.h.x > hdr.h.y);
        hdr.h.s_ge = (bit<1>)(hdr.h.x >= hdr.h.y);
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
