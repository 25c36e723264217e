"""The aggregation format against golden bytes: the hot-path codec, the scapy layer
and the frame builder, in both directions."""

from __future__ import annotations

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from hosts import wire
from hosts.frame import Endpoints, build_frame, parse_frame
from hosts.scapy_layer import InaAgg
from hosts.wire import AggHeader, WireError

HEADER = AggHeader(job_id=0x0102, slot=0x0304, version=1, flags=wire.FLAG_RESULT,
                   exponent=-2, chunk=0x0A0B0C0D)
VALUES = [1, -1, 2**31 - 1, -(2**31)]
GOLDEN = bytes.fromhex(
    "0102" "0304" "01" "01" "fe" "00" "0a0b0c0d"
    "00000001" "ffffffff" "7fffffff" "80000000")

# Worker 10.0.0.1 (00:00:00:00:00:01) -> aggregator 10.0.0.254 (02:00:00:00:00:fe),
# job 5, slot 2, version 0, exponent 3, chunk 66, K = 8 values 0..7.
FRAME_PAYLOAD = bytes.fromhex("0005000200000300" "00000042") + b"".join(
    v.to_bytes(4, "big") for v in range(8))
GOLDEN_FRAME = bytes.fromhex(
    "0200000000fe" "000000000001" "0800"
    "4500" "0048" "0000" "4000" "40" "11" "25a7" "0a000001" "0a0000fe"
    "beef" "beef" "0034" "0000") + FRAME_PAYLOAD


def test_constants() -> None:
    assert wire.INA_UDP_PORT == 48879 == 0xBEEF
    assert wire.HEADER_SIZE == 12
    assert wire.FLAG_RESULT == 0x01
    assert (wire.FLAG_NACK, wire.FLAG_NAMED, wire.FLAG_NAMED_VERSION) == (0x02, 0x04, 0x08)


# A NACK alone: job 0x0102, the packet that triggered it (slot 7, version 0, exponent -3,
# chunk 0x47), naming cell (slot 200, version 1): flags NACK | NAMED | NAMED_VERSION.
NACK = AggHeader(job_id=0x0102, slot=7, version=0, flags=0x0E, exponent=-3, chunk=0x47,
                 named_slot=200)
GOLDEN_NACK = bytes.fromhex("0102" "0007" "00" "0e" "fd" "c8" "00000047")


def test_names_and_nack_match_golden_bytes() -> None:
    assert wire.encode_header(NACK) == GOLDEN_NACK
    h, values = wire.decode(GOLDEN_NACK)
    assert h == NACK and values.size == 0
    assert h.is_nack and not h.is_result and h.named == (200, 1)
    assert wire.decode_header(GOLDEN).named is None
    assert wire.naming(200, 1) == (0x0C, 200) and wire.naming(3, 0) == (0x04, 3)
    assert wire.naming(256, 0) == (0, 0)  # too large a slot to name
    payload = wire.encode_fast(0x0102, 7, 0, -3, 0x47, np.zeros(0, np.int32), *wire.naming(9, 1))
    assert payload == bytes.fromhex("0102" "0007" "00" "0c" "fd" "09" "00000047")


def test_scapy_layer_reads_and_writes_the_names() -> None:
    pkt = InaAgg(GOLDEN_NACK)
    assert pkt.flags.NACK and pkt.flags.NAMED and pkt.flags.NAMED_VERSION
    assert not pkt.flags.RESULT
    assert (pkt.named_slot, pkt.values) == (200, [])
    assert bytes(InaAgg(job_id=0x0102, slot=7, flags="NACK+NAMED+NAMED_VERSION",
                        exponent=-3, named_slot=200, chunk=0x47)) == GOLDEN_NACK


def test_encode_matches_golden_bytes() -> None:
    assert wire.encode(HEADER, VALUES) == GOLDEN


def test_decode_matches_golden_bytes() -> None:
    h, values = wire.decode(GOLDEN, k=4)
    assert h == HEADER and h.is_result
    assert values.dtype == np.int32
    assert values.tolist() == VALUES


def test_encode_fast_is_a_contribution() -> None:
    payload = wire.encode_fast(0x0102, 0x0304, 1, -2, 0x0A0B0C0D,
                               np.array(VALUES, dtype=np.int32))
    assert payload == GOLDEN[:5] + b"\x00" + GOLDEN[6:]
    # the chunk field holds the chunk index modulo 2**32
    assert wire.encode_fast(0, 0, 0, 0, 2**32 + 7, np.zeros(0, np.int32))[8:] == \
        bytes.fromhex("00000007")


@pytest.mark.parametrize(("field", "value"), [
    ("job_id", 65536), ("slot", -1), ("version", 2), ("flags", 256),
    ("exponent", 128), ("exponent", -129), ("chunk", 2**32), ("named_slot", 256)])
def test_encode_rejects_out_of_range_fields(field: str, value: int) -> None:
    fields = dict(job_id=1, slot=0, version=0)
    fields[field] = value
    with pytest.raises(WireError, match=f"{field}={value}"):
        wire.encode(AggHeader(**fields), [0])


def test_encode_rejects_values_that_do_not_fit() -> None:
    with pytest.raises(WireError, match="int32"):
        wire.encode(AggHeader(1, 0, 0), [2**31])
    with pytest.raises(WireError, match="integers"):
        wire.encode(AggHeader(1, 0, 0), [0.5])


def test_decode_rejects_malformed_payloads() -> None:
    with pytest.raises(WireError, match="shorter than the 12-byte header"):
        wire.decode(GOLDEN[:11])
    with pytest.raises(WireError, match="multiple of 4"):
        wire.decode(GOLDEN + b"\x00")
    with pytest.raises(WireError, match="expected K=8"):
        wire.decode(GOLDEN, k=8)


def test_scapy_layer_builds_golden_bytes() -> None:
    pkt = InaAgg(job_id=0x0102, slot=0x0304, version=1, flags="RESULT", exponent=-2,
                 chunk=0x0A0B0C0D, values=VALUES)
    assert bytes(pkt) == GOLDEN


def test_scapy_layer_dissects_golden_bytes() -> None:
    pkt = InaAgg(GOLDEN)
    assert (pkt.job_id, pkt.slot, pkt.version, pkt.exponent, pkt.chunk) == \
        (0x0102, 0x0304, 1, -2, 0x0A0B0C0D)
    assert pkt.flags.RESULT
    assert pkt.values == VALUES


def test_frame_builder_matches_golden_frame() -> None:
    ep = Endpoints.make("00:00:00:00:00:01", "02:00:00:00:00:fe", "10.0.0.1", "10.0.0.254")
    assert build_frame(ep, FRAME_PAYLOAD) == GOLDEN_FRAME


def test_frame_parser_reads_golden_frame() -> None:
    f = parse_frame(GOLDEN_FRAME)
    assert f is not None and f.ip_checksum_ok
    assert (f.src_ip, f.dst_ip) == (bytes([10, 0, 0, 1]), bytes([10, 0, 0, 254]))
    assert (f.src_port, f.dst_port, f.ttl) == (48879, 48879, 64)
    assert f.payload == FRAME_PAYLOAD
    assert parse_frame(GOLDEN_FRAME[:30]) is None
    assert parse_frame(GOLDEN_FRAME[:12] + b"\x86\xdd" + GOLDEN_FRAME[14:]) is None


def test_scapy_dissects_a_whole_frame_on_either_port() -> None:
    pkt = Ether(GOLDEN_FRAME)
    agg = pkt[InaAgg]
    assert (agg.job_id, agg.slot, agg.exponent, agg.chunk) == (5, 2, 3, 66)
    assert agg.values == list(range(8))
    # RESULTs come back with source port 48879 to the worker's port: bound too
    back = Ether(bytes(Ether() / IP() / UDP(sport=48879, dport=1234) / InaAgg(values=[7])))
    assert back[InaAgg].values == [7]


def test_scapy_builds_the_golden_frame() -> None:
    pkt = (Ether(src="00:00:00:00:00:01", dst="02:00:00:00:00:fe")
           / IP(src="10.0.0.1", dst="10.0.0.254", flags="DF", id=0)
           / UDP(sport=48879, dport=48879, chksum=0)
           / InaAgg(job_id=5, slot=2, exponent=3, chunk=66, values=list(range(8))))
    assert bytes(pkt) == GOLDEN_FRAME


@pytest.mark.parametrize("bad", ["00:00:00:00:00", "zz:00:00:00:00:01", "1:2:3:4:5:678"])
def test_bad_mac_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match="MAC address"):
        Endpoints.make(bad, 1, "10.0.0.1", "10.0.0.2")


def test_bad_ip_is_named() -> None:
    with pytest.raises(ValueError, match="IPv4 address '10.0.0.300'"):
        Endpoints.make(1, 2, "10.0.0.300", "10.0.0.2")
