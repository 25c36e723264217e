// a bare "..." takes its type from the context: an operand has none
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<16> b; }
struct pair_t { bit<8> u; bool v; }
struct headers { h_t h; }
struct metadata { bit<8> x; pair_t p; }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        m.x = ... + 8w1;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
