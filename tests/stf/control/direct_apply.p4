/*
 * control/direct_apply: parsers and controls applied through their type
 * name (`T.apply(...)`), with no instance declared; each such statement
 * applies a fresh instance of the type, named after the type in the control
 * plane (so a type with a register can be applied this way only once in a
 * block: two would give two registers one P4Info name).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
header g_t { bit<8> x; }
struct headers_t { h_t h; g_t g; }
struct meta_t { }

parser TakeG(packet_in pkt, out g_t g) {
    state start {
        pkt.extract(g);
        transition accept;
    }
}

control Double(inout bit<8> v) {
    apply { v = v + v; }
}

control AddOne(inout bit<8> v) {
    apply {
        v = v + 1;
        Double.apply(v);
    }
}

control Tally(inout bit<8> v) {
    register<bit<8>>(1) seen;
    apply {
        bit<8> n;
        seen.read(n, 0);
        n = n + 1;
        seen.write(0, n);
        v = n;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        TakeG.apply(pkt, hdr.g);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        AddOne.apply(hdr.h.a);
        AddOne.apply(hdr.h.b);
        Double.apply(hdr.g.x);
        Tally.apply(hdr.h.c);
        AddOne.apply(hdr.h.d);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.g);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
