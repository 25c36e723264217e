/* Nested control instances with constructor parameters, @name annotations on
 * instances, tables, actions and registers, and a named top-level instance. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<32> a; bit<32> b; }
struct headers { h_t h; }
struct metadata { bit<32> tmp; }

register<bit<32>>(8) global_reg;

parser P(packet_in packet, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start { packet.extract(hdr.h); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Counter(inout bit<32> value)(bit<32> slots, bool enabled) {
    register<bit<32>>(slots) cells;
    @name("cell_counter") counter(slots, CounterType.packets) hits;
    action bump(bit<32> idx) {
        hits.count(idx);
        cells.read(value, idx);
        value = value + 1;
        cells.write(idx, value);
    }
    table lookup {
        key = { value: exact; }
        actions = { bump; NoAction; }
    }
    apply {
        if (enabled) {
            lookup.apply();
        }
    }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Counter(16, true) first;
    @name("second_counter") Counter(32, false) second;
    @name(".top_level_table") table t {
        key = { hdr.h.a: exact; }
        actions = { NoAction; }
    }
    apply {
        first.apply(hdr.h.a);
        second.apply(hdr.h.b);
        t.apply();
        global_reg.read(meta.tmp, 0);
        global_reg.write(1, meta.tmp);
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Counter(4, true) egress_counter;
    apply { egress_counter.apply(meta.tmp); }
}

control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out packet, in headers hdr) { apply { packet.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
