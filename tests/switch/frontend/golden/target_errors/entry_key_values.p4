// BMv2's JSON holds an entry's key values as numbers: an error value is none, and a
// bool is no prefix or range
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> w; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; bool t; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    table by_error {
        key = { sm.parser_error : exact; }
        actions = { NoAction; }
        const entries = { error.PacketTooShort : NoAction(); }
    }
    table by_flag {
        key = { m.t : lpm; }
        actions = { NoAction; }
        const entries = { true : NoAction(); }
    }
    apply { by_error.apply(); by_flag.apply(); }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
