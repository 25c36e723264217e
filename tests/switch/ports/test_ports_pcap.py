"""The pcap writer, checked with scapy's reader."""

from __future__ import annotations

import struct
from pathlib import Path

from scapy.layers.l2 import Ether
from scapy.utils import rdpcap

from switch.ports import PcapWriter


def frame(n: int, size: int = 60) -> bytes:
    body = bytes.fromhex("02aabbccddee02112233445588b5") + n.to_bytes(4, "big")
    return body + bytes(size - len(body))


def test_header_only_file_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "empty.pcap"
    writer = PcapWriter(path)
    assert len(rdpcap(str(path))) == 0  # readable before close
    writer.close()
    magic, major, minor, _zone, _sigfigs, snaplen, linktype = struct.unpack(
        "<IHHiIII", path.read_bytes()[:24]
    )
    assert (magic, major, minor, linktype, snaplen) == (0xA1B2C3D4, 2, 4, 1, 262144)


def test_frames_and_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "x.pcap"
    stamps = [1_700_000_000.000001, 1_700_000_000.5, 1_700_000_001.999999]
    with PcapWriter(path) as writer:
        for i, ts in enumerate(stamps):
            writer.write(frame(i), ts)
        writer.write(bytearray(frame(9)), 1_700_000_002.0)
        writer.flush()
        assert not writer.dirty
        packets = rdpcap(str(path))  # visible after flush, file still open
    assert len(packets) == 4
    assert [bytes(p) for p in packets] == [frame(0), frame(1), frame(2), frame(9)]
    assert all(isinstance(p, Ether) for p in packets)
    for p, ts in zip(packets, stamps, strict=False):
        assert abs(float(p.time) - ts) < 2e-6


def test_snaplen_truncates(tmp_path: Path) -> None:
    path = tmp_path / "snap.pcap"
    with PcapWriter(path, snaplen=20) as writer:
        writer.write(frame(1, size=100), 1.0)
    (packet,) = rdpcap(str(path))
    assert bytes(packet) == frame(1, size=100)[:20]
    assert packet.wirelen == 100
