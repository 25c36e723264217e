/*
 * control/dont_care_args: `_` as an out argument. `pkt.extract<h_t>(_)` extracts
 * into a header nobody sees, which skips it (and fails as any extract would on a
 * packet too short); a sub-parser, action, function or control given `_` still
 * runs (its other out values and side effects stay); an extern's out value is
 * dropped (register read, hash, random).
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
header w_t {
    bit<16> x;
}
struct headers_t {
    h_t h;
    w_t w;
}
struct meta_t {
    bit<8> first;
}

parser Inner(packet_in pkt, out h_t skipped, inout meta_t meta) {
    state start {
        pkt.extract(skipped);
        meta.first = skipped.a;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    Inner() inner;
    state start {
        pkt.extract<h_t>(_);
        pkt.extract(hdr.h);
        inner.apply(pkt, _, meta);
        pkt.extract(hdr.w);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

bit<8> two_outs(out bit<8> x, out bit<8> y) {
    x = 1;
    y = 2;
    return 3;
}

control Bump(out bit<8> x, inout bit<8> y) {
    apply {
        x = 7;
        y = y + 1;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    register<bit<8>>(4) reg;
    Bump() bump;

    action set_out(out bit<8> o, bit<8> v) {
        o = v;
        hdr.h.b = v;
    }

    apply {
        if (sm.parser_error != error.NoError) {
            sm.egress_spec = 2;
            exit;
        }
        sm.egress_spec = 1;
        reg.write(1, 0x5A);
        reg.read(_, 1);
        hash<bit<16>, bit<16>, tuple<bit<8>>, bit<16>>(
            _, HashAlgorithm.crc16, 16w0, { hdr.h.a }, 16w0xFFFF);
        random(_, 8w1, 8w2);
        set_out(_, 0x33);
        hdr.w.x = (bit<16>)two_outs(_, hdr.h.a);
        bump.apply(_, hdr.h.a);
        hdr.w.x = hdr.w.x + (bit<16>)meta.first;
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
