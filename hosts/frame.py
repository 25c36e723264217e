"""Ethernet / IPv4 / UDP framing of aggregation payloads.

Workers normally let the kernel build the frames (``hosts.transport.UdpTransport``);
this module is for the places that deal in whole frames: a switch port driven in
process, captures, tests. IPv4 without options, UDP checksum 0 (the switch rewrites
the payload, so it could not keep a checksum valid).
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

from hosts.wire import INA_UDP_PORT

ETHERTYPE_IPV4 = 0x0800
IPPROTO_UDP = 17
_ETH = struct.Struct(">6s6sH")
_IP = struct.Struct(">BBHHHBBH4s4s")
_UDP = struct.Struct(">HHHH")
FRAME_OVERHEAD = _ETH.size + _IP.size + _UDP.size  # 42


def mac_bytes(mac: str | int | bytes) -> bytes:
    """``"00:00:00:00:00:01"``, an int or 6 bytes -> 6 bytes."""
    if isinstance(mac, bytes):
        if len(mac) != 6:
            raise ValueError(f"MAC address {mac!r}: expected 6 bytes")
        return mac
    if isinstance(mac, int):
        if not 0 <= mac < 1 << 48:
            raise ValueError(f"MAC address {mac:#x} does not fit 48 bits")
        return mac.to_bytes(6, "big")
    parts = mac.split(":")
    try:
        out = bytes(int(p, 16) for p in parts)
    except ValueError:
        out = b""
    if len(parts) != 6 or len(out) != 6 or any(len(p) not in (1, 2) for p in parts):
        raise ValueError(f"MAC address {mac!r}: expected six hex bytes like 00:00:00:00:00:01")
    return out


def ipv4_bytes(addr: str | int) -> bytes:
    try:
        return ipaddress.IPv4Address(addr).packed
    except ValueError as e:
        raise ValueError(f"IPv4 address {addr!r}: {e}") from None


def ipv4_checksum(header: bytes) -> int:
    words = struct.unpack(f">{len(header) // 2}H", header)
    s = sum(words)
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Addresses of one direction of an aggregation flow."""

    src_mac: bytes
    dst_mac: bytes
    src_ip: bytes
    dst_ip: bytes
    src_port: int = INA_UDP_PORT
    dst_port: int = INA_UDP_PORT

    @classmethod
    def make(cls, src_mac: str | int | bytes, dst_mac: str | int | bytes, src_ip: str | int,
             dst_ip: str | int, src_port: int = INA_UDP_PORT,
             dst_port: int = INA_UDP_PORT) -> Endpoints:
        return cls(mac_bytes(src_mac), mac_bytes(dst_mac), ipv4_bytes(src_ip),
                   ipv4_bytes(dst_ip), src_port, dst_port)


def build_frame(ep: Endpoints, payload: bytes, *, ttl: int = 64, ident: int = 0) -> bytes:
    """A complete Ethernet frame carrying ``payload`` in UDP."""
    udp_len = _UDP.size + len(payload)
    total = _IP.size + udp_len
    if total > 0xFFFF:
        raise ValueError(f"UDP payload of {len(payload)} bytes does not fit an IPv4 packet")
    ip = _IP.pack(0x45, 0, total, ident, 0x4000, ttl, IPPROTO_UDP, 0, ep.src_ip, ep.dst_ip)
    csum = ipv4_checksum(ip)
    ip = ip[:10] + csum.to_bytes(2, "big") + ip[12:]
    return (_ETH.pack(ep.dst_mac, ep.src_mac, ETHERTYPE_IPV4) + ip
            + _UDP.pack(ep.src_port, ep.dst_port, udp_len, 0) + payload)


@dataclass(frozen=True, slots=True)
class UdpFrame:
    """The parts of a parsed Ethernet/IPv4/UDP frame that the hosts care about."""

    src_mac: bytes
    dst_mac: bytes
    src_ip: bytes
    dst_ip: bytes
    src_port: int
    dst_port: int
    ttl: int
    ip_checksum_ok: bool
    payload: bytes


def parse_frame(frame: bytes) -> UdpFrame | None:
    """The UDP datagram in ``frame``, or None when it is not Ethernet/IPv4/UDP."""
    if len(frame) < FRAME_OVERHEAD:
        return None
    dst, src, etype = _ETH.unpack_from(frame)
    if etype != ETHERTYPE_IPV4:
        return None
    vihl, _tos, total, _id, _frag, ttl, proto, _csum, sip, dip = _IP.unpack_from(frame, 14)
    ihl = (vihl & 0xF) * 4
    if vihl >> 4 != 4 or ihl < 20 or proto != IPPROTO_UDP or len(frame) < 14 + total:
        return None
    ok = ipv4_checksum(frame[14:14 + ihl]) == 0
    sport, dport, ulen, _ucsum = _UDP.unpack_from(frame, 14 + ihl)
    start = 14 + ihl + _UDP.size
    end = 14 + ihl + ulen
    if ulen < _UDP.size or end > 14 + total:
        return None
    return UdpFrame(src, dst, sip, dip, sport, dport, ttl, ok, frame[start:end])
