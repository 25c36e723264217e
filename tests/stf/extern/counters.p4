/*
 * extern/counters: an indexed counter (counter.count) and a direct_counter
 * attached to a table (counters = ...). Counting must not change the
 * forwarding behaviour.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t { h_t h; }
struct meta_t { }

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
    counter(32w8, CounterType.packets) pkt_ctr;
    direct_counter(CounterType.packets_and_bytes) tbl_ctr;
    action fwd(bit<9> port) {
        sm.egress_spec = port;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { fwd; NoAction; }
        counters = tbl_ctr;
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        pkt_ctr.count((bit<32>)hdr.h.b);
        t.apply();
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
