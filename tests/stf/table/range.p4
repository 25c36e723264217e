/*
 * table/range: v1model range match kind with control-plane entries
 * (inclusive bounds); overlapping entries are resolved by priority (largest
 * wins).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> v;
    bit<8>  r;
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

    table rt {
        key = { hdr.h.v : range; }
        actions = { set_out; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 9;
        rt.apply();
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
