// The program of the P4Runtime differential test (test_p4rt_vs_bmv2.py): one of
// everything P4Runtime controls on v1model, and a path back to the controller for every
// packet-out, so that each data-plane effect is visible as PacketIns.
//
// A packet-out with egress_port != 0 goes straight to that port; with 0, it goes
// through the tables as a packet from the CPU port. Every packet that leaves on the CPU
// port carries packet_in: its ingress port, whether its EtherType is in the value set,
// whether the signed register read back a negative value, and a tag (the action's tag,
// or the multicast replica id).

#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<1> special;
    bit<1> negative;
    bit<5> tag;
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

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
}

struct meta_t {
    learn_t learn;
    bit<8>  color;
    bit<1>  special;
    bit<1>  negative;
    bit<5>  tag;
}

parser DiffParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    value_set<bit<16>>(4) special_types;

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
            special_types: mark_special;
            default: accept;
        }
    }
    state mark_special {
        meta.special = 1;
        transition accept;
    }
}

control DiffVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DiffIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) reg32;
    register<int<8>>(1) sreg;
    counter(8, CounterType.packets_and_bytes) etype_counter;
    meter(4, MeterType.bytes) etype_meter;
    direct_counter(CounterType.packets_and_bytes) fwd_hits;
    direct_meter<bit<8>>(MeterType.packets) acl_meter;

    action drop() {
        mark_to_drop(sm);
    }
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action to_cpu(bit<5> tag) {
        sm.egress_spec = CPU_PORT;
        meta.tag = tag;
    }
    action set_mcast(bit<16> grp) {
        sm.mcast_grp = grp;
    }
    action clone_to(bit<32> session, bit<5> tag) {
        clone(CloneType.I2E, session);
        sm.egress_spec = CPU_PORT;
        meta.tag = tag;
    }
    action learn() {
        meta.learn.src = hdr.ethernet.src;
        meta.learn.port = sm.ingress_port;
        digest<learn_t>(1, meta.learn);
    }
    action count_etype() {
        etype_counter.count((bit<32>)hdr.ethernet.etype[2:0]);
        etype_meter.execute_meter((bit<32>)hdr.ethernet.etype[1:0], meta.color);
    }
    action acl_mark() {
        acl_meter.read(meta.color);
    }

    table fwd {
        key = {
            hdr.ethernet.dst: exact;
        }
        actions = {
            forward;
            to_cpu;
            set_mcast;
            clone_to;
            drop;
            NoAction;
        }
        counters = fwd_hits;
        default_action = NoAction();
        size = 4;
    }
    table routes {
        key = {
            hdr.ethernet.dst: lpm;
        }
        actions = {
            forward;
            to_cpu;
            set_mcast;
            @defaultonly drop;
            NoAction;
        }
        default_action = NoAction();
    }
    table acl {
        key = {
            hdr.ethernet.src: ternary;
            hdr.ethernet.etype: range;
            hdr.ethernet.dst: optional;
        }
        actions = {
            acl_mark;
            @tableonly drop;
            NoAction;
        }
        meters = acl_meter;
        const default_action = NoAction();
    }
    table smac {
        key = {
            hdr.ethernet.src: exact;
        }
        actions = {
            learn;
            NoAction;
        }
        default_action = learn();
    }
    table consts {
        key = {
            hdr.ethernet.etype: exact;
        }
        actions = {
            drop;
            NoAction;
        }
        const entries = {
            0x0806: drop();
        }
    }
    table stats {
        actions = {
            count_etype;
            NoAction;
        }
        default_action = NoAction();
    }
    action_selector(HashAlgorithm.crc16, 32w16, 32w16) sel;
    table ecmp {
        key = { hdr.ethernet.dst: exact; hdr.ethernet.src: selector; }
        actions = { to_cpu; NoAction; }
        implementation = sel;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            bit<9> port = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            if (port != 0) {
                sm.egress_spec = port;
                exit;
            }
        }
        if (hdr.ethernet.etype == 0x5157) {
            int<8> value;
            sreg.write(0, (int<8>)hdr.ethernet.dst[7:0]);
            sreg.read(value, 0);
            if (value < 0) {
                meta.negative = 1;
            }
            sm.egress_spec = CPU_PORT;
            exit;
        }
        if (hdr.ethernet.etype == 0x9999) {
            ecmp.apply();
            exit;
        }
        stats.apply();
        smac.apply();
        if (!fwd.apply().hit) {
            routes.apply();
        }
        acl.apply();
        consts.apply();
        if (meta.special == 1) {
            reg32.write(0, 1);
        }
    }
}

control DiffEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in.special = meta.special;
            hdr.packet_in.negative = meta.negative;
            hdr.packet_in.tag = meta.tag | (bit<5>)sm.egress_rid;
        }
    }
}

control DiffCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DiffDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(DiffParser(), DiffVerify(), DiffIngress(), DiffEgress(), DiffCompute(),
         DiffDeparser()) main;
