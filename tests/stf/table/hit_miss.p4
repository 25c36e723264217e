/*
 * table/hit_miss: t.apply().hit and t.apply().miss used in if
 * conditions; a hit is reported even when the entry's action is NoAction.
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
    table t1 {
        key = { hdr.h.a : exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    table t2 {
        key = { hdr.h.b : exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        hdr.h.r = 0;
        if (t1.apply().hit) {
            hdr.h.r = hdr.h.r | 8w0x01;
        }
        if (t2.apply().miss) {
            hdr.h.r = hdr.h.r | 8w0x10;
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
