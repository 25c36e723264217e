#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> kind; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.h);
        transition select(h.h.kind) {
            1: parse_one;
            default: accept;
        }
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
