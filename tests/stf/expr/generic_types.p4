/*
 * expr/generic_types: a generic header and a generic struct, specialized
 * with different type arguments (header field, metadata, local variable,
 * struct initializer, header stack of a specialization, a generic struct
 * whose fields are specializations over its own type parameter).
 */

#include <core.p4>
#include <v1model.p4>

header Tagged<T> {
    T value;
    bit<8> tag;
}

struct Pair<A, B> {
    A first;
    B second;
}

struct Twin<T> {
    Pair<T, T> both;
}

struct headers_t {
    Tagged<bit<16>> wide;
    Tagged<bit<8>>[2] narrow;
}

struct meta_t {
    Pair<bit<8>, bool> p;
    Twin<bit<8>> twin;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.wide);
        pkt.extract(hdr.narrow.next);
        pkt.extract(hdr.narrow.next);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        Pair<bit<16>, bit<8>> q = { hdr.wide.value, hdr.wide.tag };
        meta.p.first = q.second + hdr.narrow[1].value;
        meta.p.second = q.first == 0x0102;
        hdr.wide.tag = meta.p.first;
        meta.twin.both = { hdr.narrow[0].value, hdr.narrow[1].tag };
        hdr.narrow[0].tag = meta.twin.both.first ^ meta.twin.both.second;
        if (meta.p.second) {
            sm.egress_spec = 2;
        } else {
            sm.egress_spec = 3;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.wide);
        pkt.emit(hdr.narrow);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
