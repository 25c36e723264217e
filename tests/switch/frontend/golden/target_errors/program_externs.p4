// extern types and functions the program declares: BMv2 does not know them
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> w; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; bit<32> z; }
extern Counter2 {
    Counter2();
    void bump();
}
extern void poke(in bit<8> v);
extern bit<16> fold(in bit<8> v);
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    Counter2() c2;
    apply {
        c2.bump();
        poke(h.h.a);
        h.h.c = fold(h.h.b);
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
