/*
 * parser/stack_next_last: parse a header stack in a loop with .next,
 * loop on .last.bos, and record .lastIndex and .last in metadata.
 */

#include <core.p4>
#include <v1model.p4>

header cnt_t {
    bit<8> n;
    bit<8> lastval;
}
header entry_t {
    bit<7> val;
    bit<1> bos;
}
struct headers_t {
    cnt_t      c;
    entry_t[4] st;
}
struct meta_t {
    bit<32> idx;
    bit<8>  lastval;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.c);
        transition parse_entry;
    }
    state parse_entry {
        pkt.extract(hdr.st.next);
        meta.idx = hdr.st.lastIndex;
        meta.lastval = (bit<8>)hdr.st.last.val;
        transition select(hdr.st.last.bos) {
            1w1: accept;
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
        hdr.c.n = (bit<8>)meta.idx + 1;
        hdr.c.lastval = meta.lastval;
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
        pkt.emit(hdr.c);
        pkt.emit(hdr.st);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
