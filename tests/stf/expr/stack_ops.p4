/*
 * expr/stack_ops: header stack operations in a control: push_front(n)
 * shifts entries up (the first n become invalid, the last ones fall off),
 * pop_front(n) shifts entries down (the last n become invalid), constant
 * indexing with setValid. Emitting a stack emits its valid entries in
 * index order.
 */

#include <core.p4>
#include <v1model.p4>

header ctl_t { bit<8> op; }
header e_t { bit<8> v; }
struct headers_t {
    ctl_t  c;
    e_t[3] st;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.c);
        pkt.extract(hdr.st.next);
        pkt.extract(hdr.st.next);
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
        if (hdr.c.op == 8w1) {
            hdr.st.push_front(1);
            hdr.st[0].setValid();
            hdr.st[0].v = 8w0xAA;
        } else if (hdr.c.op == 8w2) {
            hdr.st.pop_front(1);
        } else if (hdr.c.op == 8w3) {
            hdr.st.push_front(2);
        } else if (hdr.c.op == 8w4) {
            hdr.st[2].setValid();
            hdr.st[2].v = 8w0x33;
        } else if (hdr.c.op == 8w5) {
            hdr.st[1].setInvalid();
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
        pkt.emit(hdr.c);
        pkt.emit(hdr.st);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
