"""The benchmark programs do what they claim, and the bench tool runs."""

from __future__ import annotations

import re
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def agg_packet(worker: int, slot: int, values: list[int], version: int = 0) -> bytes:
    eth = bytes(6) + bytes(5) + b"\x01" + b"\x08\x00"
    ip = bytearray(20)
    ip[0] = 0x45
    ip[9] = 17
    udp = struct.pack(">HHHH", 1234, 48879, 8 + 8 + 256, 0)
    agg = struct.pack(">HHBBH", 1, slot, version, 0, worker)
    return eth + bytes(ip) + udp + agg + struct.pack(">64i", *values)


def test_switchml_like_aggregates():
    from switch.frontend import compile_file
    from switch.v1model import V1Switch

    sw = V1Switch(compile_file(ROOT / "p4" / "bench" / "switchml_like.p4"))
    vals = [[(w + 1) * (i - 32) for i in range(64)] for w in range(4)]
    for w in range(3):
        assert sw.inject(5, agg_packet(w, 3, vals[w])) == []
    assert sw.inject(5, agg_packet(1, 3, vals[1])) == []  # duplicate: ignored
    out = sw.inject(6, agg_packet(3, 3, vals[3]))
    assert len(out) == 1
    port, data = out[0]
    assert port == 6
    got = struct.unpack(">64i", data[-256:])
    assert list(got) == [sum(v[i] for v in vals) for i in range(64)]
    assert data[-256 - 8 + 5] == 1  # flags
    # the slot was reset: a new round starts from scratch
    assert sw.register_read("bitmaps", 6) == 0
    # signed wrap-around
    big = [2**31 - 1] * 64
    for w in range(3):
        sw.inject(5, agg_packet(w, 4, big))
    out = sw.inject(5, agg_packet(3, 4, [1] * 64))
    want = ((3 * (2**31 - 1) + 1 + 2**31) % 2**32) - 2**31
    assert struct.unpack(">64i", out[0][1][-256:])[0] == want


def test_bench_tool_runs(capsys):
    from ina.bench_engine import bench_engine

    assert bench_engine(str(ROOT / "p4" / "ipv4_forward.p4"), None, 300) == 0
    out = capsys.readouterr().out
    # the primed match-all route forwards every packet
    assert re.search(r"; 300 packets in [\d.]+ s: [\d,]+ packets/s \(300 packets out; ", out), out
