/*
 * table/nested_control_table: a table and action declared in a sub-control
 * instantiated as `fwd` inside MyIngress; its control-plane names are
 * MyIngress.fwd.port_tbl and MyIngress.fwd.set_port.
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

control Forward(inout headers_t hdr, inout standard_metadata_t sm) {
    action set_port(bit<9> port) {
        sm.egress_spec = port;
        hdr.h.r = 8w0x0F;
    }
    table port_tbl {
        key = { hdr.h.a : exact; }
        actions = { set_port; NoAction; }
        default_action = NoAction();
    }
    apply {
        port_tbl.apply();
    }
}

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
    Forward() fwd;
    apply {
        sm.egress_spec = 9;
        fwd.apply(hdr, sm);
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
