/* Names and aliases: actions with the same name in ingress and egress, a top-level
 * action used by both controls, a global @name, and tables without a default action
 * (p4c adds "@defaultonly NoAction"). Parts follow p4c's basic_routing-bmv2.p4 test, so
 * ingress.bd, ingress.set_vrf, ingress.on_miss, egress.on_miss and ingress.ipv4_fib_lpm
 * have the ids p4c gives them there. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<8>  ttl;
    bit<8>  protocol;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct ingress_metadata_t {
    bit<12> vrf;
    bit<16> bd;
    bit<16> nexthop_index;
}

struct metadata {
    ingress_metadata_t ingress_metadata;
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

action common() { }

parser ParserImpl(packet_in packet, out headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x800: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control ingress(inout headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    action set_vrf(bit<12> vrf) {
        meta.ingress_metadata.vrf = vrf;
    }

    action on_miss() { }

    action fib_hit_nexthop(bit<16> nexthop_index) {
        meta.ingress_metadata.nexthop_index = nexthop_index;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    @name(".shared_drop") action drop_it() {
        mark_to_drop(standard_metadata);
    }

    table bd {
        key = {
            meta.ingress_metadata.bd: exact;
        }
        actions = {
            set_vrf;
        }
        size = 65536;
    }

    table ipv4_fib_lpm {
        key = {
            meta.ingress_metadata.vrf: exact;
            hdr.ipv4.dstAddr: lpm;
        }
        actions = {
            on_miss;
            fib_hit_nexthop;
            drop_it;
            common;
        }
        size = 16384;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            bd.apply();
            ipv4_fib_lpm.apply();
        }
    }
}

control egress(inout headers hdr, inout metadata meta,
               inout standard_metadata_t standard_metadata) {
    action on_miss() { }

    action rewrite_mac(bit<48> smac) {
        hdr.ethernet.srcAddr = smac;
    }

    table rewrite {
        key = {
            meta.ingress_metadata.nexthop_index: exact;
        }
        actions = {
            on_miss;
            rewrite_mac;
            common;
        }
        default_action = common();
    }

    apply {
        rewrite.apply();
    }
}

control DeparserImpl(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

control verifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control computeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

V1Switch(ParserImpl(), verifyChecksum(), ingress(), egress(), computeChecksum(),
         DeparserImpl()) main;
