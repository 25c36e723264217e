"""End to end: the project's IPv4 router and simple programs."""

from __future__ import annotations

from pathlib import Path

from v1helpers import eth

from switch.engine.hashes import csum16
from switch.engine.runtime import Exact, Lpm

ROOT = Path(__file__).resolve().parents[3]


def ipv4(dst: int, ttl: int = 64, proto: int = 17) -> bytes:
    hdr = bytearray(bytes.fromhex("45000030000140000000") + b"\0\0" + bytes(8))
    hdr[8] = ttl
    hdr[9] = proto
    hdr[12:16] = (0x0A000001).to_bytes(4, "big")
    hdr[16:20] = dst.to_bytes(4, "big")
    hdr[10:12] = csum16(bytes(hdr)).to_bytes(2, "big")
    return bytes(hdr)


def test_ipv4_router():
    from switch.frontend import compile_file
    from switch.v1model import V1Switch

    sw = V1Switch(compile_file(ROOT / "p4" / "ipv4_forward.p4"))
    sw.table_add("ipv4_lpm", [Lpm(0x0A000100, 24)], "forward", [3, 0xAABBCCDDEEFF])
    sw.table_add("ipv4_lpm", [Lpm(0x0A000000, 8)],
                 "forward", [4, 0x111111111111])
    frame = (0x0000000000AA).to_bytes(6, "big") + (0xBB).to_bytes(6, "big") + b"\x08\x00"
    pkt = frame + ipv4(0x0A000105) + b"payload!"
    out = sw.inject(1, pkt)
    assert len(out) == 1
    port, data = out[0]
    assert port == 3
    assert data[0:6] == bytes.fromhex("aabbccddeeff")
    assert data[6:12] == pkt[0:6]
    ip = data[14:34]
    assert ip[8] == 63
    assert csum16(ip) == 0
    assert data[34:] == b"payload!"
    assert sw.inject(1, frame + ipv4(0x0A020304))[0][0] == 4
    assert sw.inject(1, frame + ipv4(0x0B000000)) == []  # default: drop
    assert sw.inject(1, frame + ipv4(0x0A000105, ttl=1)) == []
    assert sw.inject(1, b"\x00" * 12 + b"\x86\xdd" + bytes(40)) == []


def test_forward_without_egress_spec_goes_to_port_0(build):
    sw = build("""
    struct H { ethernet_t e; }
    struct M {}
    parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
        state start { b.extract(h.e); transition accept; }
    }
    control V(inout H h, inout M m) { apply {} }
    control I(inout H h, inout M m, inout standard_metadata_t sm) {
        apply { h.e.src = (bit<48>)sm.ingress_port; }
    }
    control E(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
    control C(inout H h, inout M m) { apply {} }
    control D(packet_out b, in H h) { apply { b.emit(h.e); } }
    V1Switch(P(), V(), I(), E(), C(), D()) main;
    """)
    out = sw.inject(7, eth() + b"xyz")
    assert out == [(0, eth(src=7) + b"xyz")]


def test_exact_table_with_hit_miss_and_switch(build):
    sw = build("""
    struct H { ethernet_t e; }
    struct M { bit<8> tag; }
    parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
        state start { b.extract(h.e); transition accept; }
    }
    control V(inout H h, inout M m) { apply {} }
    control I(inout H h, inout M m, inout standard_metadata_t sm) {
        action set_port(bit<9> p) { sm.egress_spec = p; }
        action tag(bit<8> v) { m.tag = v; }
        table t {
            key = { h.e.dst: exact; }
            actions = { set_port; tag; NoAction; }
            default_action = NoAction();
        }
        table known {
            key = { h.e.dst: exact; }
            actions = { NoAction; }
        }
        apply {
            sm.egress_spec = 9;
            switch (t.apply().action_run) {
                set_port: { h.e.etype = 1; }
                tag: { h.e.etype = (bit<16>)m.tag; }
                default: { h.e.etype = 0xffff; }
            }
            if (!known.apply().hit) { h.e.src = 0; }
        }
    }
    control E(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
    control C(inout H h, inout M m) { apply {} }
    control D(packet_out b, in H h) { apply { b.emit(h.e); } }
    V1Switch(P(), V(), I(), E(), C(), D()) main;
    """)
    sw.table_add("t", [Exact(1)], "set_port", [5])
    sw.table_add("t", {"h.e.dst": Exact(2)}, "tag", {"v": 0x42})
    for dst in (1, 2):
        sw.table_add("known", [Exact(dst)], "NoAction", [])
    assert sw.inject(0, eth(dst=1)) == [(5, eth(dst=1, etype=1))]
    assert sw.inject(0, eth(dst=2)) == [(9, eth(dst=2, etype=0x42))]
    assert sw.inject(0, eth(dst=3)) == [(9, eth(dst=3, src=0, etype=0xFFFF))]
    [(h, spec)] = [e for e in sw.table_entries("t") if e[1].action.action.endswith("tag")]
    assert spec.action.args == (0x42,)
    assert sw.table_find("t", [Exact(2)]) == h
    sw.table_set_default("t", "set_port", [8])
    assert sw.inject(0, eth(dst=3)) == [(8, eth(dst=3, src=0, etype=1))]
