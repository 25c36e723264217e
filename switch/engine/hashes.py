"""Hash and checksum algorithms over byte strings, with the definitions BMv2 uses.

``crc16`` is CRC-16/ARC (poly 0x8005, reflected, init 0, no final xor), ``crc32`` is
the zlib CRC-32, ``csum16`` the Internet ones'-complement checksum, ``xor16`` the xor
of big-endian 16-bit words (a short tail is padded with zero bytes on the right), and
``identity`` the first eight bytes read as a big-endian number.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable


def _reflect(value: int, width: int) -> int:
    out = 0
    for _ in range(width):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


def _reflected_table(poly: int, width: int) -> list[int]:
    """Table for the LSB-first (reflected) form of a CRC with polynomial ``poly``."""
    rpoly = _reflect(poly, width)
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ rpoly if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC16_TABLE = _reflected_table(0x8005, 16)


def crc16(data: bytes) -> int:
    """CRC-16/ARC; check value 0xBB3D for b"123456789"."""
    crc = 0
    table = _CRC16_TABLE
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


class CustomCrc:
    """A CRC with a settable configuration, as BMv2's ``crc16_custom``/``crc32_custom``
    (the default configurations are those of crc16 and crc32)."""

    def __init__(self, width: int, poly: int, init: int, xor_out: int,
                 reflect_in: bool, reflect_out: bool):
        self.width = width
        self.configure(poly, init, xor_out, reflect_in, reflect_out)

    def configure(self, poly: int, init: int, xor_out: int, reflect_in: bool,
                  reflect_out: bool) -> None:
        w = self.width
        self.poly, self.init, self.xor_out = poly, init, xor_out
        self.reflect_in, self.reflect_out = reflect_in, reflect_out
        top = 1 << (w - 1)
        mask = (1 << w) - 1
        table = []
        for dividend in range(256):
            rem = (dividend << (w - 8)) & mask
            for _ in range(8):
                rem = ((rem << 1) ^ poly) & mask if rem & top else (rem << 1) & mask
            table.append(rem)
        self._table = table
        self._mask = mask

    def __call__(self, data: bytes) -> int:
        w = self.width
        mask = self._mask
        table = self._table
        rem = self.init
        shift = w - 8
        for b in data:
            if self.reflect_in:
                b = _REFLECT8[b]
            rem = table[(b ^ (rem >> shift)) & 0xFF] ^ ((rem << 8) & mask)
        if self.reflect_out:
            rem = _reflect(rem, w)
        return (rem ^ self.xor_out) & mask


_REFLECT8 = [_reflect(i, 8) for i in range(256)]

_STRUCTS: dict[int, struct.Struct] = {}


def csum16(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``data``: the ones' complement of the ones'
    complement sum of its big-endian 16-bit words, an odd tail padded with zero."""
    n = len(data)
    if n & 1:
        data = bytes(data) + b"\0"
        n += 1
    words = n >> 1
    st = _STRUCTS.get(words)
    if st is None:
        st = _STRUCTS[words] = struct.Struct(f">{words}H")
    s = sum(st.unpack(data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def xor16(data: bytes) -> int:
    if len(data) & 1:
        data = bytes(data) + b"\0"
    out = 0
    for i in range(0, len(data), 2):
        out ^= (data[i] << 8) | data[i + 1]
    return out


def identity(data: bytes) -> int:
    return int.from_bytes(data[:8], "big")


class RoundRobin:
    """BMv2's ``round_robin``: 0, 1, 2, ... regardless of the data."""

    def __init__(self) -> None:
        self.next = 0

    def __call__(self, data: bytes) -> int:
        v = self.next
        self.next += 1
        return v


HashFn = Callable[[bytes], int]

# HashAlgorithm member name -> a factory of the function (custom CRCs and stateful
# hashes need one instance per call site, as in BMv2).
ALGORITHMS: dict[str, Callable[[], HashFn]] = {
    "crc16": lambda: crc16,
    "crc32": lambda: crc32,
    "csum16": lambda: csum16,
    "xor16": lambda: xor16,
    "identity": lambda: identity,
    "crc16_custom": lambda: CustomCrc(16, 0x8005, 0, 0, True, True),
    "crc32_custom": lambda: CustomCrc(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True),
    "round_robin": RoundRobin,
}


def pack_bits(items: list[tuple[int, int]]) -> bytes:
    """Concatenate (value, width) pairs MSB first into bytes, padding the last byte
    with zero bits on the right (BMv2's field-list serialisation)."""
    acc = 0
    total = 0
    for value, width in items:
        acc = (acc << width) | (value & ((1 << width) - 1))
        total += width
    pad = (-total) & 7
    return (acc << pad).to_bytes((total + pad) >> 3, "big")


def csum16_int(value: int) -> int:
    """csum16 of the bytes of ``value`` (a whole number of 16-bit words, big-endian):
    since 2^16 = 1 modulo 0xFFFF, the ones' complement sum is ``value % 0xFFFF`` (with
    0xFFFF in place of 0 for non-zero data)."""
    s = value % 0xFFFF
    if s == 0 and value:
        s = 0xFFFF
    return ~s & 0xFFFF
