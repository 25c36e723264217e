/* A SwitchML-style aggregation kernel written the way SwitchML's processor decides, one
 * lane at a time: every lane runs its own if/else on a condition that is the same in
 * every lane. The first contribution to a cell replaces the cell's values, a later one
 * adds to them and carries the running sum on, and a retransmission (a worker already
 * in the cell's bitmap) reads the cell into the packet. A packet that completes the
 * cell, or a retransmission to a complete cell, goes back to its sender with the
 * aggregate; the others are dropped.
 *
 * As in SwitchML, a worker alternates between the two versions of its slot and sends
 * the next chunk only once it has the last one's result: its contribution to one
 * version takes its bit off the other version's cell, so that cell is empty again (a
 * first contribution replaces) when the next round comes to it.
 *
 * Each packet carries INA_K int32 values (default 64) for one (slot, version), the same
 * header as p4/bench/switchml_like.p4, which writes a simpler kernel with `c ? a : b`. */
#include <core.p4>
#include <v1model.p4>
#include "../include/headers.p4"
#include "../include/ina_lanes.p4"

#ifndef SLOTS
#define SLOTS 256
#endif
#ifndef WORKERS
#define WORKERS 4
#endif

const bit<16> AGG_PORT = 48879;

/* Every register element a packet touches belongs to its slot (both versions of it):
 * the switch may run several pipelines, each with the slots the kernel sends it
 * (ina switch --pipelines N; one pipeline otherwise). */
header agg_t {
    bit<16> job;
    @pipeline_key bit<16> slot;
    bit<8>  version;
    bit<8>  flags;
    bit<16> worker;
}

#define VALUE_FIELD(i) int<32> v##i;

header values_t {
    INA_FOR_EACH_LANE(VALUE_FIELD)
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    agg_t      agg;
    values_t   values;
}

struct metadata_t {
    bit<32> index;
    bit<32> bitmap;
    bit<32> count;
}

parser BranchesParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            IPPROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            AGG_PORT: parse_agg;
            default: accept;
        }
    }
    state parse_agg {
        packet.extract(hdr.agg);
        packet.extract(hdr.values);
        transition accept;
    }
}

control BranchesVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

#define DECLARE_LANE(i) register<int<32>>(SLOTS * 2) lane_##i;

/* SwitchML's three register actions, as one if/else per lane. */
#define LANE(i) \
    if (first) { \
        lane_##i.write(meta.index, hdr.values.v##i); \
    } else if (fresh) { \
        lane_##i.read(value, meta.index); \
        value = value + hdr.values.v##i; \
        lane_##i.write(meta.index, value); \
        hdr.values.v##i = value; \
    } else { \
        lane_##i.read(hdr.values.v##i, meta.index); \
    }

control BranchesIngress(inout headers_t hdr, inout metadata_t meta,
                        inout standard_metadata_t standard_metadata) {
    register<bit<32>>(SLOTS * 2) bitmaps;
    register<bit<32>>(SLOTS * 2) counts;
    INA_FOR_EACH_LANE(DECLARE_LANE)

    apply {
        standard_metadata.egress_spec = standard_metadata.ingress_port;
        if (!hdr.agg.isValid()) {
            mark_to_drop(standard_metadata);
            exit;
        }
        meta.index = ((bit<32>)hdr.agg.slot << 1) | (bit<32>)hdr.agg.version[0:0];
        bitmaps.read(meta.bitmap, meta.index);
        counts.read(meta.count, meta.index);
        bit<32> me = (bit<32>)1 << (bit<8>)hdr.agg.worker;
        bool first = meta.bitmap == 0;
        bool fresh = (meta.bitmap & me) == 0;
        int<32> value;
        INA_FOR_EACH_LANE(LANE)
        if (fresh) {
            bit<32> other_bitmap;
            bitmaps.read(other_bitmap, meta.index ^ 1);
            bitmaps.write(meta.index ^ 1, other_bitmap & ~me);
            meta.bitmap = meta.bitmap | me;
            meta.count = first ? 1 : meta.count + 1;
            bitmaps.write(meta.index, meta.bitmap);
            counts.write(meta.index, meta.count);
        }
        if (meta.count == WORKERS) {
            hdr.agg.flags = 1;
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

control BranchesEgress(inout headers_t hdr, inout metadata_t meta,
                       inout standard_metadata_t standard_metadata) {
    apply { }
}

control BranchesComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control BranchesDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.agg);
        packet.emit(hdr.values);
    }
}

V1Switch(BranchesParser(), BranchesVerifyChecksum(), BranchesIngress(), BranchesEgress(),
         BranchesComputeChecksum(), BranchesDeparser()) main;
