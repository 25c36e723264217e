/*
 * extern/hash_constant_data: hash() whose data list is a compile-time constant
 * hashes the constant's bytes like any field list (crc16 of 12 34 = 0x770D).
 */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> x; bit<16> r_const; bit<16> r_field; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 0;
        hash(h.h.r_const, HashAlgorithm.crc16, 16w0, { 16w0x1234 }, 32w65536);
        hash(h.h.r_field, HashAlgorithm.crc16, 16w0, { h.h.x }, 32w65536);
    }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
