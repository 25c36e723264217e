"""``p4/ipv4_forward.p4`` on the engine: routes, TTL, checksums with and without options."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP, IPOption_Router_Alert
from scapy.layers.l2 import Ether

from switch.engine.runtime import Lpm
from switch.frontend import compile_file
from switch.v1model import V1Switch

PROGRAM = Path(__file__).resolve().parents[2] / "p4" / "ipv4_forward.p4"


@pytest.fixture(scope="module")
def switch() -> V1Switch:
    sw = V1Switch(compile_file(PROGRAM))
    sw.table_add("ipv4_lpm", [Lpm(0x0A000100, 24)], "forward", [2, 0x020000000002])
    return sw


def _frame(ip: IP) -> bytes:
    return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:fe") / ip
                 / UDP(sport=1000, dport=2000) / b"payload")


@pytest.mark.parametrize("options", [[], [IPOption_Router_Alert()]], ids=["plain", "options"])
def test_forwarded_with_ttl_and_checksum(switch: V1Switch, options: list) -> None:
    sent = _frame(IP(src="10.0.0.1", dst="10.0.1.9", ttl=9, options=options))
    ((port, data),) = switch.inject(1, sent)
    assert port == 2
    out = Ether(data)
    assert out.dst == "02:00:00:00:00:02" and out.src == "02:00:00:00:00:fe"
    ip = out[IP]
    assert ip.ttl == 8 and ip.ihl == len(bytes(IP(options=options))) // 4
    checksum = ip.chksum
    del ip.chksum
    assert IP(bytes(ip)).chksum == checksum
    assert bytes(out[UDP]) == bytes(Ether(sent)[UDP])


def test_dropped_without_route_or_ttl_or_with_short_header(switch: V1Switch) -> None:
    assert switch.inject(1, _frame(IP(src="10.0.0.1", dst="10.0.2.9"))) == []
    assert switch.inject(1, _frame(IP(src="10.0.0.1", dst="10.0.1.9", ttl=1))) == []
    short = bytearray(_frame(IP(src="10.0.0.1", dst="10.0.1.9")))
    short[14] = 0x44  # ihl = 4
    assert switch.inject(1, bytes(short)) == []
    assert switch.inject(1, bytes(Ether(type=0x86DD) / (b"\x60" * 40))) == []
