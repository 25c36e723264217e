/*
 * table/const_entries_priority: ternary entries in the program.
 * Table tp gives explicit priorities (priority=N:), which only entries that
 * are not const may have (golden/errors/const_entries_priority.p4); with the
 * default largest_priority_wins the largest matching priority wins,
 * independent of the textual order. Table ti (const entries) gives none: the
 * first matching entry in program order wins.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> ta;
    bit<8> tb;
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
    action set_ta(bit<8> v) {
        hdr.h.ta = v;
    }
    action set_tb(bit<8> v) {
        hdr.h.tb = v;
    }
    table tp {
        key = { hdr.h.a : ternary; }
        actions = { set_ta; NoAction; }
        entries = {
            priority=10: 8w0x10 &&& 8w0xF0 : set_ta(1);
            priority=30: 8w0x11 &&& 8w0xFF : set_ta(3);
            priority=20: 8w0x00 &&& 8w0x01 : set_ta(2);
        }
        default_action = NoAction();
    }
    table ti {
        key = { hdr.h.b : ternary; }
        actions = { set_tb; NoAction; }
        const entries = {
            8w0x00 &&& 8w0x0F : set_tb(1);
            8w0x10 &&& 8w0xF0 : set_tb(2);
            _ : set_tb(3);
        }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        tp.apply();
        ti.apply();
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
