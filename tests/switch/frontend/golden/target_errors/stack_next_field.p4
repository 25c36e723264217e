// BMv2 takes a stack's next element only as a whole, to extract it: reading (or
// writing) one of its fields is refused
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> more; }
struct headers { h_t[4] s; }
struct metadata { bit<8> x; }
parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.s.next);
        transition select(h.s.last.more) { 0: accept; default: more; }
    }
    state more {
        b.extract(h.s.next);
        m.x = h.s.next.a;
        transition select(h.s.next.more) { 0: accept; default: more; }
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.s); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
