"""Value parsing and the canonical byte encoding, without a switch."""

from __future__ import annotations

import pytest

from controller import EncodeError, Lpm, Optional, Range, Ternary
from controller.values import (
    decode_int,
    encode_int,
    encode_uint,
    format_match,
    is_dont_care,
    parse_exact,
    parse_lpm,
    parse_optional,
    parse_range,
    parse_ternary,
    to_int,
    to_uint,
)


@pytest.mark.parametrize(("value", "number"), [
    (0, 0), (300, 300), ("300", 300), ("0x1f", 31), ("0b101", 5), (b"\x01\x00", 256),
    ("10.0.1.7", 0x0A000107), ("aa:bb:cc:dd:ee:ff", 0xAABBCCDDEEFF),
    ("0:0:0:0:0:1", 1), ("::1", 1), (True, 1),
])
def test_values_as_people_write_them(value: object, number: int) -> None:
    assert to_int(value, "x") == number  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "message"), [
    ("ten", "x: cannot read 'ten'"), (-1, "x: negative value -1"), ("-3", "cannot read"),
    (b"", "x: empty byte string"), (1.5, "expected an int, bytes or a string"),
    ("10.0.1.300", "cannot read"),
])
def test_bad_values_say_what_and_where(value: object, message: str) -> None:
    with pytest.raises(EncodeError, match=message):
        to_int(value, "x")  # type: ignore[arg-type]


def test_values_must_fit_the_width() -> None:
    assert to_uint(511, 9, "port") == 511
    with pytest.raises(EncodeError, match=r"port: value 512 \(0x200\) does not fit in 9 bits"):
        to_uint(512, 9, "port")


def test_canonical_bytes() -> None:
    assert encode_uint(0) == b"\x00"
    assert encode_uint(1) == b"\x01"
    assert encode_uint(256) == b"\x01\x00"
    assert encode_uint(0x0A000100) == b"\x0a\x00\x01\x00"
    assert encode_int(-1) == b"\xff"
    assert encode_int(128) == b"\x00\x80"
    assert encode_int(-129) == b"\xff\x7f"
    for n in (-32768, -129, -128, -1, 0, 1, 127, 128, 32767):
        assert decode_int(encode_int(n)) == n


def test_match_short_forms() -> None:
    assert parse_exact("aa:bb:cc:dd:ee:ff", 48, "f").value == 0xAABBCCDDEEFF
    assert parse_lpm("10.0.1.0/24", 32, "f") == Lpm(0x0A000100, 24)
    assert parse_lpm("10.0.1.77/24", 32, "f") == Lpm(0x0A000100, 24)  # masked to the prefix
    assert parse_lpm((0x0A000000, 8), 32, "f") == Lpm(0x0A000000, 8)
    assert parse_lpm("10.0.1.1", 32, "f") == Lpm(0x0A000101, 32)
    assert parse_ternary("0x0a01&&&0xff00", 16, "f") == Ternary(0x0A00, 0xFF00)
    assert parse_ternary(5, 9, "f") == Ternary(5, 0x1FF)
    assert parse_range("0x800..0x806", 16, "f") == Range(0x800, 0x806)
    assert parse_range((1, 2), 16, "f") == Range(1, 2)
    assert parse_optional(None, 48, "f") == Optional(None)
    assert parse_optional("00:00:00:00:00:0a", 48, "f") == Optional(10)


def test_match_errors() -> None:
    with pytest.raises(EncodeError, match=r"f: prefix length 33 not in \[0, 32\]"):
        parse_lpm("10.0.0.0/33", 32, "f")
    with pytest.raises(EncodeError, match="f: empty range 9..3"):
        parse_range("9..3", 16, "f")
    with pytest.raises(EncodeError, match="f mask: value 65536"):
        parse_ternary((1, 0x10000), 16, "f")


def test_dont_care_matches() -> None:
    assert is_dont_care(Lpm(0, 0), 32)
    assert is_dont_care(Ternary(0, 0), 9)
    assert is_dont_care(Range(0, 0xFFFF), 16)
    assert is_dont_care(Optional(None), 48)
    assert not is_dont_care(Range(0, 0xFFFE), 16)


def test_format_match() -> None:
    assert format_match(Lpm(0x0A000100, 24), 32) == "10.0.1.0/24"
    assert format_match(Ternary(1, 0x1FF), 9) == "1&&&511"
    assert format_match(Range(0x800, 0x806), 16) == "2048..2054"
    assert format_match(Optional(0xAABBCCDDEEFF), 48) == "aa:bb:cc:dd:ee:ff"
