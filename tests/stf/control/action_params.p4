/*
 * control/action_params: actions with directional (inout) parameters and
 * directionless parameters. Directionless parameters get their value either
 * from a direct call in the control body or from the control plane (table
 * entry action data).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
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
    action set_port(bit<9> port) {
        sm.egress_spec = port;
    }
    action add_to(inout bit<8> x, bit<8> v) {
        x = x + v;
    }
    action set_cd(bit<8> c, bit<8> d) {
        hdr.h.c = c;
        hdr.h.d = d;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set_cd; NoAction; }
        default_action = NoAction();
    }
    apply {
        set_port(9w2);
        add_to(hdr.h.b, 8w3);
        t.apply();
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
