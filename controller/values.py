"""Values as a controller writes them, and their canonical P4Runtime byte strings.

A value is an ``int``, ``bytes`` (big-endian), or a string: decimal, ``0x``/``0b``
prefixed, an IPv4 address (``10.0.1.1``), a MAC address (``aa:bb:cc:dd:ee:ff``) or an
IPv6 address. Encoded values are canonical: big-endian, the shortest form, at least one
byte (what P4Runtime 1.4 servers send back, so written and read entries compare equal).

Match values are typed (``Exact``, ``Lpm``, ``Ternary``, ``Range``, ``Optional``); the
client also accepts the short forms ``"10.0.1.0/24"`` (lpm), ``"0x0a00&&&0xff00"``
(ternary), ``"100..200"`` (range) and ``(value, prefix_len)``/``(value, mask)``/
``(low, high)`` tuples. A don't-care match (prefix length 0, mask 0, the full range,
``Optional(None)``) is omitted from the entry, as P4Runtime requires; lpm and ternary
values are masked to their prefix/mask.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from controller.errors import EncodeError

Value = int | str | bytes

_MAC = re.compile(r"^[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}$")
_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


def to_int(value: Value, what: str) -> int:
    """The non-negative integer a value stands for."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if value < 0:
            raise EncodeError(f"{what}: negative value {value}")
        return value
    if isinstance(value, bytes | bytearray):
        if not value:
            raise EncodeError(f"{what}: empty byte string")
        return int.from_bytes(value, "big")
    if isinstance(value, str):
        text = value.strip()
        try:
            if _IPV4.match(text):
                return int(ipaddress.IPv4Address(text))
            if _MAC.match(text):
                return int(text.replace(":", ""), 16)
            if ":" in text:
                return int(ipaddress.IPv6Address(text))
            if text.lower().startswith(("0x", "0b", "0o")):
                return int(text, 0)
            number = int(text, 10)
        except ValueError:
            pass
        else:
            if number >= 0:
                return number
        raise EncodeError(f"{what}: cannot read {value!r} as a number, an IPv4/IPv6 address "
                          "or a MAC address")
    raise EncodeError(f"{what}: expected an int, bytes or a string, got "
                      f"{type(value).__name__} {value!r}")


def check_width(number: int, width: int, what: str) -> int:
    if width > 0 and number.bit_length() > width:
        raise EncodeError(f"{what}: value {number} (0x{number:x}) does not fit in {width} bits")
    return number


def to_uint(value: Value, width: int, what: str) -> int:
    """``to_int`` that must fit ``width`` bits (a width of 0 means unknown: no check)."""
    return check_width(to_int(value, what), width, what)


def encode_uint(number: int) -> bytes:
    """The canonical byte string of a non-negative integer."""
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


def encode_int(number: int) -> bytes:
    """The canonical two's complement byte string of a signed integer."""
    bits = (number if number >= 0 else ~number).bit_length() + 1
    return number.to_bytes((bits + 7) // 8, "big", signed=True)


def decode_uint(data: bytes) -> int:
    return int.from_bytes(data, "big")


def decode_int(data: bytes) -> int:
    """A signed value from its two's complement bytes (canonical or sign-extended)."""
    return int.from_bytes(data, "big", signed=True)

# ------------------------------------------------------------------ match values


@dataclass(frozen=True, order=True)
class Exact:
    value: int


@dataclass(frozen=True, order=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True, order=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True, order=True)
class Range:
    low: int
    high: int


@dataclass(frozen=True)
class Optional:
    value: int | None


MatchValue = Exact | Lpm | Ternary | Range | Optional


def _pair(value: object, seps: tuple[str, ...]) -> tuple[Value, Value] | None:
    if isinstance(value, tuple) and len(value) == 2:
        return value  # type: ignore[return-value]
    if isinstance(value, str):
        for sep in seps:
            if sep in value:
                first, second = value.split(sep, 1)
                return first, second
    return None


def parse_exact(value: object, width: int, what: str) -> Exact:
    if isinstance(value, Exact):
        return Exact(check_width(value.value, width, what))
    return Exact(to_uint(value, width, what))  # type: ignore[arg-type]


def parse_lpm(value: object, width: int, what: str) -> Lpm:
    if isinstance(value, Lpm):
        number, plen = value.value, value.prefix_len
    elif (pair := _pair(value, ("/",))) is not None:
        number = to_int(pair[0], what)
        plen = to_int(pair[1], f"{what} prefix length")
    else:
        number, plen = to_int(value, what), width  # type: ignore[arg-type]
    check_width(number, width, what)
    if not 0 <= plen <= width:
        raise EncodeError(f"{what}: prefix length {plen} not in [0, {width}]")
    mask = ((1 << plen) - 1) << (width - plen)
    return Lpm(number & mask, plen)


def parse_ternary(value: object, width: int, what: str) -> Ternary:
    if isinstance(value, Ternary):
        number, mask = value.value, value.mask
    elif (pair := _pair(value, ("&&&",))) is not None:
        number, mask = to_int(pair[0], what), to_int(pair[1], f"{what} mask")
    else:
        number, mask = to_int(value, what), (1 << width) - 1  # type: ignore[arg-type]
    check_width(number, width, what)
    check_width(mask, width, f"{what} mask")
    return Ternary(number & mask, mask)


def parse_range(value: object, width: int, what: str) -> Range:
    if isinstance(value, Range):
        low, high = value.low, value.high
    elif (pair := _pair(value, ("..",))) is not None:
        low, high = to_int(pair[0], f"{what} low"), to_int(pair[1], f"{what} high")
    else:
        low = high = to_int(value, what)  # type: ignore[arg-type]
    check_width(low, width, f"{what} low")
    check_width(high, width, f"{what} high")
    if low > high:
        raise EncodeError(f"{what}: empty range {low}..{high}")
    return Range(low, high)


def parse_optional(value: object, width: int, what: str) -> Optional:
    if isinstance(value, Optional):
        number = value.value
    elif value is None:
        number = None
    else:
        number = to_int(value, what)  # type: ignore[arg-type]
    if number is not None:
        check_width(number, width, what)
    return Optional(number)


def is_dont_care(match: MatchValue, width: int) -> bool:
    """A match that P4Runtime wants omitted from the entry."""
    if isinstance(match, Lpm):
        return match.prefix_len == 0
    if isinstance(match, Ternary):
        return match.mask == 0
    if isinstance(match, Range):
        return match.low == 0 and match.high == (1 << width) - 1
    if isinstance(match, Optional):
        return match.value is None
    return False


def format_number(number: int, width: int) -> str:
    """A value as people write it for a field of this width: IPv4 addresses for 32 bits,
    MAC addresses for 48 bits, decimal for narrow fields and hexadecimal otherwise."""
    if width == 32:
        return str(ipaddress.IPv4Address(number))
    if width == 48:
        return ":".join(f"{b:02x}" for b in number.to_bytes(6, "big"))
    if width <= 16:
        return str(number)
    return f"0x{number:x}"


def format_match(match: MatchValue, width: int) -> str:
    if isinstance(match, Exact):
        return format_number(match.value, width)
    if isinstance(match, Lpm):
        return f"{format_number(match.value, width)}/{match.prefix_len}"
    if isinstance(match, Ternary):
        return f"{format_number(match.value, width)}&&&{format_number(match.mask, width)}"
    if isinstance(match, Range):
        return f"{format_number(match.low, width)}..{format_number(match.high, width)}"
    return "*" if match.value is None else format_number(match.value, width)
