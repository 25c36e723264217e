/*
 * control/generic_blocks: a generic sub-parser and generic sub-controls,
 * instantiated with explicit type arguments (also inside another generic
 * control, with a constructor argument of the type parameter's type, and
 * applied directly through the specialized type). A generic block may only
 * copy values of its type parameters: arithmetic on them is a type error
 * (golden/errors/generic_block_arguments.p4).
 */

#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; bit<8> x2; }
header b_t { bit<16> y; bit<16> y2; }
struct headers_t { a_t a; b_t b; }
struct meta_t { bit<16> y; }

parser Keep<T>(packet_in pkt, in T v, out T kept) {
    state start {
        kept = v;
        transition accept;
    }
}

control Put<T>(inout T v)(T value) {
    apply { v = value; }
}

control Swap<T>(inout T a, inout T b) {
    apply {
        T t = a;
        a = b;
        b = t;
    }
}

control PutTwice<T>(inout T v, inout T w)(T value) {
    Put<T>(value) put;
    apply {
        put.apply(v);
        put.apply(w);
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    Keep<bit<16>>() keep_y;
    state start {
        pkt.extract(hdr.a);
        pkt.extract(hdr.b);
        keep_y.apply(pkt, hdr.b.y, meta.y);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Put<bit<8>>(8w16) put16;
    PutTwice<bit<16>>(16w0x0101) put2;
    apply {
        sm.egress_spec = 1;
        Swap<bit<8>>.apply(hdr.a.x, hdr.a.x2);
        put16.apply(hdr.a.x2);
        if (meta.y == 16w0xFFFF) {
            put2.apply(hdr.b.y, hdr.b.y2);
        }
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
