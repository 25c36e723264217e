/*
 * parser/start_self_loop: the only state, start, transitions to itself
 * until a tag byte is non-zero; every pass extracts one stack element.
 * The sum of the element values goes out as the egress port.
 */

#include <core.p4>
#include <v1model.p4>

header item_t { bit<8> tag; bit<8> val; }
struct headers_t { item_t[4] items; }
struct meta_t { bit<9> sum; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.items.next);
        meta.sum = meta.sum + (bit<9>)hdr.items.last.val;
        transition select(hdr.items.last.tag) {
            0: start;
            default: accept;
        }
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply { sm.egress_spec = meta.sum; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.items); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
