/*
 * table/default_action_args: default_action with action arguments is
 * executed on a miss.
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
    action set_out(bit<9> port) {
        sm.egress_spec = port;
    }

    action set_r(bit<8> v) {
        hdr.h.r = v;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set_out; }
        default_action = set_out(5);
    }
    table t2 {
        key = { hdr.h.b : exact; }
        actions = { set_r; }
        default_action = set_r(8w0xDD);
    }
    apply {
        t.apply();
        t2.apply();
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
