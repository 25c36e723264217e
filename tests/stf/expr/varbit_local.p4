/*
 * expr/varbit_local: local variables of a varbit type, declared in the control and in
 * its apply block (with an initializer), take both the bits and the current width of
 * what is assigned to them; == on them compares widths and bits.
 */

#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bytes; bit<8> same; }
header opt_t { varbit<32> v; }

struct headers_t {
    len_t len;
    opt_t first;
    opt_t second;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.first, (bit<32>)hdr.len.bytes * 8);
        pkt.extract(hdr.second, 16);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    varbit<32> held;
    apply {
        sm.egress_spec = 1;
        held = hdr.first.v;
        varbit<32> other = hdr.second.v;
        hdr.len.same = held == other ? 8w1 : 8w0;
        hdr.first.v = other;
        hdr.second.v = held;
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
