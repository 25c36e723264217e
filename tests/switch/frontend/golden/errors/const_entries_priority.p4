// const entries take no 'priority =' (the older @priority annotation is fine)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action set(bit<8> v) { h.h.b = v; }
    table t {
        key = { h.h.a : ternary; }
        actions = { set; NoAction; }
        const entries = {
            priority = 10: 8w0x10 &&& 8w0xF0 : set(1);
            priority = 20: 8w0x11 &&& 8w0xFF : set(2);
        }
    }
    apply {
        t.apply();
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
