#include <core.p4>
#include <v1model.p4>

// Exercises the syntax the parser must cover: stacks, select masks and ranges, value
// sets, const entries with priorities, switch statements, header unions,
// serializable enums, generic externs and functions, tuples and annotations.

const bit<16> TYPE_VLAN = 16w0x8100;
const bit<16> TYPE_IPV4 = 0x0800;
const bit<16> TYPE_IPV6 = 0x86dd;
const int     MAX_DEPTH = 2;

typedef bit<48> mac_t;
@p4runtime_translation("p4.org/psa/v1/PortId_t", 32)
type bit<9> port_id_t;
typedef tuple<bit<8>, bool> pair_t;

enum bit<8> Kind {
    PLAIN = 1,
    TAGGED = 0b10,
    TUNNEL = 0o17,
}

enum Color { Red, Green, Blue }

error { BadVersion, TooManyTags }

match_kind { my_kind }

header ethernet_t {
    mac_t   dst;
    mac_t   src;
    bit<16> ether_type;
}

header vlan_t {
    bit<3>  pcp;
    bit     cfi;
    bit<12> vid;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>   version;
    bit<4>   ihl;
    bit<8>   tos;
    bit<16>  total_len;
    bit<32>  ids;
    bit<8>   ttl;
    bit<8>   protocol;
    bit<16>  checksum;
    bit<32>  src;
    bit<32>  dst;
    varbit<320> options;
}

header ipv6_t {
    bit<4>   version;
    bit<8>   traffic_class;
    bit<20>  flow_label;
    bit<16>  payload_len;
    bit<8>   next_hdr;
    bit<8>   hop_limit;
    bit<128> src;
    bit<128> dst;
}

header_union ip_t {
    ipv4_t v4;
    ipv6_t v6;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

struct headers_t {
    ethernet_t  eth;
    vlan_t[2]   vlans;
    ip_t        ip;
    packet_in_t cpu;
}

struct meta_t {
    bit<8>  depth;
    Kind    kind;
    Color   color;
    bool    flag;
    int<8>  delta;
    pair_t  pair;
    @field_list(1, 2)
    bit<32> hash;
    error   err;
}

extern Accumulator<T> {
    Accumulator(bit<32> size);
    Accumulator(bit<32> size, T initial);
    T add(in bit<32> index, in T value);
    @pure
    void get<R>(out R result, in bit<32> index);
}

extern Hook<T> {
    Hook();
    abstract T combine(in T a, in T b);
}

extern bit<16> ones_complement_sum<D>(in D data);
extern OpaqueThing;

bit<8> max8(in bit<8> a, in bit<8> b) {
    if (a > b) {
        return a;
    }
    return b;
}

T pick<T>(in bool c, in T a, in T b) {
    return c ? a : b;
}

parser FeatureParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                     inout standard_metadata_t sm) {
    value_set<bit<16>>(4) custom_types;
    value_set<tuple<bit<16>, bit<8>>>(2) pairs;
    bit<8> scratch = 0;

    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) {
            TYPE_VLAN &&& 0xEFFF: parse_vlan;
            TYPE_IPV4: parse_ipv4;
            16w0x86DD: parse_ipv6;
            0x0600 .. 0x06FF: accept;
            custom_types: parse_custom;
            default: accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlans.next);
        meta.depth = meta.depth + 1;
        transition select(hdr.vlans.last.ether_type, meta.depth) {
            (TYPE_VLAN, 1): parse_vlan;
            (_, 2): too_deep;
            (TYPE_IPV4 &&& 0xFFFF, _): parse_ipv4;
            default: accept;
        }
    }

    state too_deep {
        verify(false, error.TooManyTags);
        transition reject;
    }

    state parse_ipv4 {
        pkt.extract(hdr.ip.v4, (bit<32>)(hdr.ip.v4.ihl - 5) * 32);
        verify(hdr.ip.v4.version == 4w4, error.BadVersion);
        transition select(hdr.ip.v4.protocol) {
            0 .. 5: accept;
            8w6: accept;
            (default): accept;
        }
    }

    state parse_ipv6 {
        pkt.extract<ipv6_t>(hdr.ip.v6);
        transition accept;
    }

    state parse_custom {
        bit<32> peek = pkt.lookahead<bit<32>>();
        if (peek[31:24] == 0) {
            pkt.advance(32);
        }
        meta.kind = (Kind)peek[7:0];
        transition accept;
    }
}

control FeatureVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control FeatureIngress(inout headers_t hdr, inout meta_t meta,
                       inout standard_metadata_t sm) {
    Accumulator<bit<32>>(1024) acc;
    register<bit<32>>(32w16) regs;
    direct_meter<bit<2>>(MeterType.bytes) tagged_meter;
    bit<2> color;

    action set_port(port_id_t port) {
        sm.egress_spec = (bit<9>)port;
    }

    action tag(bit<12> vid, bit<3> pcp) {
        hdr.vlans.push_front(1);
        hdr.vlans[0].setValid();
        hdr.vlans[0] = { pcp, 0, vid, hdr.eth.ether_type };
        hdr.eth.ether_type = TYPE_VLAN;
        tagged_meter.read(color);
    }

    @name(".drop_it")
    action drop() {
        mark_to_drop(sm);
    }

    action set_kind(Kind k) {
        meta.kind = k;
    }

    @name("ingress.acl")
    table acl {
        key = {
            hdr.eth.ether_type : ternary @name("type");
            hdr.ip.v4.src      : lpm;
            hdr.ip.v4.protocol : range;
            meta.flag          : optional;
        }
        actions = {
            set_port;
            @tableonly tag;
            @defaultonly drop;
            .NoAction;
        }
        entries = {
            priority = 40: (TYPE_IPV4, 32w0x0A000000 &&& 32w0xFF000000, 6 .. 17, true) :
                set_port((port_id_t)1);
            const priority = 30: (0x0800 &&& 0xFFFF, _, _, false) : tag(10, 3);
            (_, _, 1 .. 1, _) : set_port((port_id_t)2) @priority(20);
            (default, default, default, default) : .NoAction();
        }
        default_action = NoAction();
        size = 64;
        meters = tagged_meter;
        support_timeout = false;
        @name("acl_profile") implementation = action_profile(32w128);
    }

    table classify {
        key = { meta.kind : ternary; }
        actions = { set_kind; NoAction; }
        entries = {
            priority = 10: Kind.PLAIN : set_kind(Kind.TAGGED);
            const priority = (5 + 5): Kind.TAGGED : set_kind(Kind.PLAIN);
            Kind.TUNNEL : NoAction();
        }
        largest_priority_wins = false;
        priority_delta = 10;
    }

    apply {
        bit<32> x = 32w0x10;
        bit<32> y;
        int<8> s = 8s3;
        const bit<8> limit = 8w255;

        if (hdr.cpu.isValid()) {
            hdr.cpu.setInvalid();
        } else if (hdr.ip.v4.isValid()) {
            y = x + x * 2 |+| 3;
            y = (x & 32w0xF0) >> 4 << 1;
            y = x ++ 16w1 == 48w0 ? 32w1 : 2;
        } else
            y = 0;

        switch (acl.apply().action_run) {
            set_port: { exit; }
            tag:
            drop: {
                meta.color = Color.Green;
            }
            default: { }
        }
        switch (meta.kind) {
            Kind.PLAIN: { regs.write(0, x); }
            default: { }
        }
        if (classify.apply().hit) {
            meta.depth = max8(meta.depth, limit);
        }
        meta.hash = acc.add(index = x, value = 32w1);
        acc.get<bit<32>>(y, 0);
        regs.read(result = y, index = 3);
        hash(meta.hash, HashAlgorithm.crc32, 32w0, { hdr.ip.v4.src, hdr.ip.v4.dst },
             32w65536);
        meta.pair = { 8w1, true };
        meta.delta = (int<8>)-s;
        meta.err = error.NoError;
        meta.flag = pick(meta.flag, true, false) && !meta.flag || x[3:0] != 0;
        @atomic {
            regs.read(y, 1);
            regs.write(1, y + 1);
        }
        clone_preserving_field_list(CloneType.I2E, 32w5, 1);
        random<bit<32>>(y, 32w0, 32w100);
        regs.read(_, 32w2);
    }
}

control FeatureEgress(inout headers_t hdr, inout meta_t meta,
                      inout standard_metadata_t sm) {
    apply {
        hdr.ip.v4.ttl = hdr.ip.v4.ttl |-| 1;
        hdr.ip.v4.tos[1:0] = 2w3;
        meta.hash = ones_complement_sum({ hdr.ip.v4.src, hdr.ip.v4.dst }) ++ 16w0;
    }
}

control FeatureCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control FeatureDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(FeatureParser(), FeatureVerify(), FeatureIngress(), FeatureEgress(),
         FeatureCompute(), FeatureDeparser()) main;
