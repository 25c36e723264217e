/* SwitchML-like in-network aggregation: every packet carries 64 32-bit values for one
 * slot; the switch adds them into 64 register arrays, counts contributions with a
 * bitmap and multicasts the result once every worker of the job has contributed. */
#include <core.p4>
#include <v1model.p4>

#define NUM_SLOTS 512
#define NUM_WORKERS 8
#define RESULT_GROUP 1

const bit<16> ETHERTYPE_SWITCHML = 0x88b5;
const bit<32> ALL_WORKERS = (32w1 << NUM_WORKERS) - 1;

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etherType;
}

header switchml_t {
    bit<8>  msgType;
    bit<8>  workerId;
    bit<16> slot;
    bit<1>  version;
    bit<7>  reserved;
    bit<8>  count;
}

#define F8(a, b, c, d, e, f, g, h) \
    bit<32> v##a; bit<32> v##b; bit<32> v##c; bit<32> v##d; \
    bit<32> v##e; bit<32> v##f; bit<32> v##g; bit<32> v##h;

header values_t {
    F8(0, 1, 2, 3, 4, 5, 6, 7)
    F8(8, 9, 10, 11, 12, 13, 14, 15)
    F8(16, 17, 18, 19, 20, 21, 22, 23)
    F8(24, 25, 26, 27, 28, 29, 30, 31)
    F8(32, 33, 34, 35, 36, 37, 38, 39)
    F8(40, 41, 42, 43, 44, 45, 46, 47)
    F8(48, 49, 50, 51, 52, 53, 54, 55)
    F8(56, 57, 58, 59, 60, 61, 62, 63)
}

struct headers {
    ethernet_t ethernet;
    switchml_t switchml;
    values_t   values;
}

struct metadata {
    bit<32> index;
    bit<32> bitmap;
    bit<32> mask;
    bit<8>  seen;
    bool    complete;
}

parser SmlParser(packet_in packet, out headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_SWITCHML: parse_switchml;
            default: accept;
        }
    }
    state parse_switchml {
        packet.extract(hdr.switchml);
        packet.extract(hdr.values);
        transition accept;
    }
}

control SmlVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

#define LANE(i) register<bit<32>>(NUM_SLOTS) lane##i;
#define ADD(i) { bit<32> acc; lane##i.read(acc, meta.index); \
                 acc = acc + hdr.values.v##i; lane##i.write(meta.index, acc); \
                 hdr.values.v##i = acc; }
#define LANES8(a, b, c, d, e, f, g, h) LANE(a) LANE(b) LANE(c) LANE(d) LANE(e) LANE(f) LANE(g) LANE(h)
#define ADDS8(a, b, c, d, e, f, g, h) ADD(a) ADD(b) ADD(c) ADD(d) ADD(e) ADD(f) ADD(g) ADD(h)

control SmlIngress(inout headers hdr, inout metadata meta,
                   inout standard_metadata_t standard_metadata) {
    register<bit<32>>(NUM_SLOTS) bitmaps;
    register<bit<8>>(NUM_SLOTS) counts;
    counter(NUM_SLOTS, CounterType.packets_and_bytes) slot_packets;
    LANES8(0, 1, 2, 3, 4, 5, 6, 7)
    LANES8(8, 9, 10, 11, 12, 13, 14, 15)
    LANES8(16, 17, 18, 19, 20, 21, 22, 23)
    LANES8(24, 25, 26, 27, 28, 29, 30, 31)
    LANES8(32, 33, 34, 35, 36, 37, 38, 39)
    LANES8(40, 41, 42, 43, 44, 45, 46, 47)
    LANES8(48, 49, 50, 51, 52, 53, 54, 55)
    LANES8(56, 57, 58, 59, 60, 61, 62, 63)

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action multicast_result() {
        standard_metadata.mcast_grp = RESULT_GROUP;
        hdr.switchml.msgType = 2;
    }
    table job_filter {
        key = {
            hdr.switchml.workerId: exact;
        }
        actions = { NoAction; drop; }
        default_action = drop();
        size = NUM_WORKERS;
    }
    apply {
        if (!hdr.switchml.isValid()) {
            drop();
            return;
        }
        if (job_filter.apply().miss) {
            return;
        }
        meta.index = (bit<32>)hdr.switchml.slot;
        slot_packets.count(meta.index);
        bitmaps.read(meta.bitmap, meta.index);
        meta.mask = 32w1 << hdr.switchml.workerId;
        if ((meta.bitmap & meta.mask) != 0) {
            drop();
            return;
        }
        meta.bitmap = meta.bitmap | meta.mask;
        bitmaps.write(meta.index, meta.bitmap);
        counts.read(meta.seen, meta.index);
        meta.seen = meta.seen |+| 1;
        counts.write(meta.index, meta.seen);
        ADDS8(0, 1, 2, 3, 4, 5, 6, 7)
        ADDS8(8, 9, 10, 11, 12, 13, 14, 15)
        ADDS8(16, 17, 18, 19, 20, 21, 22, 23)
        ADDS8(24, 25, 26, 27, 28, 29, 30, 31)
        ADDS8(32, 33, 34, 35, 36, 37, 38, 39)
        ADDS8(40, 41, 42, 43, 44, 45, 46, 47)
        ADDS8(48, 49, 50, 51, 52, 53, 54, 55)
        ADDS8(56, 57, 58, 59, 60, 61, 62, 63)
        meta.complete = meta.bitmap == ALL_WORKERS;
        if (meta.complete) {
            bitmaps.write(meta.index, 0);
            counts.write(meta.index, 0);
            multicast_result();
        } else {
            drop();
        }
    }
}

control SmlEgress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        hdr.switchml.count = (bit<8>)NUM_WORKERS;
    }
}

control SmlComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control SmlDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.switchml);
        packet.emit(hdr.values);
    }
}

V1Switch(SmlParser(), SmlVerifyChecksum(), SmlIngress(), SmlEgress(), SmlComputeChecksum(),
         SmlDeparser()) main;
