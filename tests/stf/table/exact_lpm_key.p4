/*
 * table/exact_lpm_key: a table whose key combines an exact field and an
 * lpm field; the longest prefix wins among entries with the same exact
 * value.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  vrf;
    bit<16> dst;
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

    table t {
        key = {
            hdr.h.vrf : exact;
            hdr.h.dst : lpm;
        }
        actions = { set_out; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 9;
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
