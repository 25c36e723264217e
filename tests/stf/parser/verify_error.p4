/*
 * parser/verify_error: verify(cond, error.BadVersion) with a user-declared
 * error. On failure the parser stops (reject); v1model continues to ingress
 * with parser_error set and with the headers extracted so far (h is valid,
 * g was never extracted, so its bytes stay in the payload).
 */

#include <core.p4>
#include <v1model.p4>

error { BadVersion }
header h_t {
    bit<8> version;
    bit<8> res;
}
header g_t { bit<8> y; }
struct headers_t { h_t h; g_t g; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        verify(hdr.h.version == 8w4, error.BadVersion);
        transition parse_g;
    }
    state parse_g {
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
        if (sm.parser_error == error.BadVersion) {
            hdr.h.res = 8w0xEE;
        } else if (sm.parser_error == error.NoError) {
            hdr.h.res = 8w0x00;
        } else {
            hdr.h.res = 8w0xFF;
        }
        if (hdr.g.isValid()) {
            hdr.g.y = hdr.g.y + 1;
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
