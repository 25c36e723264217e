import struct
import zlib

from switch.engine import hashes


def test_crc16_arc_check_value():
    assert hashes.crc16(b"123456789") == 0xBB3D


def test_crc32_is_zlib():
    for data in (b"", b"a", b"123456789", bytes(range(256))):
        assert hashes.crc32(data) == zlib.crc32(data)


def test_custom_crcs_default_to_builtin_ones():
    c16 = hashes.ALGORITHMS["crc16_custom"]()
    c32 = hashes.ALGORITHMS["crc32_custom"]()
    for data in (b"123456789", b"\x00\xff" * 7, b"x"):
        assert c16(data) == hashes.crc16(data)
        assert c32(data) == hashes.crc32(data)


def test_custom_crc_ccitt_false():
    c = hashes.CustomCrc(16, 0x1021, 0xFFFF, 0, False, False)
    assert c(b"123456789") == 0x29B1


def test_csum16_of_ipv4_header():
    # the classic example header: checksum 0xb861
    hdr = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")
    assert hashes.csum16(hdr) == 0xB861
    with_sum = hdr[:10] + struct.pack(">H", 0xB861) + hdr[12:]
    assert hashes.csum16(with_sum) == 0


def test_csum16_odd_length_pads_right():
    assert hashes.csum16(b"\x01") == (~0x0100) & 0xFFFF


def test_xor16_and_identity():
    assert hashes.xor16(b"\x12\x34\x56\x78") == 0x1234 ^ 0x5678
    assert hashes.xor16(b"\x12\x34\x56") == 0x1234 ^ 0x5600
    assert hashes.identity(b"\x01\x02") == 0x0102
    assert hashes.identity(bytes(range(1, 11))) == int.from_bytes(bytes(range(1, 9)), "big")


def test_pack_bits_left_aligned():
    assert hashes.pack_bits([(1, 1)]) == b"\x80"
    assert hashes.pack_bits([(0x1FF, 9), (0, 7)]) == b"\xff\x80"
    assert hashes.pack_bits([(0xAB, 8), (0xC, 4)]) == b"\xab\xc0"


def test_csum16_int_matches_bytes():
    import random

    rng = random.Random(3)
    for n in (0, 2, 4, 20, 64):
        for _ in range(50):
            data = bytes(rng.getrandbits(8) for _ in range(n))
            assert hashes.csum16_int(int.from_bytes(data, "big")) == hashes.csum16(data)
    assert hashes.csum16_int(0xFFFF) == hashes.csum16(b"\xff\xff")
