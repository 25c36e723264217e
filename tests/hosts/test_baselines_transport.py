"""The transport of the host-based algorithms: the socket mesh (ordering, no deadlock
when both sides send at once, failures as errors rather than hangs) and its TCP set-up
on the loopback (retries until peers listen, the hello, the barrier)."""

from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest
from baseline_helpers import loopback_peers

from hosts.baselines.collective import Settings
from hosts.baselines.local import local_meshes, run_ranks
from hosts.baselines.mesh import MeshError, SocketMesh
from hosts.baselines.registry import get_collective
from hosts.baselines.tcp import (
    HELLO,
    ConnectError,
    PeerAddress,
    TcpMesh,
    connect_tcp_mesh,
    parse_peers,
)


def test_both_sides_sending_megabytes_at_once_does_not_deadlock() -> None:
    """Each rank posts 8 MB to the other before receiving: far beyond the socket
    buffers, so it completes only because every wait moves every posted message."""
    big = [np.full(2 << 20, r + 1, dtype=np.float32) for r in range(2)]

    def body(mesh: SocketMesh) -> np.ndarray:
        other = 1 - mesh.rank
        into = np.empty_like(big[0])
        sends = [mesh.isend(other, big[mesh.rank])]
        mesh.wait([*sends, mesh.irecv(other, into)])
        return into

    got = run_ranks(2, body)
    assert np.all(got[0] == 2) and np.all(got[1] == 1)


def test_messages_between_two_ranks_arrive_in_posting_order() -> None:
    def body(mesh: SocketMesh) -> list[bytes]:
        if mesh.rank == 0:
            mesh.wait([mesh.isend(1, bytes([i]) * (i + 1)) for i in range(50)])
            return []
        boxes = [bytearray(i + 1) for i in range(50)]
        mesh.wait([mesh.irecv(0, b) for b in boxes])
        return [bytes(b) for b in boxes]

    _, received = run_ranks(2, body)
    assert received == [bytes([i]) * (i + 1) for i in range(50)]


def test_traffic_counts_payload_and_barrier_apart() -> None:
    def body(mesh: SocketMesh) -> SocketMesh:
        mesh.barrier()
        peer = 1 - mesh.rank
        mesh.wait([mesh.isend(peer, b"x" * 1000), mesh.irecv(peer, bytearray(1000))])
        return mesh

    for mesh in run_ranks(2, body):
        t = mesh.traffic
        assert (t.bytes_sent, t.bytes_received, t.messages_sent) == (1000, 1000, 1)
        assert (t.control_bytes_sent, t.control_bytes_received) == (1, 1)


def test_a_rank_that_fails_makes_its_peers_fail_not_hang() -> None:
    seen: dict[int, BaseException] = {}
    ring = get_collective("ring")

    def body(mesh: SocketMesh) -> None:
        if mesh.rank == 2:
            raise RuntimeError("rank 2 gives up")
        try:
            ring.run(mesh, np.ones(100_000, np.float32), Settings())
        except MeshError as e:
            seen[mesh.rank] = e
            raise

    start = time.monotonic()
    with pytest.raises(RuntimeError, match="rank 2 gives up"):
        run_ranks(4, body, idle_timeout=30)
    assert time.monotonic() - start < 10
    assert seen, "no peer noticed"
    assert any("closed the connection" in str(e) or "rank 2" in str(e)
               for e in seen.values()), seen


def test_waiting_for_a_message_that_never_comes_times_out() -> None:
    meshes = local_meshes(2, idle_timeout=0.3)
    try:
        with pytest.raises(MeshError, match=r"rank 0: nothing moved for 0 s while waiting "
                                            r"for ranks \[1\]"):
            meshes[0].wait([meshes[0].irecv(1, bytearray(4))])
    finally:
        for m in meshes:
            m.close()


def test_posting_to_an_unknown_rank_or_into_read_only_memory_is_refused() -> None:
    meshes = local_meshes(2)
    try:
        with pytest.raises(MeshError, match="rank 0: no connection to rank 5"):
            meshes[0].isend(5, b"x")
        with pytest.raises(ValueError, match="read-only"):
            meshes[0].irecv(1, b"abc")
    finally:
        for m in meshes:
            m.close()


# ----------------------------------------------------------------------- TCP


def connect_all(peers: list[PeerAddress], delays: list[float], timeout: float = 20.0
                ) -> list[TcpMesh]:
    meshes: list[TcpMesh | None] = [None] * len(peers)
    errors: list[BaseException] = []

    def rank(r: int) -> None:
        time.sleep(delays[r])
        try:
            meshes[r] = connect_tcp_mesh(r, peers, timeout=timeout)
        except BaseException as e:  # noqa: B036 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(len(peers))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return [m for m in meshes if m is not None]


def test_tcp_mesh_retries_until_late_peers_listen_then_runs_an_allreduce() -> None:
    peers = loopback_peers(4)
    meshes = connect_all(peers, delays=[0.4, 0.0, 0.0, 0.2])  # rank 0 listens last
    try:
        assert sum(m.connect_retries for m in meshes) > 0
        xs = [np.arange(10_001, dtype=np.float32) * (r + 1) for r in range(4)]
        outs: list[np.ndarray] = [np.empty(0, np.float32)] * 4

        def rank(m: TcpMesh) -> None:
            m.barrier()
            outs[m.rank] = get_collective("hd").run(m, xs[m.rank], Settings()).values

        threads = [threading.Thread(target=rank, args=(m,)) for m in meshes]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for out in outs:
            assert np.array_equal(out, np.arange(10_001, dtype=np.float32) * 10)
        assert all(m.traffic.control_bytes_sent == 3 for m in meshes)
    finally:
        for m in meshes:
            m.close()


def test_a_peer_that_never_listens_is_named() -> None:
    peers = loopback_peers(2)
    start = time.monotonic()
    with pytest.raises(ConnectError, match=rf"rank 1: cannot connect to rank 0 at "
                                           rf"{peers[0]}: Connection refused"):
        connect_tcp_mesh(1, peers, timeout=0.5)
    assert time.monotonic() - start < 5


def test_a_stranger_is_refused_by_its_hello() -> None:
    peers = loopback_peers(2)

    def stranger() -> None:
        for _ in range(100):
            try:
                with socket.create_connection((peers[0].host, peers[0].port), 1) as s:
                    s.sendall(HELLO.pack(b"INAr", 1, 7))  # from a job of 7 ranks
                    time.sleep(0.5)
                    return
            except OSError:
                time.sleep(0.02)

    th = threading.Thread(target=stranger)
    th.start()
    with pytest.raises(ConnectError, match=r"rank 0: unexpected connection from 127\.[\d.]+:"
                                           r"\d+ \(hello 494e417200010007; expected one "
                                           r"from ranks \[1\] of 2\)"):
        connect_tcp_mesh(0, peers, timeout=10)
    th.join()


def test_listening_on_an_address_that_is_not_ours_is_an_error() -> None:
    with pytest.raises(ConnectError, match="rank 0: cannot listen on 192.0.2.1:48880: "
                                           "Cannot assign requested address"):
        connect_tcp_mesh(0, [PeerAddress("192.0.2.1", 48880), PeerAddress("127.0.0.1", 1)],
                         timeout=1)


def test_parse_peers() -> None:
    assert parse_peers("10.0.0.1,10.0.0.2:5000", 48880) == [
        PeerAddress("10.0.0.1", 48880), PeerAddress("10.0.0.2", 5000)]
    for text, message in [
        ("10.0.0.1,h2", r"peer 1 \('h2'\): 'h2' is not an IPv4 address"),
        ("10.0.0.1:0", r"peer 0 \('10.0.0.1:0'\): port '0' is not in \[1, 65535\]"),
        ("10.0.0.1,10.0.0.1", "the same address twice"),
        ("10.1", r"'10.1' is not an IPv4 address"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_peers(text)
