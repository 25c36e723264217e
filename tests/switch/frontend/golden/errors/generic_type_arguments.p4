#include <core.p4>
#include <v1model.p4>

header Tagged<T> { T value; bit<8> tag; }
struct Wrap<T> { Tagged<T> inner; }
struct metadata { Wrap<bit<4>> w; }

struct headers { Tagged<bit<3>> odd; Tagged bare; Tagged<bit<8>, bit<8>> two; }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
