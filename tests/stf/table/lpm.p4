/*
 * table/lpm: longest-prefix match on a 32-bit address; the longest
 * matching prefix wins regardless of insertion order. Miss keeps the port
 * chosen before the apply.
 */

#include <core.p4>
#include <v1model.p4>

header ip_t {
    bit<32> dst;
    bit<8>  tag;
}
struct headers_t { ip_t ip; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ip);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action set_out(bit<9> port, bit<8> tag) {
        sm.egress_spec = port;
        hdr.ip.tag = tag;
    }
    table route {
        key = { hdr.ip.dst : lpm; }
        actions = { set_out; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 7;
        route.apply();
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
        pkt.emit(hdr.ip);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
