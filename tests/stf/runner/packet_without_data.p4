/*
 * runner/packet_without_data: the STF runner accepts "packet <port>" with no
 * data (a 0-byte packet); here that packet fails extraction (PacketTooShort) and
 * is dropped, and the next packet passes.
 */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) {
            mark_to_drop(sm);
        } else {
            sm.egress_spec = 0;
        }
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
