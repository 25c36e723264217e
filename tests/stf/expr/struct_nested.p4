/*
 * expr/struct_nested: nested structs in metadata, whole-struct copies
 * (by value), and a local variable of struct type.
 */

#include <core.p4>
#include <v1model.p4>

struct inner_t {
    bit<8> x;
    bit<8> y;
}
struct outer_t {
    inner_t i;
    bit<8>  z;
}
header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
}
struct headers_t { h_t h; }
struct meta_t {
    outer_t o1;
    outer_t o2;
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
        meta.o1.i.x = hdr.h.a;
        meta.o1.i.y = hdr.h.b;
        meta.o1.z = 8w0x77;
        meta.o2 = meta.o1;
        meta.o1.i.x = 8w0;
        inner_t tmp = meta.o2.i;
        tmp.y = tmp.y + 8w1;
        hdr.h.c = meta.o2.i.x;
        hdr.h.d = tmp.y + meta.o1.i.x;
        hdr.h.e = meta.o2.z;
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
