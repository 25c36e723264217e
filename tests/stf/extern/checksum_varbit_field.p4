/*
 * extern/checksum_varbit_field: update_checksum over a field list that contains
 * a varbit field checksums the varbit's current bytes (csum16 over 03 AA BB CC =
 * 0x4089).
 */
#include <core.p4>
#include <v1model.p4>

header fix_t { bit<8> len; bit<16> csum; }
header opt_t { varbit<32> data; }
struct headers { fix_t fix; opt_t opt; }
struct meta_t { }

parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.fix);
        pkt.extract(h.opt, (bit<32>)h.fix.len * 8);
        transition accept;
    }
}
control VC(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 0; }
}
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout meta_t m) {
    apply {
        update_checksum(true, { h.fix.len, h.opt.data }, h.fix.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.fix); pkt.emit(h.opt); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
