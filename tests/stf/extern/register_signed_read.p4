/*
 * extern/register_signed_read: a value read from a register<int<8>> is an int<8>, a
 * signed two's complement number (P4_16 spec): -1 written by one packet and read back
 * by the next is less than 0, and -1 >> 1 keeps the sign. The control plane reads and
 * writes the cells as signed values too (register_read/register_write with -1, -2).
 * BMv2 reads such a value as unsigned: register_signed_read.bmv2.stf.
 */
#include <core.p4>
#include <v1model.p4>

header p_t {
    bit<8> idx;
    bit<8> write;   // 1: store value in cell idx after reading it
    int<8> value;
    bit<8> flags;   // bit 0: old < 0, bit 1: old > 0
    int<8> half;    // old >> 1
}
struct headers_t { p_t p; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.p);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    register<int<8>>(4) cells;
    apply {
        sm.egress_spec = 1;
        int<8> old;
        cells.read(old, (bit<32>)hdr.p.idx);
        bit<8> flags = 0;
        if (old < 0) { flags = flags | 1; }
        if (old > 0) { flags = flags | 2; }
        hdr.p.flags = flags;
        hdr.p.half = old >> 1;
        if (hdr.p.write == 1) {
            cells.write((bit<32>)hdr.p.idx, hdr.p.value);
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
        pkt.emit(hdr.p);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
