/* Constants, widths computed at compile time, enums, casts and every operator. */
#include <core.p4>
#include <v1model.p4>

const int K = 3;
const bit<8> BASE = 8w200;
const bit<8> WRAPPED = BASE + 100;          // 44: bit<8> arithmetic wraps
const bit<8> SATURATED = BASE |+| 100;      // 255
const bit<8> FLOORED = 8w5 |-| 10;          // 0
const int<8> NEGATIVE = -8s100 - 50;        // wraps to 106
const bit<16> CONCAT = 8w0xAB ++ 8w0xCD;    // 0xABCD
const bit<4> NIBBLE = CONCAT[11:8];         // 0xB
const bit<32> SHIFTED = 1 << 20;
const bool FLAG = (K * 2 > 5) && !(K == 4);
const bit<8> CHOSEN = FLAG ? 8w1 : 8w2;
const int<16> SIGNED_SHIFT = -16s256 >> 4;  // -16
const bit<8> FROM_SIGNED = (bit<8>)(-8s1);  // 255
const bit<1> FROM_BOOL = (bit<1>)true;
const bit<12> MASKED = (12w0xfff & ~12w0x0f0) ^ 12w1;

typedef bit<(K * 8)> word_t;                // bit<24>
type bit<16> port_id_t;

enum bit<8> Proto {
    TCP = 6,
    UDP = 17,
    ANY = 0xff
}

enum Color { RED, GREEN, BLUE }

header h_t {
    word_t  w;
    bit<8>  proto;
    bit<16> port;
    int<8>  delta;
    bool    flag;
    bit<7>  pad;                           // BMv2 headers are whole bytes
}

struct headers { h_t h; }

struct metadata {
    word_t    w;
    port_id_t port;
    Proto     proto;
    Color     color;
    bit<8>    small;
    int<16>   wide;
}

parser P(packet_in packet, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.h);
        transition select(hdr.h.proto) {
            Proto.TCP: accept;
            (bit<8>)Proto.UDP: accept;
            default: reject;
        }
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        meta.w = hdr.h.w + 1;
        meta.port = (port_id_t)hdr.h.port;
        hdr.h.port = (bit<16>)meta.port;
        meta.proto = (Proto)hdr.h.proto;
        if (meta.proto == Proto.TCP) {
            meta.color = Color.RED;
        } else if (meta.color != Color.BLUE) {
            meta.color = Color.GREEN;
        }
        hdr.h.proto = (bit<8>)Proto.ANY;
        meta.small = hdr.h.w[7:0] + WRAPPED + SATURATED + FLOORED + CHOSEN;
        meta.wide = (int<16>)hdr.h.delta + SIGNED_SHIFT + (int<16>)NEGATIVE;
        meta.small = meta.small << 2;
        meta.small = meta.small >> hdr.h.proto[2:0];
        meta.small = -meta.small;
        meta.small = ~meta.small * 3 / 2 % 8;
        hdr.h.flag = hdr.h.flag || meta.small >= 10 && meta.small != NIBBLE ++ NIBBLE;
        sm.egress_spec = (bit<9>)FROM_BOOL + (bit<9>)FROM_SIGNED[0:0];
        meta.w = (word_t)(SHIFTED[23:0]) |-| (word_t)MASKED;
        meta.small = (bit<8>)meta.wide[15:8];
        switch (meta.proto) {
            Proto.TCP: { meta.small = 1; }
            Proto.UDP:
            Proto.ANY: { meta.small = 2; }
            default: { }
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out packet, in headers hdr) { apply { packet.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
