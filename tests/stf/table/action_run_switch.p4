/*
 * table/action_run_switch: switch (t.apply().action_run) with a case per
 * action and a default case (taken for the default action NoAction).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> r;
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
    action fwd_a() {
        sm.egress_spec = 1;
    }
    action fwd_b(bit<8> v) {
        sm.egress_spec = 2;
        hdr.h.b = v;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { fwd_a; fwd_b; NoAction; }
        default_action = NoAction();
    }
    apply {
        switch (t.apply().action_run) {
            fwd_a: {
                hdr.h.r = 8w0xA0;
            }
            fwd_b: {
                hdr.h.r = 8w0xB0;
            }
            default: {
                sm.egress_spec = 3;
                hdr.h.r = 8w0xDD;
            }
        }
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
