/*
 * parser/packet_too_short: extracting a header longer than the remaining
 * packet fails with error.PacketTooShort. The packet is not dropped; the
 * first header (extracted before the failure) is valid, the second is not,
 * and the leftover bytes are still emitted as payload.
 */

#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
header g_t { bit<32> b; }
struct headers_t { h_t h; g_t g; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.g);
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
        if (sm.parser_error == error.PacketTooShort) {
            hdr.h.a = 8w0xE1;
        }
        if (hdr.g.isValid()) {
            hdr.g.b = 32w0;
        }
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
        pkt.emit(hdr.h);
        pkt.emit(hdr.g);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
