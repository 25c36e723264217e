/* Tables: every match kind, const entries with and without priorities, default
 * actions with arguments, action profiles and selectors, direct counters and meters,
 * @name annotations, switch on action_run and hit/miss. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<32> a;
    bit<16> b;
    bit<8>  c;
    bit<8>  d;
}

struct headers { h_t h; }

struct metadata {
    bit<32> color;
    bit<16> nexthop;
    bool    flag;
}

parser P(packet_in packet, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) t_counter;
    direct_meter<bit<32>>(MeterType.bytes) t_meter;
    action_profile(128) shared_profile;
    meter(16, MeterType.packets) port_meter;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    action set_nexthop(bit<16> nh, bit<8> tag) {
        meta.nexthop = nh;
        hdr.h.c = tag;
    }
    action count_it() {
        t_counter.count();
    }
    action meter_it() {
        t_meter.read(meta.color);
    }
    action set_flag(inout bool flag) { flag = true; }
    @name(".global_drop") action drop() { mark_to_drop(sm); }

    table exact_t {
        key = {
            hdr.h.a: exact;
            hdr.h.b: exact @name("b_field");
        }
        actions = { set_port; drop; }
        default_action = set_port(1);
        const entries = {
            (1, 2): set_port(3);
            (0x0a000001, 0x00ff): drop();
        }
    }

    table ternary_t {
        key = {
            hdr.h.a: ternary;
            hdr.h.c: range;
            hdr.h.d: optional;
            hdr.h.isValid(): exact;
        }
        actions = { set_nexthop; NoAction; }
        const default_action = NoAction();
        const entries = {
            (0x0a000000 &&& 0xff000000, 1 .. 10, 5, true): set_nexthop(1, 2);
            (_, _, _, true): set_nexthop(nh = 7, tag = 8);
            (default, 20 .. 30, default, false): NoAction();
        }
        size = 64;
    }

    table lpm_t {
        key = { hdr.h.a: lpm; }
        actions = { set_nexthop; }
        default_action = set_nexthop(0, 0);
        entries = {
            0x0a000000 &&& 0xff000000 : set_nexthop(10, 1);
            0x0a0a0000 &&& 0xffff0000 : set_nexthop(20, 2);
        }
    }

    table prio_t {
        key = { hdr.h.b: ternary; }
        actions = { set_port; }
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            priority = 5: 0x1 &&& 0xf : set_port(1);
            0x2 &&& 0xf : set_port(2);
            priority = 100: 0x3 &&& 0xf : set_port(3);
        }
    }

    table counted_t {
        key = { hdr.h.c: exact; meta.nexthop[7:0]: exact; }
        actions = { count_it; meter_it; set_flag(meta.flag); }
        counters = t_counter;
        meters = t_meter;
        support_timeout = true;
    }

    table profiled_t {
        key = { hdr.h.a: exact; }
        actions = { set_port; drop; }
        implementation = shared_profile;
    }

    table selected_t {
        key = {
            hdr.h.a: exact;
            hdr.h.b: selector;
            hdr.h.c: selector;
        }
        actions = { set_port; }
        @name("ecmp_selector")
        implementation = action_selector(HashAlgorithm.crc16, 32w64, 32w14);
    }

    @name("renamed_table") table plain_t {
        actions = { drop; }
    }

    apply {
        switch (exact_t.apply().action_run) {
            set_port: {
                ternary_t.apply();
            }
            drop: { }
        }
        if (lpm_t.apply().hit) {
            prio_t.apply();
        }
        if (!counted_t.apply().miss) {
            profiled_t.apply();
        }
        selected_t.apply();
        plain_t.apply();
        port_meter.execute_meter<bit<32>>(0, meta.color);
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out packet, in headers hdr) { apply { packet.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
