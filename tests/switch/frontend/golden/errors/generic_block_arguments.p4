#include <core.p4>
#include <v1model.p4>

struct headers { }
struct metadata { bit<8> x; }

control Bump<T>(inout T v) { apply { v = v + 1; } }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    Bump() bare;
    Bump<bit<8>, bool>() two;
    apply { bare.apply(m.x); }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
