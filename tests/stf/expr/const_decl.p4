/*
 * expr/const_decl: top-level constants (including a constant computed
 * from another one and a bool constant) used as a select label, as a table
 * const-entry key and action argument, and a local constant.
 */

#include <core.p4>
#include <v1model.p4>

const bit<8>  K = 8w10;
const bit<16> K2 = (bit<16>)K * 16w3;
const bool    FLAG = true;

header h_t {
    bit<8>  a;
    bit<8>  path;
    bit<8>  r;
    bit<16> w;
}
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            K: pk;
            default: accept;
        }
    }
    state pk {
        hdr.h.path = 8w1;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action set_r(bit<8> v) {
        hdr.h.r = v;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set_r; NoAction; }
        const entries = {
            K : set_r(K + 8w2);
        }
        default_action = NoAction();
    }
    apply {
        const bit<8> L = K + 8w1;
        if (FLAG) {
            sm.egress_spec = 1;
        } else {
            sm.egress_spec = 2;
        }
        t.apply();
        hdr.h.path = hdr.h.path + L;
        hdr.h.w = K2;
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
