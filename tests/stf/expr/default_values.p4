/*
 * expr/default_values: initializers that end in "..." give the fields and
 * elements they do not name their default values (0, false, the first enum
 * member, error.NoError, an invalid header); a bare "..." is the default
 * value of the whole type; {#} is an invalid header.
 */

#include <core.p4>
#include <v1model.p4>

enum color_t { RED, GREEN, BLUE }

header h_t {
    bit<8> k;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
    bit<8> r7;
}
header n_t {
    bit<8>  a;
    bit<16> b;
}
struct inner_t {
    bit<8>  x;
    bool    f;
    color_t c;
    error   e;
    n_t     n;
}
struct headers_t { h_t h; n_t n; n_t m; n_t z; }
struct meta_t { inner_t s; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.k) {
            0xFF: with_m;
            default: accept;
        }
    }
    state with_m {
        pkt.extract(hdr.m);
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
        // a struct: the named field, the rest default
        inner_t s = { x = hdr.h.k, f = true, c = color_t.BLUE, ... };
        s = { x = s.x + 8w1, ... };
        hdr.h.r1 = s.x;
        hdr.h.r2 = s.f ? 8w1 : 8w2;
        hdr.h.r3 = s.c == color_t.RED ? 8w1 : 8w2;
        hdr.h.r4 = s.e == error.NoError ? 8w1 : 8w2;
        hdr.h.r5 = s.n.isValid() ? 8w1 : 8w2;
        // a header: valid, the fields not named are 0
        hdr.n = { b = 16w0x0203, ... };
        // a tuple, positionally
        tuple<bit<8>, bool, bit<16>> t = { 8w9, ... };
        hdr.h.r6 = t[0] + (t[1] ? 8w100 : 8w0) + (bit<8>)t[2];
        // a bare default: all zero / invalid
        meta.s = ...;
        hdr.h.r7 = meta.s.x + (meta.s.n.isValid() ? 8w100 : 8w0);
        // {#} and "..." make a header invalid
        if (hdr.h.k == 0xFF) {
            hdr.m = {#};
        } else {
            hdr.z = { 8w0x33, ... };
            if (hdr.h.k == 0) {
                hdr.z = ...;
            }
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
        pkt.emit(hdr.n);
        pkt.emit(hdr.m);
        pkt.emit(hdr.z);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
