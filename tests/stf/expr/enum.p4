/*
 * expr/enum: a plain enum (local variable, switch on its members) and a
 * serializable enum bit<8> used as a header field type, as select labels,
 * in comparisons and cast to its underlying type. A serializable enum field
 * may hold a value that has no name (0x33 here).
 */

#include <core.p4>
#include <v1model.p4>

enum Color { Red, Green, Blue }
enum bit<8> Proto {
    TCP = 6,
    UDP = 17,
    OTHER = 0xFF
}

header h_t {
    Proto  proto;
    bit<8> path;
    bit<8> raw;
    bit<8> col;
}
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.proto) {
            Proto.TCP: tcp;
            Proto.UDP: udp;
            default: accept;
        }
    }
    state tcp {
        hdr.h.path = 8w1;
        transition accept;
    }
    state udp {
        hdr.h.path = 8w2;
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
        Color c;
        if (hdr.h.proto == Proto.TCP) {
            c = Color.Red;
        } else if (hdr.h.proto == Proto.UDP) {
            c = Color.Green;
        } else {
            c = Color.Blue;
        }
        switch (c) {
            Color.Red: { hdr.h.col = 8w10; }
            Color.Green: { hdr.h.col = 8w20; }
            Color.Blue: { hdr.h.col = 8w30; }
        }
        hdr.h.raw = (bit<8>)hdr.h.proto;
        if (hdr.h.raw == 8w0x33) {
            hdr.h.proto = Proto.OTHER;
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
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
