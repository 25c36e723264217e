"""StreamChannel: arbitration, packet-out/packet-in through the test program, digests."""

from __future__ import annotations

import queue
import time

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from p4rt_helpers import (
    Client,
    drain,
    eth,
    exact,
    expect_code,
    lpm,
    table_entry,
    update,
)

from switch.runtime import P4RuntimeServer

Code = grpc.StatusCode


@pytest.fixture
def ids(compiled):  # type: ignore[no-untyped-def]
    return compiled.names


def status(msg: p4runtime_pb2.StreamMessageResponse) -> int:
    return msg.arbitration.status.code


def election(msg: p4runtime_pb2.StreamMessageResponse) -> tuple[int, int]:
    eid = msg.arbitration.election_id
    return eid.high, eid.low


def test_arbitration_two_clients(address: str, clients: list[Client], compiled) -> None:  # type: ignore[no-untyped-def]
    a = Client(address, arbitrate=False)
    clients.append(a)
    first = a.arbitrate((0, 5))
    assert status(first) == code_pb2.OK and election(first) == (0, 5)

    b = Client(address, arbitrate=False)
    clients.append(b)
    second = b.arbitrate((0, 3))  # lower: a backup, only b is told
    assert status(second) == code_pb2.ALREADY_EXISTS and election(second) == (0, 5)
    assert drain(a.arbitration) == []

    a.set_pipeline(compiled.p4info, compiled.device_config)
    expect_code(Code.PERMISSION_DENIED, b.set_pipeline, compiled.p4info,
                compiled.device_config)
    route = table_entry(compiled.names.table_id("routes"), [lpm(1, b"\x01", 48)],
                        compiled.names.action_id("NoAction"))
    expect_code(Code.PERMISSION_DENIED, b.write, update("INSERT", route))
    assert b.read(table_entry(0)) is not None  # backups may read
    a.write(update("INSERT", route))

    # b takes over with a higher election id: everyone is told
    promoted = b.arbitrate((1, 0))
    assert status(promoted) == code_pb2.OK
    demoted = a.arbitration.get(timeout=5)
    assert status(demoted) == code_pb2.ALREADY_EXISTS and election(demoted) == (1, 0)
    expect_code(Code.PERMISSION_DENIED, a.write, update("DELETE", route))
    b.write(update("DELETE", route))

    # the primary leaves: no primary until an election id at least as high arrives
    b.close()
    clients.remove(b)
    alone = a.arbitration.get(timeout=5)
    assert status(alone) == code_pb2.NOT_FOUND and election(alone) == (1, 0)
    e = expect_code(Code.PERMISSION_DENIED, a.write, update("INSERT", route))
    assert "there is no primary controller" in e.details()
    assert status(a.arbitrate((0, 6))) == code_pb2.NOT_FOUND  # still below (1, 0)
    assert status(a.arbitrate((1, 0))) == code_pb2.OK
    a.write(update("INSERT", route))


def test_arbitration_errors(address: str, clients: list[Client]) -> None:
    a = Client(address, election_id=(0, 7))
    clients.append(a)
    dup = Client(address, arbitrate=False)
    clients.append(dup)
    dup.send(_arbitration(1, (0, 7)))
    assert dup.stream_done.wait(5) and dup.stream_status.code() == Code.INVALID_ARGUMENT

    wrong = Client(address, arbitrate=False)
    clients.append(wrong)
    wrong.send(_arbitration(99, (0, 8)))
    assert wrong.stream_done.wait(5) and wrong.stream_status.code() == Code.NOT_FOUND

    role = Client(address, arbitrate=False)
    clients.append(role)
    req = _arbitration(1, (0, 9))
    req.arbitration.role.name = "tables-only"
    role.send(req)
    assert role.stream_done.wait(5) and role.stream_status.code() == Code.UNIMPLEMENTED

    no_id = Client(address, arbitrate=False)
    clients.append(no_id)
    backup = no_id.arbitrate(None)  # no election id: a backup for good
    assert status(backup) == code_pb2.ALREADY_EXISTS


def _arbitration(device_id: int, eid: tuple[int, int]) -> p4runtime_pb2.StreamMessageRequest:
    req = p4runtime_pb2.StreamMessageRequest()
    req.arbitration.device_id = device_id
    req.arbitration.election_id.high, req.arbitration.election_id.low = eid
    return req


def test_writes_need_a_primary(address: str, clients: list[Client], compiled) -> None:  # type: ignore[no-untyped-def]
    lone = Client(address, election_id=(0, 1), arbitrate=False)
    clients.append(lone)
    expect_code(Code.PERMISSION_DENIED, lone.set_pipeline, compiled.p4info,
                compiled.device_config)


def test_packet_out_and_packet_in(client: Client, ids, server: P4RuntimeServer, outputs  # type: ignore[no-untyped-def]
                                  ) -> None:
    # packet-out: the packet_out header goes in front; the program sends it to port 2
    frame = eth(0x05, payload=b"out")
    client.packet_out(frame, m1=2)  # metadata 1 = egress_port; @padding _pad left out
    deadline = time.monotonic() + 5
    while not outputs.frames and time.monotonic() < deadline:
        time.sleep(0.01)
    assert outputs.frames == [(2, frame)]

    # packet-in: routes sends dst 0x01 to the CPU with the packet_in header
    client.write(update("INSERT", table_entry(ids.table_id("routes"), [lpm(1, b"\x01", 48)],
                                              ids.action_id("to_cpu"))))
    frame = eth(0x01, payload=b"in")
    assert server.inject(6, frame) == []  # the CPU-port copy is not a data-plane output
    msg = client.packets.get(timeout=5)
    assert msg.packet.payload == frame
    md = {m.metadata_id: m.value for m in msg.packet.metadata}
    assert md == {1: b"\x06", 2: b"\x00"}  # ingress_port 6, canonical bytes


def test_bad_packet_outs_get_stream_errors(client: Client, address: str,
                                           clients: list[Client], outputs) -> None:  # type: ignore[no-untyped-def]
    client.packet_out(b"x", m9=1)  # unknown metadata id
    err = client.errors.get(timeout=5).error
    assert err.canonical_code == Code.INVALID_ARGUMENT.value[0]
    assert err.packet_out.packet_out.payload == b"x"
    client.packet_out(b"x")  # egress_port missing
    assert client.errors.get(timeout=5).error.canonical_code == Code.INVALID_ARGUMENT.value[0]
    client.packet_out(b"x", m1=0x200)  # 10 bits for a 9-bit field
    assert client.errors.get(timeout=5).error.canonical_code == (
        Code.INVALID_ARGUMENT.value[0])

    backup = Client(address, election_id=(0, 1))
    clients.append(backup)
    backup.packet_out(eth(1), m1=2)
    assert backup.errors.get(timeout=5).error.canonical_code == (
        Code.PERMISSION_DENIED.value[0])
    time.sleep(0.1)
    assert outputs.frames == []


def test_digests(client: Client, ids, server: P4RuntimeServer) -> None:  # type: ignore[no-untyped-def]
    did = ids.digest_id("learn_t")
    server.inject(1, eth(0x10, src=0x0A))  # not enabled yet: dropped
    server.flush_digests()
    assert drain(client.digests) == []

    ent = p4runtime_pb2.Entity()
    ent.digest_entry.digest_id = did
    ent.digest_entry.config.max_list_size = 2
    ent.digest_entry.config.max_timeout_ns = 10_000_000_000  # lists are sent when full
    ent.digest_entry.config.ack_timeout_ns = 10_000_000_000
    client.write(update("INSERT", ent))
    server.inject(1, eth(0x10, src=0x0A))
    server.inject(1, eth(0x10, src=0x0A))  # a duplicate of a buffered message
    server.inject(2, eth(0x10, src=0x0B))
    msg = client.digests.get(timeout=5).digest
    assert msg.digest_id == did and msg.list_id >= 1
    learned = [(m.struct.members[0].bitstring, m.struct.members[1].bitstring) for m in msg.data]
    assert learned == [(b"\x0a", b"\x01"), (b"\x0b", b"\x02")]

    # until the list is acknowledged, the same messages are not sent again
    server.inject(1, eth(0x10, src=0x0A))
    server.inject(2, eth(0x10, src=0x0B))
    server.flush_digests()
    time.sleep(0.05)
    assert drain(client.digests) == []
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id = did
    ack.digest_ack.list_id = msg.list_id
    client.send(ack)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        server.inject(1, eth(0x10, src=0x0A))
        server.inject(2, eth(0x10, src=0x0B))
        try:
            again = client.digests.get(timeout=0.1).digest
            break
        except queue.Empty:
            continue
    assert len(again.data) == 2 and again.list_id != msg.list_id

    # once learned in smac, the source is not reported again
    client.write(update("INSERT", table_entry(ids.table_id("smac"), [exact(1, b"\x0c")],
                                              ids.action_id("NoAction"))))
    ent.digest_entry.config.max_list_size = 1
    ent.digest_entry.config.ack_timeout_ns = 0
    client.write(update("MODIFY", ent))
    server.inject(1, eth(0x10, src=0x0C))
    server.inject(3, eth(0x10, src=0x0D))
    msg = client.digests.get(timeout=5).digest
    assert [m.struct.members[0].bitstring for m in msg.data] == [b"\x0d"]

    bad_ack = p4runtime_pb2.StreamMessageRequest()
    bad_ack.digest_ack.digest_id = 12345
    client.send(bad_ack)
    err = client.errors.get(timeout=5).error
    assert err.canonical_code == Code.INVALID_ARGUMENT.value[0]
    assert err.HasField("digest_list_ack")


class _FakeContext:
    def peer(self) -> str:
        return "fake"


def test_stream_errors_are_dropped_when_the_client_does_not_read(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # a client flooding bad messages without reading once grew the error queue forever
    from switch.runtime import stream
    from switch.runtime.arbitration import Arbiter

    monkeypatch.setattr(stream, "MAX_QUEUED", 3)
    handler = stream.StreamHandler(Arbiter(1), lambda c, r: None, iter(()),
                                   _FakeContext())  # type: ignore[arg-type]
    for _ in range(5):
        assert handler._handle(p4runtime_pb2.StreamMessageRequest())  # each one an error
    assert handler.out.qsize() == 3 and handler.dropped == 2
    assert handler.out.get_nowait().error.message == "empty stream message"


def test_a_primary_that_lowers_its_election_id_leaves_no_primary(address: str,
                                                                   clients: list[Client]
                                                                   ) -> None:
    a = Client(address, election_id=(0, 9))
    b = Client(address, election_id=(0, 4))
    clients.extend([a, b])
    lowered = a.arbitrate((0, 2))  # below b, but b is not promoted either
    assert status(lowered) == code_pb2.NOT_FOUND and election(lowered) == (0, 9)
    told = b.arbitration.get(timeout=5)
    assert status(told) == code_pb2.NOT_FOUND and election(told) == (0, 9)


def test_arbitration_answers_are_bounded_for_a_client_that_does_not_read(monkeypatch  # type: ignore[no-untyped-def]
                                                                         ) -> None:
    from switch.runtime import stream
    from switch.runtime.arbitration import Arbiter

    monkeypatch.setattr(stream, "MAX_QUEUED", 3)
    handler = stream.StreamHandler(Arbiter(1), lambda c, r: None, iter(()),
                                   _FakeContext())  # type: ignore[arg-type]
    for _ in range(10):  # every update is answered...
        assert handler._handle(_arbitration(1, (0, 1)))
    assert handler.out.qsize() == 6 and handler.dropped == 4  # ...up to twice the limit
    assert handler.out.get_nowait().arbitration.status.code == code_pb2.OK
