// parsers and controls are instantiated in a package's arguments, not at top level
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers { h_t h; }
struct metadata { bit<8> x; bit<16> y; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
I() ingress_instance;
V1Switch(P(), VC(), ingress_instance, E(), CC(), D()) main;
