/* In-network aggregation (a SwitchML-like all-reduce over a tree of switches) plus
 * IPv4 forwarding, for v1model.
 *
 * Workers send chunks of INA_K int32 values to UDP port INA_UDP_PORT; each chunk uses
 * one (slot, version) cell of the job's region of the register arrays. This switch
 * adds the contributions of its children (workers or child switches) and, once all of
 * them have contributed, either multicasts the aggregate as a RESULT to its children
 * (the root of the job's tree) or sends it upstream to its parent as one contribution.
 *
 * Control plane (the table, action and parameter names are a contract):
 *  - ina_job (job_id, ingress_port) -> ina_child(child_index, fan_in, is_root,
 *    parent_port, mcast_grp, region_base, epoch): one entry per child port of the job,
 *    and on a non-root switch one for the parent port too (same parameters; its
 *    child_index is not used): RESULTs are accepted only on that entry's port,
 *    contributions never. child_index is the child's bit in the cell bitmap (< 32);
 *    fan_in is how many children there are; mcast_grp replicates once to every child
 *    port; epoch tags the cells the job writes (see below). A miss drops.
 *  - ina_result_rewrite (egress_port) -> set_dst(dmac, dip, sip): a RESULT leaving on
 *    that port goes to that worker (Ethernet/IPv4 destination) from the aggregator
 *    address sip.
 *  - ipv4_lpm: as in ipv4_forward.p4 (but IPv4 packets with options are dropped), plus
 *    ECMP: ecmp_group(group, size) hashes the packet's 5-tuple (IPv4 source and
 *    destination, protocol, TCP or UDP source and destination ports; ports 0 for
 *    other protocols and for fragments) with crc16 to an index in [0, size), and
 *  - ecmp_nhop (ecmp_group, ecmp_index) -> forward(port, dst_mac): the group's member
 *    at that index (a miss drops; size 0 picks index 0, as size 1 does). Aggregation
 *    packets never reach ipv4_lpm: they follow the job's tree.
 *  - ipv4_lpm -> to_cpu(): the packet goes to the controller (a PacketIn naming its
 *    ingress port): the controller routes each switch's aggregator address there, so
 *    the hosts' answers to its ICMP echo probes reach it.
 * Controller packets (P4Runtime packet I/O, the CPU port INA_CPU_PORT): a PacketOut
 * carries packet_out.egress_port and leaves on that port as it is (the controller's
 * liveness probes); an LLDP frame (EtherType 0x88CC, a probe from the switch at the
 * other end of a link) goes to the controller with packet_in.ingress_port. Nothing
 * else reaches or comes from the CPU port.
 * Loss recovery (hosts/protocol.py): a contribution may name the cell of its sender's
 * previous transmission; when the sender's bit is missing there, the switch answers
 * with a NACK naming that cell: the header alone back to the sender instead of
 * dropping the packet, or the NACK flag on the RESULT the sender gets. Every multicast
 * RESULT names the cell the job completed before it (ina_last_cell, per region), so a
 * worker that lost that RESULT asks for it again at once. Every cell remembers the
 * chunk it holds (ina_round): a late copy of an earlier chunk is dropped, never added.
 * A region of S slots starting at region_base uses cells (region_base + s) * 2 + v.
 * Every cell remembers the epoch of the job that last wrote it (ina_epoch), and a cell
 * of another epoch counts as empty: so a region needs no zeroing before a new job uses
 * it (P4Runtime servers need not implement register writes; BMv2's does not), as long
 * as the controller never gives two jobs the same non-zero epoch while the pipeline
 * runs. The switch cannot tell where a region ends: a worker's slot must stay below
 * the job's S.
 *
 * Defines: INA_K (values per packet: 8, 16, 32, 64, 128 or 256; default 64),
 * INA_SLOTS (slots in the register arrays, shared by all jobs; default 256) and
 * INA_CPU_PORT (the switch's CPU port, its --cpu-port; default 255). */
#include <core.p4>
#include <v1model.p4>
#include "include/aggregation_headers.p4"

#ifndef INA_SLOTS
#define INA_SLOTS 256
#endif
#define INA_CELLS (INA_SLOTS * 2)

#ifndef INA_CPU_PORT
#define INA_CPU_PORT 255
#endif

const bit<16> ETHERTYPE_LLDP = 0x88CC;

/* In front of a frame the switch sends to the controller (a PacketIn's metadata). */
@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> pad;
}

/* In front of a frame the controller sends (a PacketOut's metadata). */
@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> pad;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
    udp_t        udp;
    ina_t        ina;
    ina_values_t values;
}

/* The matched ina_job entry's parameters. */
struct metadata_t {
    bit<16> child_index;
    bit<16> fan_in;
    bit<1>  is_root;
    bit<9>  parent_port;
    bit<16> mcast_grp;
    bit<32> region_base;
    bit<32> epoch;
    bit<1>  nack;        /* the completing sender's copy of the RESULT carries a NACK */
    bit<8>  nack_flags;  /* ... naming this cell (its flags and slot) */
    bit<8>  nack_slot;
    /* ECMP of ordinary IPv4: the flow's TCP or UDP ports (0 without them), the group
     * that ipv4_lpm chose and the member the hash picked in it. */
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
    bit<16> ecmp_group;
    bit<16> ecmp_index;
}

parser InaParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            INA_CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (5, IPPROTO_UDP): parse_udp;
            (5, IPPROTO_TCP): parse_tcp;
            default: accept;
        }
    }
    /* TCP: only its ports, for ECMP, read without extracting (the TCP header stays
     * payload, so the deparser has nothing to emit and the bytes go out unchanged). A
     * segment too short for them leaves them 0. */
    state parse_tcp {
        tcp_ports_t ports = packet.lookahead<tcp_ports_t>();
        meta.l4_src_port = ports.src_port;
        meta.l4_dst_port = ports.dst_port;
        transition accept;
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            INA_UDP_PORT: parse_ina;
            default: accept;
        }
    }
    state parse_ina {
        packet.extract(hdr.ina);
        /* A packet too short for its values leaves hdr.values invalid (BMv2 does not
         * drop on parser errors); the ingress drops it. */
        packet.extract(hdr.values);
        transition accept;
    }
}

control InaVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

/* One register array per value lane, and the three statements the ingress applies to
 * every lane of a cell: the first writer replaces, later ones add (int32 wraps), and a
 * retransmission of a complete cell reads the aggregate back. */
#define INA_DECLARE_LANE(i) register<int<32>>(INA_CELLS) ina_lane_##i;
#define INA_REPLACE_LANE(i) ina_lane_##i.write(cell, hdr.values.v##i);
#define INA_ADD_LANE(i) \
    ina_lane_##i.read(lane, cell); \
    lane = lane + hdr.values.v##i; \
    ina_lane_##i.write(cell, lane); \
    hdr.values.v##i = lane;
#define INA_READ_LANE(i) ina_lane_##i.read(hdr.values.v##i, cell);

control InaIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    /* Per cell: the epoch of the job that wrote it, the round (the chunk it holds),
     * the children that have contributed (bit child_index), how many of them
     * (== fan_in: complete; kept until the cell's next round, because children that
     * move on to the other version clear their bit here), and the max exponent,
     * stored as exponent + 128 (an unsigned
     * offset: BMv2 reads a register<int<8>> back as unsigned, so the register holds
     * bit<8> values whose unsigned order is the exponents' order). */
    register<bit<32>>(INA_CELLS) ina_epoch;
    register<bit<32>>(INA_CELLS) ina_round;
    register<bit<32>>(INA_CELLS) ina_bitmap;
    register<bit<32>>(INA_CELLS) ina_count;
    register<bit<8>>(INA_CELLS) ina_exponent;
    INA_FOR_EACH_LANE(INA_DECLARE_LANE)
    /* Per region (index region_base): the cell the job completed last, as
     * slot * 2 + version, and the job's epoch when it did (another epoch: none). */
    register<bit<32>>(INA_SLOTS) ina_last_cell;
    register<bit<32>>(INA_SLOTS) ina_last_epoch;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /* To the controller, naming the port the packet came in on. */
    action to_cpu() {
        standard_metadata.egress_spec = INA_CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        hdr.packet_in.pad = 0;
    }

    /* Back to the sender (the egress strips the values): its transmission to the
     * named cell did not arrive. */
    action ina_nack() {
        hdr.ina.flags = (hdr.ina.flags & ~INA_FLAG_RESULT) | INA_FLAG_NACK;
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }

    action forward(bit<9> port, mac_addr_t dst_mac) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    /* One of size equal-cost next hops, by the flow's 5-tuple: every packet of a
     * flow takes the same path. */
    action ecmp_group(bit<16> group, bit<16> size) {
        meta.ecmp_group = group;
        hash(meta.ecmp_index, HashAlgorithm.crc16, 16w0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               meta.l4_src_port, meta.l4_dst_port },
             size);
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { forward; ecmp_group; to_cpu; drop; }
        default_action = drop();
        size = 1024;
    }

    table ecmp_nhop {
        key = {
            meta.ecmp_group: exact;
            meta.ecmp_index: exact;
        }
        actions = { forward; drop; }
        default_action = drop();
        size = 1024;
    }

    action ina_child(bit<16> child_index, bit<16> fan_in, bit<1> is_root,
                     bit<9> parent_port, bit<16> mcast_grp, bit<32> region_base,
                     bit<32> epoch) {
        meta.child_index = child_index;
        meta.fan_in = fan_in;
        meta.is_root = is_root;
        meta.parent_port = parent_port;
        meta.mcast_grp = mcast_grp;
        meta.region_base = region_base;
        meta.epoch = epoch;
    }

    table ina_job {
        key = {
            hdr.ina.job_id: exact;
            standard_metadata.ingress_port: exact;
        }
        actions = { ina_child; drop; }
        default_action = drop();
        size = 1024;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            /* From the controller: out of the port it names, unchanged. */
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            return;
        }
        if (hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_LLDP) {
            to_cpu();  /* a liveness probe from the switch at the link's other end */
            return;
        }
        /* Not IPv4, or IPv4 with options (whose checksum this program could not
         * update): dropped. */
        if (!hdr.ipv4.isValid() || hdr.ipv4.ihl != 5) {
            drop();
            return;
        }
        if (!hdr.ina.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                drop();
                return;
            }
            if (hdr.udp.isValid()) {
                meta.l4_src_port = hdr.udp.src_port;
                meta.l4_dst_port = hdr.udp.dst_port;
            }
            /* A later fragment has no ports, the first has its datagram's: fragments
             * hash without ports, so all of a datagram's take one path. */
            if (hdr.ipv4.frag_offset != 0 || (hdr.ipv4.flags & 1) != 0) {
                meta.l4_src_port = 0;
                meta.l4_dst_port = 0;
            }
            switch (ipv4_lpm.apply().action_run) {
                ecmp_group: { ecmp_nhop.apply(); }
            }
            return;
        }

        /* An aggregation packet. */
        if (!hdr.values.isValid() || hdr.ina.version > 1) {
            drop();
            return;
        }
        if (!ina_job.apply().hit) {
            drop();  /* whatever the default action is: jobs are isolated */
            return;
        }
        hdr.udp.checksum = 0;  /* the payload changes; 0 means "no checksum" */
        bool from_parent = meta.is_root == 0
            && standard_metadata.ingress_port == meta.parent_port;
        if ((hdr.ina.flags & INA_FLAG_RESULT) != 0) {
            /* A RESULT comes down the tree: only from the parent, to every child. */
            if (from_parent) {
                standard_metadata.mcast_grp = meta.mcast_grp;
            } else {
                drop();
            }
            return;
        }
        if (from_parent || meta.child_index >= 32) {
            drop();
            return;
        }

        /* A contribution from child meta.child_index (< 32: the cast loses nothing). */
        bit<32> me = (bit<32>)1 << (bit<8>)meta.child_index;
        bit<32> cell = ((meta.region_base + (bit<32>)hdr.ina.slot) << 1)
            | (bit<32>)hdr.ina.version;
        if (cell >= INA_CELLS) {
            drop();
            return;
        }
        /* The cell the sender names as its previous transmission's: is its bit there
         * (read before this packet clears its bit in the other version)? */
        bool missing = false;
        if ((hdr.ina.flags & INA_FLAG_NAMED) != 0) {
            bit<32> named = ((meta.region_base + (bit<32>)hdr.ina.named_slot) << 1)
                | (bit<32>)((hdr.ina.flags & INA_FLAG_NAMED_VERSION) >> 3);
            if (named != cell && named < INA_CELLS) {
                bit<32> named_epoch;
                bit<32> named_bitmap;
                ina_epoch.read(named_epoch, named);
                ina_bitmap.read(named_bitmap, named);
                missing = named_epoch != meta.epoch || (named_bitmap & me) == 0;
            }
        }
        bit<32> epoch;
        bit<32> bitmap;
        bit<32> count;
        bit<32> round;
        bit<8> exponent;
        int<32> lane;
        ina_epoch.read(epoch, cell);
        ina_bitmap.read(bitmap, cell);
        ina_count.read(count, cell);
        ina_round.read(round, cell);
        ina_exponent.read(exponent, cell);
        bit<32> other_epoch;
        bit<32> other_bitmap;
        bit<32> other_round;
        ina_epoch.read(other_epoch, cell ^ 1);
        ina_bitmap.read(other_bitmap, cell ^ 1);
        ina_round.read(other_round, cell ^ 1);
        /* Chunks are serial numbers: x is later than the packet's chunk when
         * x - chunk is in [1, 2^31). A contribution of a chunk earlier than the
         * cell's round, or than its sender's contribution in the other version, is
         * stale (a link that reorders delivers some): dropped, lest it be added to a
         * round it is not part of. */
        bit<32> cell_ahead = round - hdr.ina.chunk;
        bit<32> sender_ahead = other_round - hdr.ina.chunk;
        if ((epoch == meta.epoch && cell_ahead != 0 && cell_ahead < 0x80000000)
                || (other_epoch == meta.epoch && (other_bitmap & me) != 0
                    && sender_ahead != 0 && sender_ahead < 0x80000000)) {
            drop();
            return;
        }
        if (epoch != meta.epoch || round != hdr.ina.chunk) {
            /* Left by an earlier job, or by the slot's chunk before: empty now. */
            bitmap = 0;
            count = 0;
        }
        bit<8> my_exponent = ((bit<8>)hdr.ina.exponent) ^ 0x80;
        bool fresh = (bitmap & me) == 0;
        if (fresh) {
            /* Having sent this version, the child has the other version's result:
             * its bit there goes (a cell of an earlier job keeps its epoch, so it
             * stays empty for this one). */
            ina_bitmap.write(cell ^ 1, other_bitmap & ~me);
            ina_bitmap.write(cell, bitmap | me);
            ina_epoch.write(cell, meta.epoch);
            ina_round.write(cell, hdr.ina.chunk);
            if (bitmap == 0) {
                count = 1;
                INA_FOR_EACH_LANE(INA_REPLACE_LANE)
            } else {
                count = count + 1;
                if (exponent > my_exponent) {
                    my_exponent = exponent;
                    hdr.ina.exponent = (int<8>)(exponent ^ 0x80);
                }
                INA_FOR_EACH_LANE(INA_ADD_LANE)
            }
            ina_count.write(cell, count);
            ina_exponent.write(cell, my_exponent);
            if (count != (bit<32>)meta.fan_in) {
                /* absorbed */
                if (missing) {
                    ina_nack();
                } else {
                    drop();
                }
                return;
            }
        } else {
            /* A retransmission: answered only once the cell is complete. */
            if (count != (bit<32>)meta.fan_in) {
                if (missing) {
                    ina_nack();
                } else {
                    drop();
                }
                return;
            }
            hdr.ina.exponent = (int<8>)(exponent ^ 0x80);
            INA_FOR_EACH_LANE(INA_READ_LANE)
        }

        /* The cell is complete and the packet carries its aggregate. */
        if (meta.is_root == 1) {
            if (fresh) {
                /* To every child, naming the cell the job completed before this one;
                 * the sender's copy carries the NACK instead, if any (egress). */
                meta.nack = (bit<1>)missing;
                meta.nack_flags = hdr.ina.flags & INA_NAME_FLAGS;
                meta.nack_slot = hdr.ina.named_slot;
                bit<32> last_cell;
                bit<32> last_epoch;
                ina_last_cell.read(last_cell, meta.region_base);
                ina_last_epoch.read(last_epoch, meta.region_base);
                hdr.ina.flags = (hdr.ina.flags & ~INA_NAME_FLAGS) | INA_FLAG_RESULT;
                hdr.ina.named_slot = 0;
                if (last_epoch == meta.epoch && last_cell < 512) {
                    hdr.ina.flags = hdr.ina.flags | INA_FLAG_NAMED
                        | ((bit<8>)(last_cell & 1) << 3);
                    hdr.ina.named_slot = (bit<8>)(last_cell >> 1);
                }
                ina_last_cell.write(meta.region_base,
                                    ((bit<32>)hdr.ina.slot << 1) | (bit<32>)hdr.ina.version);
                ina_last_epoch.write(meta.region_base, meta.epoch);
                standard_metadata.mcast_grp = meta.mcast_grp;
            } else {
                /* Back to the retransmitter, with the NACK if its previous one is
                 * missing. */
                if (missing) {
                    hdr.ina.flags = hdr.ina.flags | INA_FLAG_RESULT | INA_FLAG_NACK;
                } else {
                    hdr.ina.flags = (hdr.ina.flags & ~INA_NAME_FLAGS) | INA_FLAG_RESULT;
                    hdr.ina.named_slot = 0;
                }
                standard_metadata.egress_spec = standard_metadata.ingress_port;
            }
        } else {
            /* Upstream as one contribution of this switch, naming nothing; a
             * retransmission re-sends it, and the parent either absorbs it or answers
             * with the RESULT. (A missing transmission of the sender is left to its
             * timer here.) */
            hdr.ina.flags = hdr.ina.flags & ~(INA_FLAG_NACK | INA_NAME_FLAGS);
            hdr.ina.named_slot = 0;
            standard_metadata.egress_spec = meta.parent_port;
        }
    }
}

control InaEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    /* The Ethernet source becomes the address the frame was sent to (the switch's MAC
     * that the workers address), as forward() does. */
    action set_dst(mac_addr_t dmac, ipv4_addr_t dip, ipv4_addr_t sip) {
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.dst_addr = dip;
        hdr.ipv4.src_addr = sip;
    }

    table ina_result_rewrite {
        key = { standard_metadata.egress_port: exact; }
        actions = { set_dst; NoAction; }
        default_action = NoAction();
        size = 512;
    }

    apply {
        if (hdr.ina.isValid()
                && (hdr.ina.flags & (INA_FLAG_RESULT | INA_FLAG_NACK)) != 0) {
            if (meta.nack == 1
                    && standard_metadata.egress_port == standard_metadata.ingress_port) {
                /* The sender's copy of the RESULT its packet completed: its previous
                 * transmission did not arrive. */
                hdr.ina.flags = (hdr.ina.flags & ~INA_NAME_FLAGS) | INA_FLAG_NACK
                    | meta.nack_flags;
                hdr.ina.named_slot = meta.nack_slot;
            }
            if ((hdr.ina.flags & INA_FLAG_RESULT) == 0) {
                /* A NACK alone is the header alone. */
                hdr.values.setInvalid();
                hdr.ipv4.total_len = hdr.ipv4.total_len - INA_K * 4;
                hdr.udp.length = hdr.udp.length - INA_K * 4;
            }
            ina_result_rewrite.apply();
        }
    }
}

control InaComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control InaDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.ina);
        packet.emit(hdr.values);
    }
}

V1Switch(InaParser(), InaVerifyChecksum(), InaIngress(), InaEgress(), InaComputeChecksum(),
         InaDeparser()) main;
