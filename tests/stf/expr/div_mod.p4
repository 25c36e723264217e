/*
 * expr/div_mod: / and % on compile-time constants (typed and
 * infinite-precision int) and on run-time bit<8> values by powers of two
 * (BMv2 divides by nothing else: golden/target_errors/divide_at_run_time.p4).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> q;
    bit<8> m;
    bit<8> cq;
    bit<8> cm;
    bit<8> iq;
    bit<8> im;
}
    struct headers_t { h_t h; }
    struct meta_t { }

    const bit<8> CQ = 8w100 / 8w7;
    const bit<8> CM = 8w100 % 8w7;
    const int IQ = 17 / 5;
    const int IM = 17 % 5;

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
        hdr.h.q = hdr.h.a / 8;
        hdr.h.m = hdr.h.a % 8w16;
        hdr.h.cq = CQ;
        hdr.h.cm = CM;
        hdr.h.iq = IQ;
        hdr.h.im = IM;
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
