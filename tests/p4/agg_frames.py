"""Frames and STF lines for the tests of ``p4/aggregation.p4``.

The bytes are built here from the packet format (Ethernet / IPv4 / UDP / 12-byte
aggregation header / K big-endian int32 values), independently of the program and of
the hosts' codec, so that the STF files state what the switch must emit.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

INA_UDP_PORT = 48879
FLAG_RESULT = 0x01
FLAG_NACK = 0x02
FLAG_NAMED = 0x04
FLAG_NAMED_VERSION = 0x08
SWITCH_MAC = 0x0200000000FE
AGGREGATOR_IP = 0x0A0000FE  # 10.0.0.254
TTL = 64


@dataclass(frozen=True)
class Host:
    """A worker (or a neighbouring switch) behind a switch port."""

    port: int
    mac: int
    ip: int


def worker(i: int) -> Host:
    """Worker i sits behind port i with MAC 02:00:00:00:00:0i and IP 10.0.0.i."""
    return Host(port=i, mac=0x020000000000 + i, ip=0x0A000000 + i)


def wrap32(x: int) -> int:
    """x as an int32 (two's-complement wrap-around)."""
    return (x + 2**31) % 2**32 - 2**31


def ipv4_checksum(header: bytes) -> int:
    """The Internet checksum of an IPv4 header whose checksum field is zero."""
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ethernet(dst: int, src: int, ether_type: int) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + ether_type.to_bytes(2, "big")


def ipv4(src: int, dst: int, payload_len: int, *, protocol: int = 17, ttl: int = TTL,
         options: bytes = b"", flags_frag: int = 0x4000) -> bytes:
    """An IPv4 header (identification 0x1234; ``flags_frag``, the flags and the fragment
    offset, DF by default) with a correct checksum."""
    ihl = 5 + len(options) // 4
    fields = [0x40 | ihl, 0, 4 * ihl + payload_len, 0x1234, flags_frag, ttl, protocol, 0,
              src, dst]
    header = struct.pack("!BBHHHBBHII", *fields) + options
    checksum = ipv4_checksum(header)
    return header[:10] + checksum.to_bytes(2, "big") + header[12:]


def udp(src_port: int, dst_port: int, payload_len: int, checksum: int = 0) -> bytes:
    """A UDP header; checksum 0 (none) is what the aggregation protocol sends."""
    return struct.pack("!HHHH", src_port, dst_port, 8 + payload_len, checksum)


def tcp(src_port: int, dst_port: int, seq: int = 1) -> bytes:
    """A 20-byte TCP header (ACK|PSH, window 512, a made-up checksum: the switch never
    looks at it)."""
    return struct.pack("!HHIIBBHHH", src_port, dst_port, seq, 0, 5 << 4, 0x18, 512,
                       0x5A5A, 0)


def crc16(data: bytes) -> int:
    """CRC-16/ARC (poly 0x8005 reflected, init 0, no final xor), bit by bit: v1model's
    HashAlgorithm.crc16."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def flow_hash(src: int, dst: int, protocol: int, src_port: int, dst_port: int) -> int:
    """The crc16 of the 5-tuple as ``ecmp_group`` concatenates it (13 bytes)."""
    return crc16(struct.pack("!IIBHH", src, dst, protocol, src_port, dst_port))


@dataclass(frozen=True)
class Agg:
    """An aggregation header and its values."""

    job: int
    slot: int
    version: int
    chunk: int
    values: Sequence[int]
    exponent: int = 0
    flags: int = 0
    named_slot: int = 0

    def payload(self) -> bytes:
        header = struct.pack("!HHBBbBI", self.job, self.slot, self.version, self.flags,
                             self.exponent, self.named_slot, self.chunk)
        return header + struct.pack(f"!{len(self.values)}i", *self.values)

    def naming(self, slot: int, version: int) -> Agg:
        """The same packet naming cell (slot, version) (flags NAMED and its version)."""
        flags = self.flags & ~(FLAG_NAMED | FLAG_NAMED_VERSION) | FLAG_NAMED
        return replace(self, flags=flags | (FLAG_NAMED_VERSION if version else 0),
                       named_slot=slot)


def agg_frame(agg: Agg, *, eth_dst: int, eth_src: int, ip_src: int, ip_dst: int,
              udp_checksum: int = 0) -> bytes:
    """An aggregation frame."""
    payload = agg.payload()
    return (ethernet(eth_dst, eth_src, 0x0800) + ipv4(ip_src, ip_dst, 8 + len(payload))
            + udp(INA_UDP_PORT, INA_UDP_PORT, len(payload), udp_checksum) + payload)


def contribution(sender: Host, agg: Agg, udp_checksum: int = 0) -> bytes:
    """What a worker sends: to the aggregator address and the switch's MAC."""
    return agg_frame(agg, eth_dst=SWITCH_MAC, eth_src=sender.mac, ip_src=sender.ip,
                     ip_dst=AGGREGATOR_IP, udp_checksum=udp_checksum)


def result_for(receiver: Host, agg: Agg) -> bytes:
    """A RESULT as the switch delivers it to a worker (after ``set_dst``): from the
    switch's MAC and the aggregator address to the worker."""
    return agg_frame(agg, eth_dst=receiver.mac, eth_src=SWITCH_MAC, ip_src=AGGREGATOR_IP,
                     ip_dst=receiver.ip)


@dataclass
class Stf:
    """An STF script being written."""

    lines: list[str] = field(default_factory=list)

    def comment(self, text: str) -> None:
        self.lines.extend(f"# {line}".rstrip() for line in text.splitlines())

    def blank(self) -> None:
        self.lines.append("")

    def raw(self, line: str) -> None:
        self.lines.append(line)

    def packet(self, port: int, frame: bytes) -> None:
        self.lines.append(f"packet {port} {frame.hex().upper()}")

    def expect(self, port: int, frame: bytes) -> None:
        self.lines.append(f"expect {port} {frame.hex().upper()} $")

    def wait(self) -> None:
        self.lines.append("wait")

    def register_read(self, name: str, index: int, value: int) -> None:
        self.lines.append(f"register_read {name} {index} {value}")

    def add_child(self, job: int, port: int, *, child_index: int, fan_in: int,
                  is_root: bool = True, parent_port: int = 0, mcast_grp: int = 1,
                  region_base: int = 0, epoch: int = 1) -> None:
        self.lines.append(
            f"add ina_job hdr.ina.job_id:{job} standard_metadata.ingress_port:{port} "
            f"ina_child(child_index:{child_index}, fan_in:{fan_in}, "
            f"is_root:{int(is_root)}, parent_port:{parent_port}, mcast_grp:{mcast_grp}, "
            f"region_base:{region_base}, epoch:{epoch})")

    def add_rewrite(self, host: Host) -> None:
        self.lines.append(
            f"add ina_result_rewrite standard_metadata.egress_port:{host.port} "
            f"set_dst(dmac:0x{host.mac:012X}, dip:0x{host.ip:08X}, "
            f"sip:0x{AGGREGATOR_IP:08X})")

    def multicast_group(self, gid: int, ports: Sequence[int], node: int) -> None:
        """Group ``gid`` with one node (handle ``node``, the next free one) on ``ports``."""
        self.lines.append(f"mc_mgrp_create {gid}")
        self.lines.append(f"mc_node_create {gid} {' '.join(str(p) for p in ports)}")
        self.lines.append(f"mc_node_associate {gid} {node}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
