"""``ina switch`` under hostile and bursty traffic: it keeps running and loses nothing."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from switchproc_helpers import (
    FORWARD,
    MARK,
    Host,
    SwitchProc,
    install_route,
    ip_checksum,
    ipv4_frame,
    seq_of,
    veth_pairs,
)

pytestmark = pytest.mark.slow

MAC1, MAC2 = 0x020000000101, 0x020000000202
NET1, NET2 = 0x0A000100, 0x0A000200


@dataclass
class Rig:
    switch: SwitchProc
    h1: Host
    h2: Host


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    workdir = tmp_path_factory.mktemp("robust")
    with veth_pairs(2) as pairs:
        (a1, b1), (a2, b2) = pairs
        sw = SwitchProc(workdir, [str(FORWARD), "-i", f"1@{a1}", "-i", f"2@{a2}"])
        h1, h2 = Host(b1), Host(b2)
        try:
            sw.wait_ready()
            install_route(sw.address, 1, NET1, 24, MAC1)
            install_route(sw.address, 2, NET2, 24, MAC2)
            yield Rig(sw, h1, h2)
        finally:
            h1.close()
            h2.close()
            assert sw.stop() == 0, sw.stderr


def _garbage(rng: random.Random) -> bytes:
    """A random, truncated or malformed frame that carries no test mark."""
    valid = ipv4_frame(rng.randrange(1 << 16), dst_ip=NET2 + 1, size=rng.choice((60, 200)))
    valid = valid.replace(MARK, b"garbage!")
    kind = rng.randrange(5)
    if kind == 0:  # random bytes of any length
        return rng.randbytes(rng.randrange(1, 300))
    if kind == 1:  # a valid frame cut anywhere
        return valid[:rng.randrange(1, len(valid))]
    if kind == 2:  # an IPv4 header full of random values
        return valid[:14] + rng.randbytes(rng.randrange(0, 60))
    if kind == 3:  # one corrupted byte in the IPv4 header (version, IHL, length, TTL, ...)
        i = rng.randrange(14, 34)
        return valid[:i] + bytes([rng.randrange(256)]) + valid[i + 1:]
    return rng.randbytes(rng.randrange(1000, 1514))  # large random frames


def _send(host: Host, frame: bytes) -> None:
    try:
        host.send(frame)
    except OSError:
        pass  # the kernel refuses some (e.g. shorter than an Ethernet header)


def _check_forwarded(frame: bytes, mac: int) -> None:
    assert frame[0:6] == mac.to_bytes(6, "big")
    assert frame[14 + 8] == 63
    assert ip_checksum(frame[14:34]) == 0


def test_malformed_frames_do_not_stop_forwarding(rig: Rig) -> None:
    rng = random.Random(1234)
    valid_seqs = []
    for i in range(4000):
        _send(rig.h1, _garbage(rng))
        _send(rig.h2, _garbage(rng))
        if i % 40 == 0:  # valid traffic in the middle of the storm, both ways
            seq = len(valid_seqs)
            valid_seqs.append(seq)
            rig.h1.send(ipv4_frame(seq, dst_ip=NET2 + 5))
            rig.h2.send(ipv4_frame(seq, dst_ip=NET1 + 5))
    at2 = rig.h2.receive(want=len(valid_seqs), idle=1.0, timeout=30)
    at1 = rig.h1.receive(want=len(valid_seqs), idle=1.0, timeout=30)
    assert [seq_of(f) for f in at2] == valid_seqs
    assert [seq_of(f) for f in at1] == valid_seqs
    for f in at2:
        _check_forwarded(f, MAC2)
    for f in at1:
        _check_forwarded(f, MAC1)

    # and afterwards, too
    for i in range(100):
        rig.h1.send(ipv4_frame(10_000 + i, dst_ip=NET2 + 6))
    after = rig.h2.receive(want=100)
    assert [seq_of(f) for f in after] == list(range(10_000, 10_100))
    assert rig.switch.proc.poll() is None

    result = rig.switch.cli("--json", "counters")
    assert result.returncode == 0, result.stderr
    rows = {r["port"]: r for r in json.loads(result.stdout)["ports"]}
    for port in (1, 2):
        assert rows[port]["rx_packets"] > 3000
        assert "pipeline_error" not in rows[port]["drops"], rows[port]
        assert "rx_overflow" not in rows[port]["drops"], rows[port]
    assert "Traceback" not in rig.switch.stderr


def test_a_burst_of_256_frames_comes_out_whole(rig: Rig) -> None:
    frames = [ipv4_frame(i, dst_ip=NET2 + 7) for i in range(256)]
    for f in frames:
        rig.h1.send(f)
    got = rig.h2.receive(want=256, idle=1.0, timeout=20)
    assert [seq_of(f) for f in got] == list(range(256))


def test_bursts_in_both_directions_at_once(rig: Rig) -> None:
    for i in range(256):
        rig.h1.send(ipv4_frame(i, dst_ip=NET2 + 8, size=1000))
        rig.h2.send(ipv4_frame(i, dst_ip=NET1 + 8, size=1000))
    at2 = rig.h2.receive(want=256, idle=1.0, timeout=20)
    at1 = rig.h1.receive(want=256, idle=1.0, timeout=20)
    assert [seq_of(f) for f in at2] == list(range(256))
    assert [seq_of(f) for f in at1] == list(range(256))
