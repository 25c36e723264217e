/*
 * table/optional: v1model optional match kind (exact value or wildcard)
 * with const entries; with no explicit priorities the entry listed first
 * has the highest priority.
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

    table ot {
        key = {
            hdr.h.a : optional;
            hdr.h.b : optional;
        }
        actions = { set_out; NoAction; }
        const entries = {
            (8w1, 8w2) : set_out(1);
            (8w1, _)   : set_out(2);
            (_, 8w2)   : set_out(3);
            (_, _)     : set_out(4);
        }
    }
    apply {
        ot.apply();
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
