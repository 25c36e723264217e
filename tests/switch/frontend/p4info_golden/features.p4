/* The P4Info features p4c handles for v1model: registers, counters, meters, a direct
 * counter, an action selector, a digest with a serializable enum, packet-in/packet-out
 * headers, a value set, ternary/range/optional/selector keys, @id, @name, @defaultonly,
 * const entries, support_timeout, a sub-control, and an unused table and action (both
 * left out). */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    @padding bit<7> _pad;
}

header ethernet_t {
    mac_t   dst;
    mac_t   src;
    bit<16> ether_type;
}

enum bit<8> Reason {
    LEARN = 1,
    MOVE = 2
}

struct learn_t {
    mac_t  src;
    bit<9> port;
    Reason reason;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

struct meta_t {
    learn_t learn;
    bit<8>  color;
    bit<16> flow;
}

parser FeatureParser(packet_in packet, out headers_t hdr, inout meta_t meta,
                     inout standard_metadata_t standard_metadata) {
    value_set<bit<16>>(4) tunnel_types;

    state start {
        transition select(standard_metadata.ingress_port) {
            255: parse_packet_out;
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
            tunnel_types: accept;
            default: accept;
        }
    }
}

control NoVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control Acl(inout headers_t hdr, inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets) acl_hits;

    action deny() {
        mark_to_drop(standard_metadata);
    }

    action permit() { }

    table acl {
        key = {
            standard_metadata.ingress_port: ternary @name("port");
            hdr.ethernet.ether_type: range;
            hdr.ethernet.src: optional;
        }
        actions = {
            deny;
            permit;
            @defaultonly NoAction;
        }
        counters = acl_hits;
        const default_action = NoAction();
    }

    apply {
        acl.apply();
    }
}

control FeatureIngress(inout headers_t hdr, inout meta_t meta,
                       inout standard_metadata_t standard_metadata) {
    register<bit<32>>(256) flow_bytes;
    counter(64, CounterType.packets_and_bytes) port_packets;
    meter(32, MeterType.bytes) port_rate;
    @max_group_size(16) action_selector(HashAlgorithm.crc16, 128, 14) ecmp_selector;
    Acl() acl_stage;

    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    action send_to_cpu() {
        standard_metadata.egress_spec = 255;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
    }

    action learn() {
        meta.learn.src = hdr.ethernet.src;
        meta.learn.port = standard_metadata.ingress_port;
        meta.learn.reason = Reason.LEARN;
        digest<learn_t>(1, meta.learn);
    }

    @id(0x01000101) action count_flow(bit<8> flow) {
        port_packets.count((bit<32>)standard_metadata.ingress_port);
        flow_bytes.write((bit<32>)flow, standard_metadata.packet_length);
        port_rate.execute_meter((bit<32>)flow, meta.color);
    }

    @name("unused_action") action never() { }

    @name("mac_table") table dmac {
        key = {
            hdr.ethernet.dst: exact;
        }
        actions = {
            set_port;
            send_to_cpu;
        }
        default_action = send_to_cpu();
        size = 4096;
    }

    table smac {
        key = {
            hdr.ethernet.src: exact;
        }
        actions = {
            learn;
            NoAction;
        }
        support_timeout = true;
    }

    table ecmp {
        key = {
            hdr.ethernet.dst: lpm;
            meta.flow: selector;
        }
        actions = {
            set_port;
        }
        implementation = ecmp_selector;
    }

    @id(5) table flows {
        key = {
            meta.flow: exact;
        }
        actions = {
            count_flow;
        }
        const entries = {
            1: count_flow(1);
            2: count_flow(2);
        }
    }

    table not_applied {
        key = {
            meta.flow: exact;
        }
        actions = {
            never;
        }
    }

    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        smac.apply();
        dmac.apply();
        ecmp.apply();
        flows.apply();
        acl_stage.apply(hdr, standard_metadata);
    }
}

control FeatureEgress(inout headers_t hdr, inout meta_t meta,
                      inout standard_metadata_t standard_metadata) {
    apply { }
}

control NoCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control FeatureDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(FeatureParser(), NoVerify(), FeatureIngress(), FeatureEgress(), NoCompute(),
         FeatureDeparser()) main;
