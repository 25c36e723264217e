/* Parser constructs: multi-key select with masks, ranges and value sets, header
 * stacks with next/last/lastIndex, lookahead, advance, verify, user errors and a
 * sub-parser. */
#include <core.p4>
#include <v1model.p4>

error { BadVersion, TooManyLabels }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header ipv4_options_t { varbit<320> options; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }

struct mpls_peek_t { bit<20> label; bit<3> tc; bit<1> bos; }

struct headers {
    ethernet_t     ethernet;
    mpls_t[4]      mpls;
    ipv4_t         ipv4;
    ipv4_options_t options;
    udp_t          udp;
}

struct metadata {
    bit<32> depth;
    bit<16> l4_port;
}

parser UdpParser(packet_in packet, inout headers hdr, inout metadata meta) {
    state start {
        packet.extract(hdr.udp);
        meta.l4_port = hdr.udp.dport;
        transition accept;
    }
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    value_set<bit<16>>(4) tunnel_types;
    value_set<mpls_peek_t>(8) special_labels;
    UdpParser() udp_parser;

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType, hdr.ethernet.dst[47:40]) {
            (0x8847, _): parse_mpls;
            (0x0800 &&& 0xffff, 0x00 .. 0x7f): parse_ipv4;
            (0x0800, _): parse_ipv4;
            default: check_tunnel;
        }
    }
    state check_tunnel {
        transition select(hdr.ethernet.etherType) {
            tunnel_types: skip_tunnel;
            default: accept;
        }
    }
    state skip_tunnel {
        packet.advance(32);
        transition accept;
    }
    state parse_mpls {
        verify(hdr.mpls.lastIndex < 3 || !hdr.mpls[0].isValid(), error.TooManyLabels);
        packet.extract(hdr.mpls.next);
        meta.depth = hdr.mpls.lastIndex + 1;
        transition select(packet.lookahead<mpls_peek_t>().bos, hdr.mpls.last.bos) {
            (_, 1): parse_ipv4;
            default: parse_mpls;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.BadVersion);
        packet.extract(hdr.options, (bit<32>)(hdr.ipv4.ihl - 5) * 32);
        transition select(hdr.ipv4.proto) {
            17: parse_udp;
            0 .. 16: accept;
            default: reject;
        }
    }
    state parse_udp {
        udp_parser.apply(packet, hdr, meta);
        transition select(hdr.mpls.last.label, hdr.mpls.last.tc, hdr.mpls.last.bos) {
            special_labels: accept;
            default: accept;
        }
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.BadVersion || sm.parser_error == error.PacketTooShort) {
            mark_to_drop(sm);
        }
        if (hdr.mpls[1].isValid()) {
            hdr.mpls.pop_front(1);
        } else {
            hdr.mpls.push_front(2);
            hdr.mpls[0].setValid();
            hdr.mpls[0] = { 100, 0, 1, 64 };
            hdr.mpls[1].setInvalid();
        }
        meta.depth = hdr.mpls.size;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }

control D(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.mpls);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.options);
        packet.emit(hdr.udp);
    }
}

V1Switch(MyParser(), VC(), I(), E(), CC(), D()) main;
