/*
 * expr/logical: && || ! on bool values; && and || short-circuit, so a
 * function call with a side effect on the right is only evaluated when
 * needed (cnt1 is bumped only when p holds, cnt2 only when p fails).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> r;
    bit<8> cnt1;
    bit<8> cnt2;
}
    struct headers_t { h_t h; }
    struct meta_t { }

    bool bump(inout bit<8> c) {
        c = c + 1;
        return true;
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
    apply {
        sm.egress_spec = 1;
        bool p = hdr.h.a == 8w1;
        bool q = hdr.h.b == 8w1;
        hdr.h.r = 8w0;
        if (p && q) {
            hdr.h.r = hdr.h.r | 8w1;
        }
        if (p || q) {
            hdr.h.r = hdr.h.r | 8w2;
        }
        if (!p) {
            hdr.h.r = hdr.h.r | 8w4;
        }
        if ((!(p && q)) == ((!p) || (!q))) {
            hdr.h.r = hdr.h.r | 8w8;
        }
        if (p && bump(hdr.h.cnt1)) {
            hdr.h.r = hdr.h.r | 8w0x10;
        }
        if (p || bump(hdr.h.cnt2)) {
            hdr.h.r = hdr.h.r | 8w0x20;
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
