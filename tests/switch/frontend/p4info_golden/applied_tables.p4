/* Which tables p4c's P4Info lists, and in which order, where they are applied in
 * unusual places: under a condition that compares a field with a constant, in the key
 * of another table, in a local variable's initializer, in a sub-control applied through
 * its type (whose tables follow the control's own); and a controller header with a
 * struct field (listed as its fields, s.a and s.b). V1Switch's arguments are named, in
 * another order. */
#include <core.p4>
#include <v1model.p4>

struct port_t {
    bit<9> port;
    bit<7> reason;
}

@controller_header("packet_in")
header packet_in_t {
    port_t s;
    bit<8> tag;
}

header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers { packet_in_t cpu; h_t h; }
struct metadata { bool flag; bit<8> x; }

parser P(packet_in b, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}

control VC(inout headers h, inout metadata m) { apply { } }

control Sub(inout headers h) {
    action set_b(bit<8> b) { h.h.b = b; }
    table inner { key = { h.h.b : exact; } actions = { set_b; NoAction; } }
    apply { inner.apply(); }
}

control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action set_a(bit<8> a) { h.h.a = a; }
    table guarded { key = { h.h.a : exact; } actions = { set_a; NoAction; } }
    table in_key { key = { h.h.c : exact; } actions = { NoAction; } }
    table outer {
        key = { in_key.apply().hit : exact @name("in_key_hit"); }
        actions = { set_a; NoAction; }
    }
    table in_init { key = { h.h.b : ternary; } actions = { set_a; NoAction; } }
    apply {
        if (m.flag == false) {
            guarded.apply();
        }
        outer.apply();
        bool hit = in_init.apply().hit;
        if (hit) {
            Sub.apply(h);
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out b, in headers h) { apply { b.emit(h.cpu); b.emit(h.h); } }

V1Switch(ig = I(), p = P(), vr = VC(), eg = E(), ck = CC(), dep = D()) main;
