/*
 * parser/set_valid_in_parser: setValid on an invalid header zeroes its fields, in a
 * parser state as in a control: p4c-bm2-ss makes BMv2's add_header of it in both, so
 * a field written while the header was invalid does not survive it.
 */

#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; }
header note_t { bit<8> x; bit<8> y; }

struct headers_t {
    in_t in_h;
    note_t from_parser;
    note_t from_control;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.in_h);
        hdr.from_parser.x = hdr.in_h.a;
        transition mark;
    }
    state mark {
        hdr.from_parser.setValid();
        hdr.from_parser.y = hdr.in_h.b;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.from_control.x = hdr.in_h.a;
        hdr.from_control.setValid();
        hdr.from_control.y = hdr.in_h.b;
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
