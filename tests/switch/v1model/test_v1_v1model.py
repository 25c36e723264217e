"""v1model behaviour: multicast, clone, resubmit, recirculate, registers, counters,
meters, checksums, digests, exit/return, assert."""

from __future__ import annotations

from v1helpers import eth, program

from switch.engine.runtime import Exact


def test_multicast(build):
    sw = build(program(
        ingress="apply { sm.mcast_grp = (bit<16>)h.e.etype; }",
        egress="""apply {
            h.e.src = (bit<48>)sm.egress_rid;
            h.e.dst = (bit<48>)sm.instance_type;
        }""",
    ))
    sw.mc_group_set(5, [(1, 10), (2, 20), (3, 30)])
    out = sw.inject(0, eth(etype=5))
    assert [p for p, _ in out] == [1, 2, 3]
    for (_p, d), rid in zip(out, (10, 20, 30), strict=True):
        assert int.from_bytes(d[6:12], "big") == rid
        assert int.from_bytes(d[0:6], "big") == 5  # replication
    assert sw.inject(0, eth(etype=6)) == []
    assert sw.mc_groups() == {5: [(1, 10), (2, 20), (3, 30)]}


def test_mark_to_drop_clears_multicast(build):
    sw = build(program(ingress="""apply {
        sm.mcast_grp = 5;
        if (h.e.etype == 1) { mark_to_drop(sm); }
        if (h.e.etype == 2) { sm.egress_spec = 511; }
    }"""))
    sw.mc_group_set(5, [(1, 0)])
    assert sw.inject(0, eth(etype=1)) == []
    assert len(sw.inject(0, eth(etype=2))) == 1  # multicast wins over egress_spec


CLONE = program(
    meta="struct M { @field_list(1) bit<32> x; bit<32> y; }",
    ingress="""apply {
        m.x = 7;
        m.y = 8;
        sm.egress_spec = 1;
        h.e.dst = 0x77;
        if (h.e.etype == 1) { clone(CloneType.I2E, 4); }
        if (h.e.etype == 2) { clone_preserving_field_list(CloneType.I2E, 4, 1); }
    }""",
    egress="""apply {
        h.e.src = (bit<48>)(sm.instance_type ++ m.x[7:0] ++ m.y[7:0]);
        if (h.e.etype == 3 && sm.instance_type == 0) { clone(CloneType.E2E, 4); }
    }""",
)


def test_clone(build):
    sw = build(CLONE)
    sw.clone_session_set(4, [(9, 0)])
    out = sw.inject(0, eth(etype=1))
    assert [p for p, _ in out] == [9, 1]
    clone, orig = out[0][1], out[1][1]
    assert int.from_bytes(clone[0:6], "big") == 1  # re-parsed original packet
    assert int.from_bytes(clone[6:12], "big") == (1 << 16)  # I2E, metadata reset
    assert int.from_bytes(orig[0:6], "big") == 0x77
    assert int.from_bytes(orig[6:12], "big") == (7 << 8) | 8
    out = sw.inject(0, eth(etype=2))
    assert int.from_bytes(out[0][1][6:12], "big") == (1 << 16) | (7 << 8)
    out = sw.inject(0, eth(etype=3))
    assert [p for p, _ in out] == [1, 9]
    e2e = out[1][1]
    assert int.from_bytes(e2e[0:6], "big") == 0x77  # egress clone keeps the headers
    assert int.from_bytes(e2e[6:12], "big") == (2 << 16)
    sw.clone_session_set(4, [(9, 0)], truncate=10)
    out = sw.inject(0, eth(etype=1))
    assert len(out[0][1]) == 10
    sw.clone_session_delete(4)
    assert [p for p, _ in sw.inject(0, eth(etype=1))] == [1]


RESUBMIT = program(
    meta="struct M { @field_list(1) bit<32> x; bit<32> y; }",
    ingress="""apply {
        sm.egress_spec = 1;
        if (sm.instance_type == 0) {
            m.x = 5; m.y = 6;
            if (h.e.etype == 1) { resubmit_preserving_field_list(1); }
            h.e.dst = 0x99;
        } else {
            h.e.src = (bit<48>)(sm.instance_type ++ m.x[7:0] ++ m.y[7:0]);
        }
    }""",
    egress="""apply {
        // egress sees instance_type 0 for a recirculated packet too (as in BMv2)
        if (h.e.etype == 2 && m.x == 5) {
            m.x = 3;
            recirculate_preserving_field_list(1);
        }
    }""",
)


def test_resubmit_and_recirculate(build):
    sw = build(RESUBMIT)
    out = sw.inject(0, eth(etype=1))
    assert len(out) == 1
    d = out[0][1]
    assert int.from_bytes(d[0:6], "big") == 1  # the original packet came back
    assert int.from_bytes(d[6:12], "big") == (6 << 16) | (5 << 8)
    out = sw.inject(0, eth(etype=2))
    assert len(out) == 1
    d = out[0][1]
    assert int.from_bytes(d[0:6], "big") == 0x99  # the deparsed packet came back
    assert int.from_bytes(d[6:12], "big") == (4 << 16) | (3 << 8)


def test_resubmit_loop_is_bounded(build):
    sw = build(program(ingress="apply { resubmit_preserving_field_list(0); }"))
    assert sw.inject(0, eth()) == []
    assert any("passes" in m for m in sw.log)


REGS = program(
    decls="",
    ingress="""
    register<bit<32>>(4) r;
    register<int<16>>(2) s;
    counter(4, CounterType.packets_and_bytes) c;
    apply {
        sm.egress_spec = 1;
        bit<32> i = (bit<32>)h.e.etype;
        bit<32> v;
        r.read(v, i);
        v = v + 1;
        r.write(i, v);
        int<16> w;
        s.read(w, 0);
        s.write(0, w - 1);
        c.count(i);
        h.e.src = (bit<48>)v;
    }""",
)


def test_registers_and_counters(build):
    sw = build(REGS)
    for _ in range(3):
        out = sw.inject(0, eth(etype=2))
    assert int.from_bytes(out[0][1][6:12], "big") == 3
    assert sw.register_read("r", 2) == 3
    assert sw.register_read("s", 0) == -3
    assert sw.counter_read("c", 2) == (3, 3 * 14)
    # out of range: read gives 0, write ignored, count ignored
    out = sw.inject(0, eth(etype=9))
    assert int.from_bytes(out[0][1][6:12], "big") == 1
    sw.register_write("r", 1, 41)
    assert int.from_bytes(sw.inject(0, eth(etype=1))[0][1][6:12], "big") == 42
    sw.register_reset("r")
    assert sw.register_read("r", 1) == 0
    assert sw.register_size("r") == 4
    sw.counter_reset("c")
    assert sw.counter_read("c", 2) == (0, 0)


METER = program(
    ingress="""
    meter(2, MeterType.packets) mt;
    direct_counter(CounterType.packets_and_bytes) dc;
    action set(bit<9> p) { sm.egress_spec = p; dc.count(); }
    table t { key = { h.e.etype: exact; } actions = { set; NoAction; } counters = dc; }
    apply {
        bit<2> colour;
        mt.execute_meter(0, colour);
        t.apply();
        h.e.src = (bit<48>)colour;
    }""",
)


def test_meters_and_direct_counters(build):
    now = [0]
    sw = build(METER, meter_clock=lambda: now[0])
    hnd = sw.table_add("t", [Exact(1)], "set", [3])
    colours = [int.from_bytes(sw.inject(0, eth(etype=1))[0][1][6:12], "big") for _ in range(4)]
    assert colours == [0, 0, 0, 0]  # unconfigured: green
    sw.meter_set_rates("mt", 0, [(0.001, 1), (0.002, 2)])
    colours = [int.from_bytes(sw.inject(0, eth(etype=1))[0][1][6:12], "big") for _ in range(3)]
    assert colours == [0, 1, 2]
    assert sw.direct_counter_read("t", hnd) == (7, 7 * 14)
    sw.inject(0, eth(etype=2))  # miss: not counted
    assert sw.direct_counter_read("t", hnd)[0] == 7


CHECKSUM = program(
    headers="""
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
struct H { ethernet_t e; ipv4_t ip; }
""",
    parser="state start { b.extract(h.e); b.extract(h.ip); transition accept; }",
    verify="""verify_checksum(h.ip.isValid(), { h.ip.version, h.ip.ihl, h.ip.tos, h.ip.len,
        h.ip.id, h.ip.flags, h.ip.frag, h.ip.ttl, h.ip.proto, h.ip.src, h.ip.dst },
        h.ip.csum, HashAlgorithm.csum16);""",
    ingress="""apply {
        sm.egress_spec = 1;
        h.e.src = (bit<48>)sm.checksum_error;
        h.ip.ttl = h.ip.ttl - 1;
    }""",
    compute="""update_checksum(h.ip.isValid(), { h.ip.version, h.ip.ihl, h.ip.tos, h.ip.len,
        h.ip.id, h.ip.flags, h.ip.frag, h.ip.ttl, h.ip.proto, h.ip.src, h.ip.dst },
        h.ip.csum, HashAlgorithm.csum16);""",
    deparser="b.emit(h.e); b.emit(h.ip);",
)


def test_checksums(build):
    from switch.engine.hashes import csum16

    sw = build(CHECKSUM)
    ip = bytearray(bytes.fromhex("450000730000400040110000c0a80001c0a800c7"))
    ip[10:12] = csum16(bytes(ip)).to_bytes(2, "big")
    d = sw.inject(0, eth() + bytes(ip))[0][1]
    assert d[6:12] == bytes(6)
    assert d[14 + 8] == 0x3F
    assert csum16(d[14:34]) == 0
    ip[10] ^= 1
    d = sw.inject(0, eth() + bytes(ip))[0][1]
    assert d[11] == 1  # checksum_error
    assert csum16(d[14:34]) == 0  # recomputed anyway


HASH = program(
    headers="header r_t { bit<16> crc16; bit<32> crc32; bit<16> csum; bit<16> ident; "
            "bit<8> modulo; }\nstruct H { ethernet_t e; r_t r; }",
    parser="state start { b.extract(h.e); b.extract(h.r); transition accept; }",
    ingress="""apply {
        sm.egress_spec = 1;
        hash(h.r.crc16, HashAlgorithm.crc16, 16w0, { h.e.dst }, 32w65536);
        hash(h.r.crc32, HashAlgorithm.crc32, 32w0, { h.e.dst }, 64w0x100000000);
        hash(h.r.csum, HashAlgorithm.csum16, 16w0, { h.e.dst, h.e.src }, 32w65536);
        hash(h.r.ident, HashAlgorithm.identity, 16w0, { h.e.etype }, 32w65536);
        hash(h.r.modulo, HashAlgorithm.identity, 8w10, { h.e.etype }, 16w7);
        digest<ethernet_t>(1, h.e);
        log_msg("etype={}", {h.e.etype});
    }""",
    deparser="b.emit(h.e); b.emit(h.r);",
)


def test_hash_digest_log(build):
    import zlib

    from switch.engine.hashes import crc16, csum16

    sw = build(HASH)
    e = eth(dst=0x010203040506, src=0x0A0B0C0D0E0F, etype=0x1234)
    r = sw.inject(0, e + bytes(11))[0][1][14:]
    dst = e[0:6]
    assert int.from_bytes(r[0:2], "big") == crc16(dst)
    assert int.from_bytes(r[2:6], "big") == zlib.crc32(dst)
    assert int.from_bytes(r[6:8], "big") == csum16(e[0:12])
    assert int.from_bytes(r[8:10], "big") == 0x1234
    assert r[10] == 10 + 0x1234 % 7
    assert list(sw.digests) == [("ethernet_t", (1, 0x010203040506, 0x0A0B0C0D0E0F, 0x1234))] \
        or list(sw.digests)[0][1][-3:] == (0x010203040506, 0x0A0B0C0D0E0F, 0x1234)
    assert "etype=4660" in sw.log


CONTROL_FLOW = program(
    ingress="""
    action a1() {
        h.e.dst = 1;
        if (h.e.etype == 1) { return; }
        h.e.dst = 2;
    }
    apply {
        sm.egress_spec = 1;
        a1();
        if (h.e.etype == 2) { exit; }
        h.e.src = 3;
        assert(h.e.etype != 7);
    }""",
    egress="apply { h.e.etype = h.e.etype + 0x100; }",
)


def test_exit_return_assert(build):
    sw = build(CONTROL_FLOW)
    assert sw.inject(0, eth(src=9, etype=1))[0][1] == eth(dst=1, src=3, etype=0x101)
    assert sw.inject(0, eth(src=9, etype=2))[0][1] == eth(dst=2, src=9, etype=0x102)
    assert sw.inject(0, eth(src=9, etype=7)) == []
    assert any("assert" in m for m in sw.log)


def test_trace(build):
    lines: list[str] = []
    sw = build(CONTROL_FLOW, trace=lines.append)
    sw.inject(0, eth(etype=1))
    text = "\n".join(lines)
    assert "test.p4(" in text
    assert "parser state start" in text
    assert "a1" in text
