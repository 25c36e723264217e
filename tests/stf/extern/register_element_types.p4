/*
 * extern/register_element_types: the register elements BMv2 takes once p4c-bm2-ss
 * has lowered them to bit<W>: a typedef, a new type, a serializable enum, a plain
 * enum (bit<32>) and int<W> (two's complement, read back signed).
 */

#include <core.p4>
#include <v1model.p4>

typedef bit<8> byte_t;
type bit<8> tag_t;
enum bit<8> colour_t { RED = 0x10, BLUE = 0x20 }
enum state_t { IDLE, BUSY }

header h_t {
    bit<8> idx;
    bit<8> val;
    bit<8> old_byte;
    bit<8> old_tag;
    bit<8> old_colour;
    bit<8> was_busy;
    bit<8> old_signed;
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
    register<byte_t>(4) bytes;
    register<tag_t>(4) tags;
    register<colour_t>(4) colours;
    register<state_t>(4) states;
    register<int<8>>(4) signed_values;
    apply {
        sm.egress_spec = 1;
        bit<32> i = (bit<32>)hdr.h.idx;
        byte_t b;
        tag_t t;
        colour_t c;
        state_t s;
        int<8> v;
        bytes.read(b, i);
        tags.read(t, i);
        colours.read(c, i);
        states.read(s, i);
        signed_values.read(v, i);
        hdr.h.old_byte = b;
        hdr.h.old_tag = (bit<8>)t;
        hdr.h.old_colour = (bit<8>)c;
        hdr.h.was_busy = s == state_t.BUSY ? 8w1 : 8w0;
        hdr.h.old_signed = (bit<8>)(v >> 1);  // arithmetic shift: the sign is kept
        bytes.write(i, hdr.h.val);
        tags.write(i, (tag_t)(hdr.h.val + 1));
        colours.write(i, hdr.h.val == 0 ? colour_t.RED : colour_t.BLUE);
        states.write(i, state_t.BUSY);
        signed_values.write(i, (int<8>)hdr.h.val);
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
