/*
 * expr/newtype_literals: an untyped constant takes a type made with `type` where it is
 * assigned, initializes a constant or a variable, or is returned (as p4c allows; an
 * argument or a comparison needs a cast). Ingress sends the packet to the port
 * chosen by tag, counting ports as values of port_t.
 */

#include <core.p4>
#include <v1model.p4>

type bit<9> port_t;
const port_t FALLBACK = 3;

header h_t {
    bit<8> tag;
    bit<16> port;
}
struct headers_t { h_t h; }
struct meta_t { port_t chosen; }

port_t second() {
    return 2;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        port_t first = 1;
        meta.chosen = FALLBACK;
        if (hdr.h.tag == 1) {
            meta.chosen = first;
        } else if (hdr.h.tag == 2) {
            meta.chosen = second();
        } else if (hdr.h.tag == 4) {
            meta.chosen = 4;
        }
        sm.egress_spec = (bit<9>)meta.chosen;
        hdr.h.port = (bit<16>)(bit<9>)meta.chosen;
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
