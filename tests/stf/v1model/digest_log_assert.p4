/*
 * v1model/digest_log_assert: digest, log_msg (with and without data),
 * assert and assume with true conditions. None of them changes the packet,
 * which is forwarded normally.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
struct learn_t {
    bit<8> a;
    bit<9> port;
}
struct headers_t { h_t h; }
struct meta_t { learn_t learn; }

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
        meta.learn.a = hdr.h.a;
        meta.learn.port = sm.ingress_port;
        digest<learn_t>(32w1, meta.learn);
        log_msg("digest_log_assert: packet seen");
        log_msg("a = {}, port = {}", { hdr.h.a, sm.ingress_port });
        assert(hdr.h.isValid());
        assume(hdr.h.b == hdr.h.b);
        sm.egress_spec = 2;
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
