/*
 * control/varbit_params: varbit parameters of actions, functions and controls
 * (a varbit carries its current width: swapping two varbits swaps their
 * lengths on the wire), and a varbit parameter in a hash field list.
 */

#include <core.p4>
#include <v1model.p4>

header len_t {
    bit<8> n;
}
header vb_t {
    varbit<32> v;
}
header res_t {
    bit<8> same_before;
    bit<8> same_after;
    bit<16> hash;
}
struct headers_t {
    len_t la;
    vb_t a;
    len_t lb;
    vb_t b;
    res_t r;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.la);
        pkt.extract(hdr.a, (bit<32>)hdr.la.n << 3);
        pkt.extract(hdr.lb);
        pkt.extract(hdr.b, (bit<32>)hdr.lb.n << 3);
        pkt.extract(hdr.r);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

bit<8> same(in varbit<32> x, in varbit<32> y) {
    return x == y ? 8w1 : 8w0;
}

void copy_out(in varbit<32> x, out varbit<32> y) {
    y = x;
}

control Take(inout varbit<32> x, in varbit<32> y) {
    apply {
        x = y;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    Take() take;

    action swap(inout varbit<32> x, inout varbit<32> y) {
        varbit<32> t = x;
        x = y;
        y = t;
    }
    action hash_of(in varbit<32> x) {
        hash(hdr.r.hash, HashAlgorithm.crc16, 16w0, { x }, 32w65536);
    }

    apply {
        sm.egress_spec = 1;
        hdr.r.same_before = same(hdr.a.v, hdr.b.v);
        hash_of(hdr.a.v);
        swap(hdr.a.v, hdr.b.v);
        if (hdr.r.same_before == 0) {
            take.apply(hdr.a.v, hdr.b.v);
        } else {
            copy_out(hdr.b.v, hdr.a.v);
        }
        hdr.r.same_after = same(hdr.a.v, hdr.b.v);
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
