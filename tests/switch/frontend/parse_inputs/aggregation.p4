#include <core.p4>
#include <v1model.p4>

/* In-network aggregation in the style of SwitchML: workers send vectors of 8
 * integers for a (pool slot, version); the switch adds them into register arrays,
 * counts contributions per slot and, once every worker has contributed, multicasts
 * the sum back. Retransmissions are recognised with a per-worker bitmap. */

const bit<16> ETHERTYPE_IPV4 = 16w0x0800;
const bit<8>  IPPROTO_UDP = 17;
const bit<16> AGG_UDP_PORT = 0xBEEF;
const bit<32> NUM_SLOTS = 1024;
const bit<16> ALL_WORKERS_GROUP = 1;

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<32> slot_index_t;
typedef int<32> value_t;

enum bit<8> PacketType {
    CONSUME = 0x00,
    HARVEST = 0x01,
    RETRANSMIT = 0x02
}

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      diffserv;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

header agg_t {
    PacketType   pkt_type;
    bit<8>       worker_id;
    bit<8>       num_workers;
    bit<1>       version;
    bit<7>       _pad;
    slot_index_t slot;
    bit<32>      exponent;
}

header vector_t {
    value_t v0;
    value_t v1;
    value_t v2;
    value_t v3;
    value_t v4;
    value_t v5;
    value_t v6;
    value_t v7;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    agg_t      agg;
    vector_t   vec;
}

struct metadata_t {
    slot_index_t index;
    bit<32>      worker_bit;
    bit<32>      seen_bitmap;
    bit<8>       count;
    bool         first_contribution;
    bool         complete;
    @field_list(1)
    bit<9>       original_port;
}

parser AggParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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
        verify(hdr.ipv4.ihl == 5, error.HeaderTooShort);
        transition select(hdr.ipv4.protocol, hdr.ipv4.frag_offset) {
            (IPPROTO_UDP, 0): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            AGG_UDP_PORT: parse_agg;
            default: accept;
        }
    }
    state parse_agg {
        packet.extract(hdr.agg);
        packet.extract(hdr.vec);
        transition accept;
    }
}

control AggVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control Lane(inout value_t value, in slot_index_t index, in bool first)(bit<32> slots) {
    register<value_t>(slots) sums;

    apply {
        value_t current;
        sums.read(current, index);
        if (first) {
            current = value;
        } else {
            current = current + value;
        }
        sums.write(index, current);
        value = current;
    }
}

control AggIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    register<bit<32>>(NUM_SLOTS * 2) bitmaps;
    register<bit<8>>(NUM_SLOTS * 2) counts;
    counter(NUM_SLOTS, CounterType.packets_and_bytes) slot_packets;
    direct_counter(CounterType.packets) forward_hits;

    Lane(NUM_SLOTS * 2) lane0;
    Lane(NUM_SLOTS * 2) lane1;
    Lane(NUM_SLOTS * 2) lane2;
    Lane(NUM_SLOTS * 2) lane3;
    Lane(NUM_SLOTS * 2) lane4;
    Lane(NUM_SLOTS * 2) lane5;
    Lane(NUM_SLOTS * 2) lane6;
    Lane(NUM_SLOTS * 2) lane7;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
        forward_hits.count();
    }

    @name("ingress.l2_forward")
    table forward_table {
        key = {
            hdr.ethernet.dst_addr : exact @name("dst");
        }
        actions = {
            forward;
            @defaultonly drop;
        }
        counters = forward_hits;
        size = 256;
        const default_action = drop();
    }

    action multicast_result() {
        standard_metadata.mcast_grp = ALL_WORKERS_GROUP;
        hdr.agg.pkt_type = PacketType.HARVEST;
    }

    action reflect() {
        standard_metadata.egress_spec = standard_metadata.ingress_port;
        mac_addr_t tmp = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = tmp;
    }

    apply {
        if (!hdr.agg.isValid()) {
            forward_table.apply();
            exit;
        }
        meta.index = (slot_index_t)hdr.agg.version * NUM_SLOTS + hdr.agg.slot;
        meta.worker_bit = 32w1 << hdr.agg.worker_id;
        slot_packets.count(meta.index);

        bitmaps.read(meta.seen_bitmap, meta.index);
        counts.read(meta.count, meta.index);
        if (meta.seen_bitmap & meta.worker_bit != 0) {
            // a retransmission: answer with the result if it is complete
            meta.complete = meta.count == hdr.agg.num_workers;
            if (meta.complete) {
                reflect();
            } else {
                drop();
            }
            return;
        }
        meta.first_contribution = meta.seen_bitmap == 0;
        meta.seen_bitmap = meta.seen_bitmap | meta.worker_bit;
        meta.count = meta.first_contribution ? 8w1 : meta.count + 1;
        bitmaps.write(meta.index, meta.seen_bitmap);
        counts.write(meta.index, meta.count);

        lane0.apply(hdr.vec.v0, meta.index, meta.first_contribution);
        lane1.apply(hdr.vec.v1, meta.index, meta.first_contribution);
        lane2.apply(hdr.vec.v2, meta.index, meta.first_contribution);
        lane3.apply(hdr.vec.v3, meta.index, meta.first_contribution);
        lane4.apply(hdr.vec.v4, meta.index, meta.first_contribution);
        lane5.apply(hdr.vec.v5, meta.index, meta.first_contribution);
        lane6.apply(hdr.vec.v6, meta.index, meta.first_contribution);
        lane7.apply(hdr.vec.v7, meta.index, meta.first_contribution);

        if (meta.count == hdr.agg.num_workers) {
            // the other version of this slot can be reused now
            bitmaps.write(meta.index ^ NUM_SLOTS, 0);
            counts.write(meta.index ^ NUM_SLOTS, 0);
            multicast_result();
        } else {
            drop();
        }
    }
}

control AggEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_rid != 0) {
            hdr.ipv4.dst_addr = 32w0x0A000000 | (bit<32>)standard_metadata.egress_rid;
            hdr.udp.checksum = 0;
        }
    }
}

control AggComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control AggDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.agg);
        packet.emit(hdr.vec);
    }
}

V1Switch(AggParser(), AggVerifyChecksum(), AggIngress(), AggEgress(),
         AggComputeChecksum(), AggDeparser()) main;
