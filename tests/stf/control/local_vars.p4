/*
 * control/local_vars: control-level variables with initializers, local
 * variables in apply blocks and nested blocks, and locals inside actions.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> w;
    bit<8>  c;
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
    bit<8> ctl_var = 8w3;
    action bump() {
        bit<8> local = ctl_var + 8w1;
        ctl_var = local;
    }
    apply {
        sm.egress_spec = 1;
        bit<8> tmp = hdr.h.a;
        bit<16> wide;
        wide = (bit<16>)tmp << 4;
        {
            bit<8> inner = tmp + 8w1;
            hdr.h.b = inner;
        }
        hdr.h.w = wide;
        bump();
        bump();
        hdr.h.c = ctl_var;
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
