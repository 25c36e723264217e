/* Header unions, struct and header initializers, header equality, and the 2020
 * revision of v1model (register<T, I>, counter<I>, PortId_t). */
#include <core.p4>
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

header v4_t { bit<32> src; bit<32> dst; }
header v6_t { bit<128> src; bit<128> dst; }
header_union ip_t { v4_t v4; v6_t v6; }
header tag_t { bit<8> kind; bit<8> len; }

struct pair_t { bit<8> first; bit<8> second; }

struct headers {
    tag_t tag;
    ip_t  ip;
    tag_t[2] tags;
}

struct metadata {
    pair_t  pair;
    PortId_t port;
    bit<8>  index;
}

parser P(packet_in packet, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.tag);
        transition select(hdr.tag.kind) {
            4: parse_v4;
            6: parse_v6;
            default: accept;
        }
    }
    state parse_v4 { packet.extract(hdr.ip.v4); transition accept; }
    state parse_v6 { packet.extract(hdr.ip.v6); transition accept; }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<16>, bit<8>>(256) by_index;
    counter<bit<8>>(256, CounterType.bytes) per_index;
    apply {
        meta.pair = { first = 1, second = 2 };
        meta.pair = { 3, 4 };
        if (meta.pair == { 3, 4 }) {
            meta.index = meta.pair.first;
        }
        if (hdr.ip.isValid() && hdr.ip.v4.isValid()) {
            hdr.ip.v6.setInvalid();
        }
        hdr.tags[0] = hdr.tag;
        hdr.tags[1] = { kind = 9, len = 2 };
        if (hdr.tags[0] == hdr.tags[1]) {
            hdr.tags[1].setInvalid();
        }
        bit<16> value;
        by_index.read(value, meta.index);
        by_index.write(meta.index, value + 1);
        per_index.count(meta.index);
        meta.port = sm.ingress_port;
        sm.egress_spec = meta.port;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }

control D(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.tag);
        packet.emit(hdr.ip);
        packet.emit(hdr.tags);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
