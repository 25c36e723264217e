/*
 * control/copy_in_out: inout arguments are copied in at the call and
 * copied out when the call returns. Inside the action, reading the original
 * location (hdr.h.c) still sees the old value although the parameter has
 * already been written; the new value appears only after the call. An out
 * parameter starts uninitialized, so the action writes it before reading
 * it; passing the same field as out and in argument is well defined because
 * the in value is copied before the body runs.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
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
    action snapshot(inout bit<8> x) {
        x = 8w0x77;
        hdr.h.d = hdr.h.c;
    }
    action produce(out bit<8> o, in bit<8> i) {
        o = i + 8w1;
        hdr.h.b = o;
    }
    apply {
        sm.egress_spec = 1;
        snapshot(hdr.h.c);
        produce(hdr.h.a, hdr.h.a);
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
