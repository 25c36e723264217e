/*
 * expr/error_decl: user error declarations used with verify, a local
 * variable of type error, and == / != on error values. Also declares an
 * extra match_kind (declaration only; tables use the standard kinds).
 */

#include <core.p4>
#include <v1model.p4>

error { TooBig, TooSmall }
match_kind { my_custom_kind }

header h_t {
    bit<8> v;
    bit<8> r;
}
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        verify(hdr.h.v < 8w200, error.TooBig);
        verify(hdr.h.v > 8w10, error.TooSmall);
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
        error e = sm.parser_error;
        if (e == error.TooBig) {
            hdr.h.r = 8w1;
        } else if (e == error.TooSmall) {
            hdr.h.r = 8w2;
        } else if (e == error.NoError) {
            hdr.h.r = 8w3;
        }
        if (e != error.PacketTooShort) {
            hdr.h.r = hdr.h.r | 8w0x10;
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
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
