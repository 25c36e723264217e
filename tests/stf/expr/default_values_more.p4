/*
 * expr/default_values_more: default values through "..." of a serializable
 * enum (0, named or not), a compile-time constant, a header stack (all
 * invalid), a header union, a function argument and a return value; and a
 * loop in an action next to them. (A new type has no default value, as in
 * p4c: golden/errors/default_of_new_type.p4. The stack's first element is
 * given by another header, not by a list: p4c-bm2-ss writes a list
 * initializer of a stack element as JSON BMv2 cannot load.)
 */

#include <core.p4>
#include <v1model.p4>

enum bit<8> op_t { ADD = 3, SUB = 4 }
enum bit<8> zop_t { NOP = 0, RUN = 1 }
type bit<8> tag_t;

header h_t {
    bit<8> k;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
    bit<8> r6;
}
header e_t { bit<8> v; }
header f_t { bit<16> w; }
header_union ef_t { e_t e; f_t f; }
struct opts_t {
    bit<8> lo;
    bit<8> hi;
    op_t   op;
}
struct headers_t { h_t h; e_t[2] st; ef_t u; }
struct meta_t { tag_t t; }

const opts_t OPTS = { hi = 8w5, ... };

bit<8> low_of(in opts_t o) {
    return o.lo + o.hi;
}

opts_t make() {
    return { lo = 8w2, ... };
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.st[0]);
        pkt.extract(hdr.st[1]);
        pkt.extract(hdr.u.e);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action sum_to_3() {
        bit<8> acc = 0;
        for (bit<8> i = 1; i <= 3; i = i + 1) {
            acc = acc + i;
        }
        hdr.h.r5 = acc;
    }
    apply {
        sm.egress_spec = 1;
        op_t o = ...;
        zop_t z = ...;
        hdr.h.r1 = (bit<8>)o + (z == zop_t.NOP ? 8w10 : 8w20);
        meta.t = (tag_t)8w0;
        hdr.h.r2 = (bit<8>)meta.t + OPTS.hi + OPTS.lo;
        hdr.h.r3 = low_of({ lo = hdr.h.k, ... }) + low_of(...);
        hdr.h.r4 = make().lo;
        sum_to_3();
        if (hdr.h.k == 1) {
            hdr.st = ...;
            hdr.u = ...;
        } else if (hdr.h.k == 2) {
            hdr.st = { hdr.st[1], ... };
            hdr.u.e = {#};
        }
        hdr.h.r6 = (hdr.st[0].isValid() ? 8w1 : 8w0) + (hdr.st[1].isValid() ? 8w2 : 8w0)
                   + (hdr.u.e.isValid() ? 8w4 : 8w0);
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
        pkt.emit(hdr.st);
        pkt.emit(hdr.u);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
