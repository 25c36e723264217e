"""The aggregation packet format, declared once, with the hot-path codec.

A UDP payload to or from the aggregation port is a 12-byte header followed by K
big-endian two's-complement int32 values::

    job_id:u16 slot:u16 version:u8 flags:u8 exponent:i8 named_slot:u8 chunk:u32

``exponent`` is the scaling exponent the quantizer negotiates through the switch (see
``hosts.quantize``); the switch max-combines it. ``flags``:

* 0x01 RESULT: the packet carries an aggregate to the workers.
* 0x02 NACK: the switch is missing the receiver's transmission to the *named* cell.
  A NACK without RESULT is the header alone (12 bytes, no values).
* 0x04 NAMED: ``named_slot`` and flag 0x08 (its version) name a cell (slot, version)
  of the job. In a contribution, the cell of the sender's previous transmission; in a
  multicast RESULT, the cell the switch completed before this one; in a NACK, the cell
  whose contribution did not arrive. Only slots below 256 can be named.
* 0x08 NAMED_VERSION: the version of the named cell.

The other bits (0x10 to 0x80) are reserved: 0 on send, preserved by the switch.
``hosts.protocol`` says how the switch and the workers use the names to recover from
loss before any timer expires.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

INA_UDP_PORT = 48879
"""UDP port of aggregation traffic, on the workers and on the aggregator address."""

HEADER = struct.Struct(">HHBBbBI")
HEADER_SIZE = HEADER.size  # 12
FLAG_RESULT = 0x01
FLAG_NACK = 0x02
FLAG_NAMED = 0x04
FLAG_NAMED_VERSION = 0x08
NAMING_FLAGS = FLAG_NAMED | FLAG_NAMED_VERSION
MAX_NAMED_SLOT = 0xFF
VALUE_DTYPE = np.dtype(">i4")
"""Wire dtype of the values: big-endian int32."""

ALLOWED_K = (8, 16, 32, 64, 128, 256)
DEFAULT_K = 64

_U16 = 0xFFFF
_U32 = 0xFFFFFFFF


class WireError(ValueError):
    """A payload or header that does not follow the aggregation format."""


@dataclass(frozen=True, slots=True)
class AggHeader:
    job_id: int
    slot: int
    version: int
    flags: int = 0
    exponent: int = 0
    chunk: int = 0
    named_slot: int = 0

    @property
    def is_result(self) -> bool:
        return bool(self.flags & FLAG_RESULT)

    @property
    def is_nack(self) -> bool:
        return bool(self.flags & FLAG_NACK)

    @property
    def named(self) -> tuple[int, int] | None:
        """The named cell (slot, version), or None."""
        if not self.flags & FLAG_NAMED:
            return None
        return self.named_slot, int(bool(self.flags & FLAG_NAMED_VERSION))

    def check(self) -> None:
        """Raise ``WireError`` naming the first field that does not fit its width."""
        for name, value, lo, hi in (
            ("job_id", self.job_id, 0, _U16),
            ("slot", self.slot, 0, _U16),
            ("version", self.version, 0, 1),
            ("flags", self.flags, 0, 0xFF),
            ("exponent", self.exponent, -128, 127),
            ("named_slot", self.named_slot, 0, MAX_NAMED_SLOT),
            ("chunk", self.chunk, 0, _U32),
        ):
            if not isinstance(value, int) or not lo <= value <= hi:
                raise WireError(f"aggregation header: {name}={value!r} is not in [{lo}, {hi}]")


def encode_header(h: AggHeader) -> bytes:
    h.check()
    return HEADER.pack(h.job_id, h.slot, h.version, h.flags, h.exponent, h.named_slot,
                       h.chunk)


def encode(h: AggHeader, values: npt.ArrayLike) -> bytes:
    """Header + values as the UDP payload. ``values`` must be integers that fit int32."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise WireError(f"aggregation values: expected a 1-D array, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise WireError(f"aggregation values: expected integers, got dtype {arr.dtype}")
    if arr.size and (arr.min() < -(2**31) or arr.max() > 2**31 - 1):
        raise WireError("aggregation values: a value does not fit int32")
    return encode_header(h) + arr.astype(VALUE_DTYPE).tobytes()


def naming(slot: int, version: int) -> tuple[int, int]:
    """The flags and ``named_slot`` that name cell (slot, version); (0, 0) when the slot
    is too large to be named."""
    if slot > MAX_NAMED_SLOT:
        return 0, 0
    return FLAG_NAMED | (FLAG_NAMED_VERSION if version else 0), slot


def encode_fast(job_id: int, slot: int, version: int, exponent: int, chunk: int,
                values: npt.NDArray[np.int32], flags: int = 0, named_slot: int = 0) -> bytes:
    """Hot-path encoder for a contribution: the caller guarantees the ranges."""
    return (HEADER.pack(job_id, slot, version, flags, exponent, named_slot, chunk & _U32)
            + values.astype(VALUE_DTYPE, copy=False).tobytes())


def decode_header(payload: bytes) -> AggHeader:
    if len(payload) < HEADER_SIZE:
        raise WireError(f"aggregation payload: {len(payload)} bytes, shorter than the "
                        f"{HEADER_SIZE}-byte header")
    job, slot, version, flags, exponent, named_slot, chunk = HEADER.unpack_from(payload)
    return AggHeader(job, slot, version, flags, exponent, chunk, named_slot)


def decode(payload: bytes, k: int | None = None) -> tuple[AggHeader, npt.NDArray[np.int32]]:
    """Header and values (native int32) of a payload; with ``k``, exactly K values."""
    h = decode_header(payload)
    body = len(payload) - HEADER_SIZE
    if body % 4:
        raise WireError(f"aggregation payload: {body} value bytes is not a multiple of 4")
    if k is not None and body != 4 * k:
        raise WireError(f"aggregation payload: {body // 4} values, expected K={k}")
    values = np.frombuffer(payload, dtype=VALUE_DTYPE, offset=HEADER_SIZE).astype(np.int32)
    return h, values
