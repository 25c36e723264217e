// The core library's rules that core.p4's signatures cannot say: extract takes a
// header, with a size exactly when it has a varbit field; lookahead a fixed-width
// type; emit headers, stacks, unions and structs or tuples of them; verify is for
// parsers only.
#include <core.p4>
#include <v1model.p4>

header fixed_t { bit<8> a; }
header options_t { varbit<16> v; }
struct headers { fixed_t f; options_t o; }
struct meta_t { bit<8> x; }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(m.x);
        pkt.extract(h.o);
        pkt.extract(h.f, 8);
        options_t peek = pkt.lookahead<options_t>();
        transition accept;
    }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        verify(h.f.a == 0, error.NoMatch);
        sm.egress_spec = 0;
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) {
    apply {
        pkt.emit(h.f.a);
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
