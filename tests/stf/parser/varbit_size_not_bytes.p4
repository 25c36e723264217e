/*
 * parser/varbit_size_not_bytes: extract(hdr, n) of a varbit header with n not a
 * multiple of 8 fails with error.ParserInvalidArgument, as in BMv2; the packet
 * still reaches ingress with parser_error set and the bytes after l unconsumed.
 */
#include <core.p4>
#include <v1model.p4>

header l_t { bit<8> n; bit<8> err; }
header v_t { varbit<16> v; }
struct headers { l_t l; v_t v; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.l);
        pkt.extract(h.v, (bit<32>)h.l.n);
        transition accept;
    }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 0;
        if (sm.parser_error == error.NoError) {
            h.l.err = 0;
        } else if (sm.parser_error == error.ParserInvalidArgument) {
            h.l.err = 6;
        } else {
            h.l.err = 7;
        }
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.l); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
