"""Run-time support for generated code: exceptions and the helpers that are not worth
inlining (unaligned extraction, lookahead, header stack operations, bit packing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class P4Exit(Exception):
    """``exit``: ends every control block being executed."""


EXIT = P4Exit()


class ParserError(Exception):
    """A parser error: ``code`` from ``Program.errors``; ``bit_offset`` where the
    parser stood (the payload starts at the last successful extraction)."""

    def __init__(self, code: int, bit_offset: int):
        super().__init__(code, bit_offset)
        self.code = code
        self.bit_offset = bit_offset


class PacketAbort(Exception):
    """Processing of the packet stops (failed assert/assume, run-time error)."""

    def __init__(self, message: str, sid: int = -1):
        super().__init__(message)
        self.message = message
        self.sid = sid


def bits_of(data: bytes, bo: int, width: int) -> int:
    """``width`` bits of ``data`` starting at bit ``bo`` (caller checked the length)."""
    if width == 0:
        return 0
    start = bo >> 3
    end = (bo + width + 7) >> 3
    v = int.from_bytes(data[start:end], "big")
    return (v >> ((end << 3) - bo - width)) & ((1 << width) - 1)


def lookahead(data: bytes, bo: int, width: int, too_short: int) -> int:
    if bo + width > len(data) << 3:
        raise ParserError(too_short, bo)
    return bits_of(data, bo, width)


def extract_generic(h: Any, data: bytes, bo: int, too_short: int,
                    varbits: int = -1, header_too_short: int = 4,
                    invalid_argument: int = 6) -> int:
    """Extract header object ``h`` at any bit offset using its class ``LAYOUT``
    [(attr, width, signed, is_bool, is_varbit, max_width)]; returns the new offset.

    ``varbits`` (the size of a varbit field) is checked as BMv2 checks it: not a
    multiple of 8 is ParserInvalidArgument, then past the packet's end PacketTooShort,
    then larger than the field's maximum HeaderTooShort."""
    layout = h.LAYOUT
    if varbits >= 0 and varbits & 7:
        raise ParserError(invalid_argument, bo)
    total = 0
    too_big = False
    for _a, w, _s, _b, vb, maxw in layout:
        if vb:
            if varbits < 0:
                varbits = 0
            too_big = varbits > maxw
            total += varbits
        else:
            total += w
    if bo + total > len(data) << 3:
        raise ParserError(too_short, bo)
    if too_big:
        raise ParserError(header_too_short, bo)
    v = bits_of(data, bo, total)
    pos = total
    for a, w, s, b, vb, _maxw in layout:
        if vb:
            pos -= varbits
            setattr(h, a, (v >> pos) & ((1 << varbits) - 1))
            setattr(h, "w_" + a[2:], varbits)
            continue
        pos -= w
        x = (v >> pos) & ((1 << w) - 1)
        if s:
            x = (x ^ (1 << (w - 1))) - (1 << (w - 1))
        elif b:
            x = x != 0
        if "." in a:
            _set_path(h, a, x)
        else:
            setattr(h, a, x)
    h.valid = True
    return bo + total


def _get_path(obj: Any, path: str) -> Any:
    """A field of a header's struct-typed field: ``path`` is ``f_p.f_hi``."""
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _set_path(obj: Any, path: str, value: Any) -> None:
    head, _, last = path.rpartition(".")
    setattr(_get_path(obj, head), last, value)


def header_bits(h: Any) -> tuple[int, int]:
    """(value, width) of a header's fields concatenated (varbits at their width)."""
    acc = 0
    total = 0
    for a, w, _s, _b, vb, _m in h.LAYOUT:
        if vb:
            w = getattr(h, "w_" + a[2:])
        value = _get_path(h, a) if "." in a else getattr(h, a)
        acc = (acc << w) | (int(value) & ((1 << w) - 1))
        total += w
    return acc, total


def pack_generic(h: Any) -> bytes:
    v, w = header_bits(h)
    pad = (-w) & 7
    return (v << pad).to_bytes((w + pad) >> 3, "big")


def pack_bits(items: Any) -> bytes:
    """(value, width, include) triples concatenated MSB first, the last byte padded
    on the right; entries with a false ``include`` are skipped."""
    acc = 0
    total = 0
    for v, w, inc in items:
        if inc:
            acc = (acc << w) | (int(v) & ((1 << w) - 1))
            total += w
    pad = (-total) & 7
    return (acc << pad).to_bytes((total + pad) >> 3, "big")


def stack_next(stk: Any, bo: int, oob: int) -> Any:
    i = stk.nxt
    if i >= len(stk.elems):
        raise ParserError(oob, bo)
    stk.nxt = i + 1
    return stk.elems[i]


def stack_last(stk: Any, bo: int, oob: int) -> Any:
    i = stk.nxt - 1
    if i < 0:
        raise ParserError(oob, bo)
    return stk.elems[i]


def stack_get(stk: Any, i: int) -> Any:
    """Element ``i``; out of range gives a scratch element (reads see an invalid
    header, writes are lost)."""
    if 0 <= i < len(stk.elems):
        return stk.elems[i]
    return type(stk.elems[0])()


def stack_push_front(stk: Any, n: int) -> None:
    elems = stk.elems
    size = len(elems)
    n = min(n, size)
    if n <= 0:
        return
    cls = type(elems[0])
    stk.elems[:] = [cls() for _ in range(n)] + elems[: size - n]
    stk.nxt = min(stk.nxt + n, size)


def stack_pop_front(stk: Any, n: int) -> None:
    elems = stk.elems
    size = len(elems)
    n = min(n, size)
    if n <= 0:
        return
    cls = type(elems[0])
    stk.elems[:] = elems[n:] + [cls() for _ in range(n)]
    stk.nxt = max(stk.nxt - n, 0)


def log_format(msg: str, values: tuple) -> str:
    parts = msg.split("{}")
    out = [parts[0]]
    for i, p in enumerate(parts[1:]):
        out.append(str(values[i]) if i < len(values) else "{}")
        out.append(p)
    return "".join(out)


def array_field(name: str, i: int) -> property:
    """Field ``i`` of the array run held in attribute ``name`` of a header, as a
    property (see ``switch.engine.layout``): reads give a Python int; a write into a
    shared (read-only) array copies it first."""

    def get(h: Any) -> int:
        return int(getattr(h, name).item(i))

    def put(h: Any, value: int) -> None:
        a = getattr(h, name)
        if not a.flags.writeable:
            a = a.copy()
            setattr(h, name, a)
        a[i] = value

    return property(get, put)


def complete_members(obj: Any, members: tuple[tuple[str, type], ...]) -> None:
    """Give ``obj`` a default value (a new ``cls()``) for each of ``members`` that it
    has none of yet: a parser that builds its out headers as it extracts them does
    this when it fails half-way (``switch.engine.codegen_parser``)."""
    for name, cls in members:
        if not hasattr(obj, name):
            setattr(obj, name, cls())


def wire_bytes(dtype: Any) -> Callable[[Any], bytes]:
    """A function giving the bytes of a header's array in ``dtype`` (big-endian). The
    last read-only array's bytes are kept: such an array never changes (see
    ``switch.engine.layout``), and the copies of a multicast share one."""
    last: list[Any] = [None, b""]

    def wire(a: Any) -> bytes:
        if a is last[0]:
            return last[1]  # type: ignore[no-any-return]
        b: bytes = a.tobytes() if a.dtype == dtype else a.astype(dtype).tobytes()
        if not a.flags.writeable:
            last[0], last[1] = a, b
        return b

    return wire
