/*
 * expr/compound_assign: the compound assignments of P4_16 1.2.4 (+= -= *= /= %=
 * &= |= ^= <<= >>= |+|= |-|=) on bit<8> and int<8> fields, a slice, in a parser
 * state, and on a header stack element whose index has a side effect (the l-value
 * is evaluated once); each is the plain assignment `a = a op b`.
 */

#include <core.p4>
#include <v1model.p4>

header ops_t {
    bit<8> add;
    bit<8> sub;
    bit<8> mul;
    bit<8> div;
    bit<8> mod;
    bit<8> band;
    bit<8> bor;
    bit<8> bxor;
    bit<8> shl;
    bit<8> shr;
    int<8> sshr;
    bit<8> sat_add;
    bit<8> sat_sub;
    int<8> ssat_add;
    int<8> ssat_sub;
    bit<8> amount;
    bit<8> slice;
    bit<8> calls;
}
header elem_t { bit<8> v; }

struct headers_t {
    ops_t ops;
    elem_t[2] elems;
}
struct meta_t { bit<8> calls; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ops);
        pkt.extract(hdr.elems.next);
        pkt.extract(hdr.elems.next);
        hdr.ops.calls += 1;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

bit<1> second(inout bit<8> calls) {
    calls += 1;
    return 1;
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.ops.add += 8w200;
        hdr.ops.sub -= 3;
        hdr.ops.mul *= 3;
        hdr.ops.div /= 4;
        hdr.ops.mod %= 8;
        hdr.ops.band &= 0x0F;
        hdr.ops.bor |= 0x80;
        hdr.ops.bxor ^= 0xFF;
        hdr.ops.shl <<= hdr.ops.amount;
        hdr.ops.shr >>= hdr.ops.amount;
        hdr.ops.sshr >>= hdr.ops.amount;
        hdr.ops.sat_add |+|= 100;
        hdr.ops.sat_sub |-|= 100;
        hdr.ops.ssat_add |+|= 100;
        hdr.ops.ssat_sub |-|= 100;
        hdr.ops.slice[3:0] += 1;
        hdr.elems[second(meta.calls)].v += 1;
        hdr.ops.calls += meta.calls;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
