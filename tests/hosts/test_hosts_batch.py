"""Batches of payloads (``hosts.batch``) and the batched UDP socket (``hosts.mmsg``):
the bytes that go out and come back, row by row."""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator

import numpy as np
import pytest

from hosts.batch import Datagrams, join, packet_list
from hosts.mmsg import MmsgSocket
from hosts.wire import HEADER, VALUE_DTYPE


def payload(slot: int, values: list[int], flags: int = 1) -> bytes:
    return (HEADER.pack(3, slot, slot & 1, flags, -slot, 2, 1000 + slot)
            + np.array(values, dtype=VALUE_DTYPE).tobytes())


def test_datagrams_of_payloads_give_back_headers_values_and_bytes() -> None:
    payloads = [payload(1, [1, -2]), payload(2, [3, 4])[:12], payload(3, [-5, 2**31 - 1])]
    batch = Datagrams.of(payloads)
    assert batch.stride == 20 and batch.lengths == [20, 12, 20] and len(batch) == 3
    assert list(batch) == payloads
    assert list(batch.headers()) == [(3, s, s & 1, 1, -s, 2, 1000 + s) for s in (1, 2, 3)]
    assert batch.values(2, [0, 2]).tolist() == [[1, -2], [-5, 2**31 - 1]]
    assert batch.values(2, slice(2, 3)).tolist() == [[-5, 2**31 - 1]]
    with pytest.raises(ValueError, match="rows of 20 bytes cannot hold 3 values"):
        batch.values(3, [0])


def test_a_word_view_gives_the_same_values() -> None:
    rows = np.zeros((2, 24), dtype=np.uint8)
    rows[0, :16] = np.frombuffer(payload(1, [7]), dtype=np.uint8)
    rows[1, :20] = np.frombuffer(payload(2, [8, -9]), dtype=np.uint8)
    batch = Datagrams(rows.data, 24, [16, 20], rows.view(VALUE_DTYPE))
    assert batch.values(1, [1, 0]).tolist() == [[8], [7]]
    assert Datagrams(rows.data, 24, [16, 20]).values(1, [1, 0]).tolist() == [[8], [7]]
    assert [h[1] for h in batch.headers()] == [1, 2]


def test_packets_as_bytes_and_joined() -> None:
    a = np.arange(8, dtype=np.uint8).reshape(2, 4)
    b = np.full((1, 4), 9, dtype=np.uint8)
    empty = np.zeros((0, 4), dtype=np.uint8)
    assert packet_list(join(a, b)) == [bytes([0, 1, 2, 3]), bytes([4, 5, 6, 7]), bytes([9] * 4)]
    assert join(empty, b) is b and join(a, empty) is a


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    socks = []
    for _ in range(2):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        socks.append(s)
    yield socks[0], socks[1]
    for s in socks:
        s.close()


def wait_readable(sock: socket.socket) -> None:
    assert select.select([sock], [], [], 2.0)[0], "nothing arrived"


def test_rows_sent_in_one_call_arrive_as_one_batch(
        pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    tx = MmsgSocket(a, b.getsockname(), rows=4)
    rx = MmsgSocket(b, a.getsockname(), rows=16, stride=32)
    packets = np.arange(10 * 20, dtype=np.uint8).reshape(10, 20)  # more rows than 4
    tx.send(packets)
    wait_readable(b)
    batch = rx.recv()
    assert batch.lengths == [20] * 10 and list(batch) == packet_list(packets)
    assert not rx.recv().lengths  # nothing left: an empty batch, no error


def test_a_datagram_longer_than_a_row_is_cut(pair: tuple[socket.socket, socket.socket]
                                             ) -> None:
    a, b = pair
    rx = MmsgSocket(b, a.getsockname(), rows=4, stride=16)
    a.sendto(bytes(range(40)), b.getsockname())
    a.sendto(b"short", b.getsockname())
    wait_readable(b)
    got: list[bytes] = []
    for _ in range(50):
        got += list(rx.recv())
        if len(got) == 2:
            break
    assert got == [bytes(range(16)), b"short"]


def test_a_row_stride_must_hold_whole_words(pair: tuple[socket.socket, socket.socket]
                                            ) -> None:
    a, b = pair
    with pytest.raises(ValueError, match="stride 30 is not a multiple of 4"):
        MmsgSocket(a, b.getsockname(), stride=30)
