#include <core.p4>
#include <v1model.p4>

struct headers { }
struct metadata { bit<8> x; }

control Step(inout bit<8> v);
control Peek(in bit<8> v) { apply { } }
control User(inout bit<8> v)(Step s) { apply { s.apply(v); } }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    Peek() peek;
    User(peek) user;
    User(3) other;
    apply { user.apply(m.x); other.apply(m.x); }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
