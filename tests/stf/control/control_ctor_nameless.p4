/*
 * control/control_ctor_nameless: nameless control instances as constructor
 * arguments (`UseTwice(Tally()) a;`). Each nameless instance is a separate
 * instance with its own register, owned by the control it is given to.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t { h_t h; }
struct meta_t { }

control Step(inout bit<8> v);

control Tally(inout bit<8> v)(bit<8> bonus) {
    register<bit<8>>(1) total;
    apply {
        bit<8> t;
        total.read(t, 0);
        t = t + v + bonus;
        total.write(0, t);
        v = t;
    }
}

control UseTwice(inout bit<8> v)(Step s) {
    apply {
        s.apply(v);
        s.apply(v);
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    UseTwice(Tally(0)) first;
    UseTwice(Tally(1)) second;
    apply {
        sm.egress_spec = 1;
        first.apply(hdr.h.a);
        second.apply(hdr.h.b);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
