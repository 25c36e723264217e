// BMv2 keeps a direct meter's color with the one table it is attached to, for the
// actions of that table to read: a table whose actions never read its meter, and a
// meter read but attached to no table, are refused
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
    direct_meter<bit<8>>(MeterType.packets) unread;
    direct_meter<bit<8>>(MeterType.packets) unattached;
    action count() { }
    action color() { unattached.read(m.x); }
    table metered {
        key = { h.h.a : exact; }
        actions = { count; }
        meters = unread;
    }
    table other {
        key = { h.h.b : exact; }
        actions = { color; }
    }
    apply { metered.apply(); other.apply(); }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
