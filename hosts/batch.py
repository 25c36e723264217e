"""Batches of aggregation payloads in one buffer: what a worker receives per wake-up
(``Datagrams``) and what it sends (``Packets``).

A worker handles whatever has queued up on its socket in one pass, and answers with
one batch, so neither side keeps a Python ``bytes`` object per packet: the transport
receives into one preallocated buffer (a row of ``stride`` bytes per datagram), the
state machine reads every header with one ``struct`` call and every value with one
numpy view, and writes its answers as the rows of one array that the transport sends
with one system call.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from hosts.wire import HEADER, HEADER_SIZE, VALUE_DTYPE

_VALUES_AT = HEADER_SIZE // 4
"""The first value's position in a row of int32 words."""

Packets = npt.NDArray[np.uint8]
"""Outgoing payloads of one size: one per row of a C-contiguous (count, size) array."""


def packet_list(packets: Packets) -> list[bytes]:
    """The rows of ``packets`` as ``bytes``, one per payload."""
    return [row.tobytes() for row in packets]


def join(first: Packets, second: Packets) -> Packets:
    """``first`` then ``second`` (either may be empty; non-empty ones share a size)."""
    if not len(second):
        return first
    if not len(first):
        return second
    return np.concatenate((first, second))


@lru_cache(maxsize=8)
def _row_struct(stride: int) -> struct.Struct:
    """The aggregation header at the start of a row of ``stride`` bytes."""
    return struct.Struct(f"{HEADER.format}{stride - HEADER_SIZE}x")


@dataclass(frozen=True)
class Datagrams:
    """Received payloads: payload i is ``lengths[i]`` bytes at ``buffer[i * stride:]``.

    ``buffer`` (``bytes``, or a memoryview such as an array's ``data``) holds at
    least ``len(lengths) * stride`` bytes, and ``stride`` is at least the header's
    size; a transport may reuse its buffer on its next ``recv``."""

    buffer: bytes | bytearray | memoryview
    stride: int
    lengths: list[int]
    words: npt.NDArray[np.int32] | None = None
    """The buffer as rows of ``stride / 4`` big-endian int32, if the receiver keeps
    such a view (it saves making one per batch)."""

    @classmethod
    def of(cls, payloads: Sequence[bytes]) -> Datagrams:
        """The payloads copied into one buffer (rows as long as the longest)."""
        stride = max([HEADER_SIZE, *map(len, payloads)])
        buffer = b"".join(p.ljust(stride, b"\0") for p in payloads)
        return cls(buffer, stride, [len(p) for p in payloads])

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[bytes]:
        view = memoryview(self.buffer).cast("B")
        for i, n in enumerate(self.lengths):
            yield bytes(view[i * self.stride:i * self.stride + n])

    def headers(self) -> Iterator[tuple[int, int, int, int, int, int, int]]:
        """Each row's header fields (``hosts.wire.HEADER``), whatever its length: a row
        shorter than the header reads the bytes after it."""
        count = len(self.lengths)
        if not count:
            return iter(())
        view = memoryview(self.buffer).cast("B")[:count * self.stride]
        return _row_struct(self.stride).iter_unpack(view)  # type: ignore[return-value]

    def values(self, k: int, rows: slice | list[int]) -> npt.NDArray[np.int32]:
        """The K values after the header of ``rows`` (big-endian int32; a view for a
        slice)."""
        if self.stride < HEADER_SIZE + 4 * k:
            raise ValueError(f"datagrams: rows of {self.stride} bytes cannot hold "
                             f"{k} values")
        if self.words is not None:
            return self.words[rows, _VALUES_AT:_VALUES_AT + k]
        every = np.ndarray((len(self.lengths), k), dtype=VALUE_DTYPE, buffer=self.buffer,
                           offset=HEADER_SIZE, strides=(self.stride, 4))
        return every[rows]


NO_DATAGRAMS = Datagrams(b"", HEADER_SIZE, [])
