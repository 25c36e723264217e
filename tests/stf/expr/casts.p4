/*
 * expr/casts: explicit casts between widths and signedness:
 * bit<8> -> bit<16> zero-extends, bit<16> -> bit<8> truncates,
 * bit<W> <-> int<W> reinterprets the bits, int<8> -> int<16> sign-extends,
 * int<16> -> int<8> truncates, bool -> bit<1> and bit<1> -> bool.
 */

#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a8;
    bit<16> a16;
    int<8> s8;
    int<16> s16;
    bit<1> f;
    bit<7> pad;
    bit<16> zext;
    bit<8> trunc;
    int<8> as_int;
    bit<8> as_bit;
    int<16> sext;
    int<8> strunc;
    bit<16> sext_bits;
    bit<16> zext_bits;
    bit<32> wide;
    bit<8> from_bool;
    bit<8> to_bool;
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
    apply {
        sm.egress_spec = 1;
        hdr.h.zext = (bit<16>)hdr.h.a8;
        hdr.h.trunc = (bit<8>)hdr.h.a16;
        hdr.h.as_int = (int<8>)hdr.h.a8;
        hdr.h.as_bit = (bit<8>)hdr.h.s8;
        hdr.h.sext = (int<16>)hdr.h.s8;
        hdr.h.strunc = (int<8>)hdr.h.s16;
        hdr.h.sext_bits = (bit<16>)((int<16>)hdr.h.s8);
        hdr.h.zext_bits = (bit<16>)((bit<8>)hdr.h.s8);
        hdr.h.wide = (bit<32>)hdr.h.a16;
        hdr.h.from_bool = (bit<8>)((bit<1>)(hdr.h.a8 > 8w100));
        bool flag = (bool)hdr.h.f;
        if (flag) {
            hdr.h.to_bool = 8w0x0B;
        } else {
            hdr.h.to_bool = 8w0x0C;
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
