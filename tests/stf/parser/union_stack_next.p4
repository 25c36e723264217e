/*
 * parser/union_stack_next: extracting into a member of `stack.next` where the stack
 * holds header unions. Each extract fills the next element (nextIndex moves on by one
 * per extract, not once more when the union's other members are made invalid).
 */

#include <core.p4>
#include <v1model.p4>

header kind_t { bit<8> kinds; }
header small_t { bit<8> v; }
header wide_t { bit<16> v; }
header_union item_u { small_t small; wide_t wide; }
header count_t { bit<8> valid_items; bit<8> last; }

struct headers_t {
    kind_t kind;
    item_u[3] items;
    count_t count;
}
struct meta_t { bit<8> last; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.kind);
        transition select(hdr.kind.kinds) {
            0x00: two_small;
            0x01: small_then_wide;
            default: three_wide;
        }
    }
    state two_small {
        pkt.extract(hdr.items.next.small);
        pkt.extract(hdr.items.next.small);
        transition done;
    }
    state small_then_wide {
        pkt.extract(hdr.items.next.small);
        pkt.extract(hdr.items.next.wide);
        transition done;
    }
    state three_wide {
        pkt.extract(hdr.items.next.wide);
        pkt.extract(hdr.items.next.wide);
        pkt.extract(hdr.items.next.wide);
        transition done;
    }
    state done {
        meta.last = (bit<8>)hdr.items.lastIndex;
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
        hdr.count.setValid();
        hdr.count.valid_items = 0;
        for (bit<8> i = 0; i < 3; i = i + 1) {
            if (hdr.items[i].small.isValid() || hdr.items[i].wide.isValid()) {
                hdr.count.valid_items = hdr.count.valid_items + 1;
            }
        }
        hdr.count.last = meta.last;
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
