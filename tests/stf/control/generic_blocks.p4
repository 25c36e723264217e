/*
 * control/generic_blocks: a generic sub-parser and generic sub-controls,
 * instantiated with explicit type arguments (also inside another generic
 * control, and applied directly through the specialized type).
 */

#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; }
header b_t { bit<16> y; }
struct headers_t { a_t a; b_t b; }
struct meta_t { }

parser Take<H>(packet_in pkt, out H h) {
    state start {
        pkt.extract(h);
        transition accept;
    }
}

control Bump<T>(inout T v)(T step) {
    apply { v = v + step; }
}

control BumpTwice<T>(inout T v) {
    Bump<T>(1) once;
    apply {
        once.apply(v);
        once.apply(v);
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    Take<a_t>() take_a;
    Take<b_t>() take_b;
    state start {
        take_a.apply(pkt, hdr.a);
        take_b.apply(pkt, hdr.b);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Bump<bit<8>>(8w16) add16;
    BumpTwice<bit<16>>() add2;
    apply {
        sm.egress_spec = 1;
        add16.apply(hdr.a.x);
        add2.apply(hdr.b.y);
        BumpTwice<bit<8>>.apply(hdr.a.x);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
