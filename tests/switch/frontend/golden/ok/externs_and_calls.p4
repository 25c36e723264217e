/* Extern functions and methods with overloads, inferred type arguments, named and
 * don't-care arguments, functions, digests, clones and logging (the v1model externs
 * p4c-bm2-ss rejects are in golden/target_errors/legacy_v1model_externs.p4). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<32> a; bit<16> b; bit<8> c; }
struct headers { h_t h; }

struct learn_t {
    bit<32> a;
    bit<9>  port;
}

struct metadata {
    bit<16> hash16;
    bit<32> rand;
    bit<8>  small;
    @field_list(1) bit<32> kept;
}

bit<8> max8(in bit<8> x, in bit<8> y) {
    if (x > y) {
        return x;
    }
    return y;
}

void swap16(inout bit<16> x, inout bit<16> y) {
    bit<16> t = x;
    x = y;
    y = t;
}

parser P(packet_in packet, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        packet.extract<h_t>(hdr.h);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action learn() {
        digest<learn_t>(1, { hdr.h.a, sm.ingress_port });
    }
    action learn_again() {
        learn_t data = { a = hdr.h.a, port = sm.ingress_port };
        digest(2, data);
    }
    apply {
        hash(meta.hash16, HashAlgorithm.crc16, 16w0, { hdr.h.a, hdr.h.b }, 32w1024);
        hash(result = meta.rand, algo = HashAlgorithm.identity, base = 32w0,
             data = { hdr.h.a }, max = 32w0);
        random(meta.rand, 0, 100);
        random<bit<8>>(meta.small, 1, 2);
        meta.small = max8(hdr.h.c, meta.small);
        swap16(meta.hash16, hdr.h.b);
        hash(hdr.h.b, HashAlgorithm.csum16, 16w0, { hdr.h.a }, 32w65536);
        log_msg("plain message");
        log_msg("a={} c={}", { hdr.h.a, hdr.h.c });
        if (hdr.h.c == 1) {
            mark_to_drop(sm);
        }
        clone(CloneType.I2E, 5);
        clone_preserving_field_list(CloneType.I2E, 7, 1);
        resubmit_preserving_field_list(1);
        truncate(64);
        assert(hdr.h.isValid());
        assume(true);
        learn();
        learn_again();
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        recirculate_preserving_field_list(1);
    }
}

control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out packet, in headers hdr) { apply { packet.emit<h_t>(hdr.h); } }

V1Switch<headers, metadata>(P(), VC(), I(), E(), CC(), D()) main;
