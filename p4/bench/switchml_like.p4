/* A SwitchML-like aggregation kernel for benchmarking the switch: each packet carries
 * 64 int32 values for one (slot, version); the switch adds them into per-lane register
 * arrays, tracks contributors in a bitmap and, when all workers have contributed,
 * returns the aggregate to the sender (a real job multicasts it; see p4/ for that). */
#include <core.p4>
#include <v1model.p4>
#include "../include/headers.p4"

#ifndef SLOTS
#define SLOTS 256
#endif
#ifndef WORKERS
#define WORKERS 4
#endif

const bit<16> AGG_PORT = 48879;

header agg_t {
    bit<16> job;
    bit<16> slot;
    bit<8>  version;
    bit<8>  flags;
    bit<16> worker;
}

header values_t {
    int<32> v0;
    int<32> v1;
    int<32> v2;
    int<32> v3;
    int<32> v4;
    int<32> v5;
    int<32> v6;
    int<32> v7;
    int<32> v8;
    int<32> v9;
    int<32> v10;
    int<32> v11;
    int<32> v12;
    int<32> v13;
    int<32> v14;
    int<32> v15;
    int<32> v16;
    int<32> v17;
    int<32> v18;
    int<32> v19;
    int<32> v20;
    int<32> v21;
    int<32> v22;
    int<32> v23;
    int<32> v24;
    int<32> v25;
    int<32> v26;
    int<32> v27;
    int<32> v28;
    int<32> v29;
    int<32> v30;
    int<32> v31;
    int<32> v32;
    int<32> v33;
    int<32> v34;
    int<32> v35;
    int<32> v36;
    int<32> v37;
    int<32> v38;
    int<32> v39;
    int<32> v40;
    int<32> v41;
    int<32> v42;
    int<32> v43;
    int<32> v44;
    int<32> v45;
    int<32> v46;
    int<32> v47;
    int<32> v48;
    int<32> v49;
    int<32> v50;
    int<32> v51;
    int<32> v52;
    int<32> v53;
    int<32> v54;
    int<32> v55;
    int<32> v56;
    int<32> v57;
    int<32> v58;
    int<32> v59;
    int<32> v60;
    int<32> v61;
    int<32> v62;
    int<32> v63;
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

parser BenchParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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

control BenchVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

#define LANE(i) \
    lane_##i.read(value, meta.index); \
    value = first ? hdr.values.v##i : value + hdr.values.v##i; \
    lane_##i.write(meta.index, value); \
    hdr.values.v##i = value;

#define DECLARE_LANE(i) register<int<32>>(SLOTS * 2) lane_##i;

control BenchIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    register<bit<32>>(SLOTS * 2) bitmaps;
    register<bit<32>>(SLOTS * 2) counts;
    DECLARE_LANE(0)
    DECLARE_LANE(1)
    DECLARE_LANE(2)
    DECLARE_LANE(3)
    DECLARE_LANE(4)
    DECLARE_LANE(5)
    DECLARE_LANE(6)
    DECLARE_LANE(7)
    DECLARE_LANE(8)
    DECLARE_LANE(9)
    DECLARE_LANE(10)
    DECLARE_LANE(11)
    DECLARE_LANE(12)
    DECLARE_LANE(13)
    DECLARE_LANE(14)
    DECLARE_LANE(15)
    DECLARE_LANE(16)
    DECLARE_LANE(17)
    DECLARE_LANE(18)
    DECLARE_LANE(19)
    DECLARE_LANE(20)
    DECLARE_LANE(21)
    DECLARE_LANE(22)
    DECLARE_LANE(23)
    DECLARE_LANE(24)
    DECLARE_LANE(25)
    DECLARE_LANE(26)
    DECLARE_LANE(27)
    DECLARE_LANE(28)
    DECLARE_LANE(29)
    DECLARE_LANE(30)
    DECLARE_LANE(31)
    DECLARE_LANE(32)
    DECLARE_LANE(33)
    DECLARE_LANE(34)
    DECLARE_LANE(35)
    DECLARE_LANE(36)
    DECLARE_LANE(37)
    DECLARE_LANE(38)
    DECLARE_LANE(39)
    DECLARE_LANE(40)
    DECLARE_LANE(41)
    DECLARE_LANE(42)
    DECLARE_LANE(43)
    DECLARE_LANE(44)
    DECLARE_LANE(45)
    DECLARE_LANE(46)
    DECLARE_LANE(47)
    DECLARE_LANE(48)
    DECLARE_LANE(49)
    DECLARE_LANE(50)
    DECLARE_LANE(51)
    DECLARE_LANE(52)
    DECLARE_LANE(53)
    DECLARE_LANE(54)
    DECLARE_LANE(55)
    DECLARE_LANE(56)
    DECLARE_LANE(57)
    DECLARE_LANE(58)
    DECLARE_LANE(59)
    DECLARE_LANE(60)
    DECLARE_LANE(61)
    DECLARE_LANE(62)
    DECLARE_LANE(63)

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
        int<32> value;
        if ((meta.bitmap & me) == 0) {
            meta.bitmap = meta.bitmap | me;
            meta.count = meta.count + 1;
            bitmaps.write(meta.index, meta.bitmap);
            counts.write(meta.index, meta.count);
            LANE(0)
            LANE(1)
            LANE(2)
            LANE(3)
            LANE(4)
            LANE(5)
            LANE(6)
            LANE(7)
            LANE(8)
            LANE(9)
            LANE(10)
            LANE(11)
            LANE(12)
            LANE(13)
            LANE(14)
            LANE(15)
            LANE(16)
            LANE(17)
            LANE(18)
            LANE(19)
            LANE(20)
            LANE(21)
            LANE(22)
            LANE(23)
            LANE(24)
            LANE(25)
            LANE(26)
            LANE(27)
            LANE(28)
            LANE(29)
            LANE(30)
            LANE(31)
            LANE(32)
            LANE(33)
            LANE(34)
            LANE(35)
            LANE(36)
            LANE(37)
            LANE(38)
            LANE(39)
            LANE(40)
            LANE(41)
            LANE(42)
            LANE(43)
            LANE(44)
            LANE(45)
            LANE(46)
            LANE(47)
            LANE(48)
            LANE(49)
            LANE(50)
            LANE(51)
            LANE(52)
            LANE(53)
            LANE(54)
            LANE(55)
            LANE(56)
            LANE(57)
            LANE(58)
            LANE(59)
            LANE(60)
            LANE(61)
            LANE(62)
            LANE(63)
            if (meta.count == WORKERS) {
                hdr.agg.flags = 1;
                bitmaps.write(meta.index, 0);
                counts.write(meta.index, 0);
            } else {
                mark_to_drop(standard_metadata);
            }
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

control BenchEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply { }
}

control BenchComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control BenchDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.agg);
        packet.emit(hdr.values);
    }
}

V1Switch(BenchParser(), BenchVerifyChecksum(), BenchIngress(), BenchEgress(),
         BenchComputeChecksum(), BenchDeparser()) main;
