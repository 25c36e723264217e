/*
 * expr/header_struct_field: a header field may have a struct type whose fields
 * are bit<W> (or such structs); the struct's bits are laid out in order inside
 * the header, on the wire and in field lists. Copying the header copies the
 * struct (the copy does not share it), structs compare field by field, and
 * lookahead<h_t>() reads the nested fields like extract does.
 */
#include <core.p4>
#include <v1model.p4>

struct inner_t { bit<3> a; bit<5> b; }
struct pair_t { bit<4> hi; bit<4> lo; inner_t sub; }
header h_t { bit<8> tag; pair_t p; bit<8> r; }
header out_t { bit<32> v; }
struct headers { h_t h; h_t g; out_t o; }
struct meta_t { bit<5> peek; }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        h_t la = pkt.lookahead<h_t>();
        m.peek = la.p.sub.b;
        pkt.extract(h.h);
        transition accept;
    }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 0;
        h.g = h.h;
        h.g.p.sub.a = 0;
        h.h.p.lo = h.h.p.hi;
        h.h.r = (bit<8>)m.peek;
        pair_t q = h.h.p;
        if (q == h.h.p) {
            h.h.tag = 0x12;
        }
        h.g.r = (h.g.p == h.h.p) ? 8w1 : 8w2;
        h.o.setValid();
        hash(h.o.v, HashAlgorithm.identity, 32w0, { h.g }, 64w0x100000000);
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
