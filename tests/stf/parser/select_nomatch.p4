/*
 * parser/select_nomatch: a select with no default and no matching case
 * ends parsing with error.NoMatch. v1model does not drop the packet: ingress
 * runs with standard_metadata.parser_error == error.NoMatch and the headers
 * extracted so far.
 */

#include <core.p4>
#include <v1model.p4>

header s_t {
    bit<8> k1;
    bit<8> res;
}
header n_t { bit<8> v; }
struct headers_t { s_t s; n_t n; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s);
        transition select(hdr.s.k1) {
            8w1: parse_n;
            8w2: accept;
        }
    }
    state parse_n {
        pkt.extract(hdr.n);
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
        if (sm.parser_error == error.NoMatch) {
            hdr.s.res = 8w0xEE;
        } else if (sm.parser_error == error.NoError) {
            hdr.s.res = 8w0x11;
        }
        if (hdr.n.isValid()) {
            hdr.n.v = hdr.n.v + 1;
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
        pkt.emit(hdr.s);
        pkt.emit(hdr.n);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
