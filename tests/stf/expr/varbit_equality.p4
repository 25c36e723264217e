/*
 * expr/varbit_equality: == and != on varbit values and on headers holding a
 * varbit (P4_16 spec, varbit operations). Two varbits are equal when they have
 * the same current width and the same bits, so 8w0 and 16w0 differ; headers
 * compare field by field and are equal when both are invalid. Assigning a
 * varbit also gives the target the source's width (a 8-bit a.v becomes 16 bits).
 * r: bit 0 = (a.v == b.v), bit 1 = (a == b), bit 2 = (a.v != b.v)
 */
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> n_a; bit<8> n_b; bit<8> r; }
header vb_t { varbit<16> v; }
struct headers { len_t l; vb_t a; vb_t b; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.l);
        transition select(h.l.n_a) {
            0xFF: accept;
            default: both;
        }
    }
    state both {
        pkt.extract(h.a, (bit<32>)h.l.n_a);
        pkt.extract(h.b, (bit<32>)h.l.n_b);
        transition accept;
    }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 0;
        h.l.r = 0;
        if (h.a.isValid()) {
            if (h.a.v == h.b.v) { h.l.r = h.l.r | 1; }
            if (h.a.v != h.b.v) { h.l.r = h.l.r | 4; }
        }
        if (h.a == h.b) { h.l.r = h.l.r | 2; }
        if (h.l.n_a == 8) { h.a.v = h.b.v; }
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
