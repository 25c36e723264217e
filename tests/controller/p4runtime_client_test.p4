/* The P4Runtime client tests' program: one table per match kind, a counter, registers,
 * controller headers. A frame from port 2 with ether type 0x9000 goes to the CPU. */
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

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
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

header ipv4_t {
    bit<8>  ver_ihl;
    bit<8>  tos;
    bit<16> len;
    bit<32> id_flags;
    bit<8>  ttl;
    bit<8>  proto;
    bit<16> csum;
    bit<32> src;
    bit<32> dst;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
}

struct meta_t {}

parser CtlParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etype) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control CtlVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control CtlIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) port_packets;
    register<bit<32>>(4) last_len;
    register<int<16>>(2) signed_cells;
    direct_counter(CounterType.packets_and_bytes) l2_hits;

    action drop() {
        mark_to_drop(sm);
    }
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action route(bit<9> port, bit<48> dst_mac) {
        sm.egress_spec = port;
        hdr.ethernet.dst = dst_mac;
    }
    action to_cpu() {
        sm.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = sm.ingress_port;
    }
    action flood(bit<16> group) {
        sm.mcast_grp = group;
    }

    table l2 {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; flood; drop; NoAction; }
        counters = l2_hits;
        default_action = NoAction();
    }
    table routes {
        key = { hdr.ipv4.dst: lpm; }
        actions = { route; drop; }
        default_action = drop();
    }
    table acl {
        key = {
            sm.ingress_port: ternary;
            hdr.ethernet.etype: range;
            hdr.ethernet.src: optional;
        }
        actions = { to_cpu; drop; NoAction; }
        default_action = NoAction();
    }

    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        port_packets.count((bit<32>)sm.ingress_port);
        last_len.write(0, sm.packet_length);
        if (hdr.ipv4.isValid()) {
            routes.apply();
        } else {
            l2.apply();
        }
        acl.apply();
    }
}

control CtlEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CtlCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control CtlDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(CtlParser(), CtlVerify(), CtlIngress(), CtlEgress(), CtlCompute(), CtlDeparser())
    main;
