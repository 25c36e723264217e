/*
 * parser/stack_out_of_bounds: extracting into .next of a full stack
 * raises error.StackOutOfBounds. BMv2 v1model continues to ingress with the
 * two entries already extracted; the unextracted bytes stay in the payload.
 */

#include <core.p4>
#include <v1model.p4>

header m_t { bit<8> res; }
header entry_t { bit<8> v; }
struct headers_t {
    m_t        m;
    entry_t[2] st;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.m);
        transition parse_entry;
    }
    state parse_entry {
        pkt.extract(hdr.st.next);
        transition select(hdr.st.last.v) {
            8w0: accept;
            default: parse_entry;
        }
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.StackOutOfBounds) {
            hdr.m.res = 8w0xAA;
        } else if (sm.parser_error == error.NoError) {
            hdr.m.res = 8w0x11;
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
        pkt.emit(hdr.m);
        pkt.emit(hdr.st);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
