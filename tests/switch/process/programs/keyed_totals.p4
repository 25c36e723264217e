/* A running total per key, in a register and a counter indexed by the key, and a table
 * that forwards by destination MAC: the state of a packet belongs to its key, so the
 * switch may run it as several pipelines (@pipeline_key). */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header keyed_t {
    @pipeline_key bit<16> key;
    bit<32> value;
    bit<32> total;
}
struct headers_t { eth_t eth; keyed_t k; }
struct meta_t { bit<8> unused; }

parser KeyedParser(packet_in pk, out headers_t h, inout meta_t m,
                   inout standard_metadata_t sm) {
    state start {
        pk.extract(h.eth);
        transition select(h.eth.type) { 0x88b5: keyed; default: accept; }
    }
    state keyed { pk.extract(h.k); transition accept; }
}

control KeyedVerify(inout headers_t h, inout meta_t m) { apply { } }

control KeyedIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(64) totals;
    counter(64, CounterType.packets) seen;
    action to(bit<9> port) { sm.egress_spec = port; }
    table next_hop {
        key = { h.eth.dst: exact; }
        actions = { to; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (h.k.isValid()) {
            bit<32> total;
            totals.read(total, (bit<32>)h.k.key);
            total = total + h.k.value;
            totals.write((bit<32>)h.k.key, total);
            h.k.total = total;
            seen.count((bit<32>)h.k.key);
        }
        if (!next_hop.apply().hit) {
            mark_to_drop(sm);
        }
    }
}

control KeyedEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { }
}

control KeyedCompute(inout headers_t h, inout meta_t m) { apply { } }

control KeyedDeparser(packet_out pk, in headers_t h) {
    apply { pk.emit(h.eth); pk.emit(h.k); }
}

V1Switch(KeyedParser(), KeyedVerify(), KeyedIngress(), KeyedEgress(), KeyedCompute(),
         KeyedDeparser()) main;
