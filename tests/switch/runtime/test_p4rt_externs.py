"""Counters, meters, registers, value sets, digest configs and the PRE over gRPC."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4data_pb2, p4runtime_pb2
from p4rt_helpers import (
    Client,
    eth,
    exact,
    expect_code,
    optional,
    table_entry,
    ternary,
    update,
)

from switch.runtime import P4RuntimeServer

Code = grpc.StatusCode
Entity = p4runtime_pb2.Entity


@pytest.fixture
def ids(compiled):  # type: ignore[no-untyped-def]
    return compiled.names


def counter_entry(cid: int, index: int | None = None, packets: int | None = None,
                  nbytes: int = 0) -> Entity:
    ent = Entity()
    ent.counter_entry.counter_id = cid
    if index is not None:
        ent.counter_entry.index.index = index
    if packets is not None:
        ent.counter_entry.data.packet_count = packets
        ent.counter_entry.data.byte_count = nbytes
    return ent


def test_counters(client: Client, ids, server: P4RuntimeServer) -> None:  # type: ignore[no-untyped-def]
    cid = ids.counter_id("port_counter")
    client.write(update("MODIFY", counter_entry(cid, 3, 10, 1000)))
    [e] = client.read(counter_entry(cid, 3))
    assert (e.counter_entry.data.packet_count, e.counter_entry.data.byte_count) == (10, 1000)
    cells = client.read(counter_entry(cid))  # index unset: every cell
    assert [c.counter_entry.index.index for c in cells] == list(range(8))
    assert len(client.read(counter_entry(0))) == 8  # id 0: every counter
    client.write(update("MODIFY", counter_entry(cid, None, 1, 2)))  # every cell
    assert {c.counter_entry.data.packet_count for c in client.read(counter_entry(cid))} == {1}

    # the data plane counts: the keyless stats table runs count_port
    stats = table_entry(ids.table_id("stats"), [], ids.action_id("count_port"),
                        is_default_action=True)
    client.write(update("MODIFY", stats))
    server.inject(2, eth(0x77))
    [e] = client.read(counter_entry(cid, 2))
    assert e.counter_entry.data.packet_count == 2

    expect_code(Code.OUT_OF_RANGE, client.write, update("MODIFY", counter_entry(cid, 8, 1)))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("MODIFY", counter_entry(cid, -1, 1)))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", counter_entry(cid, 1, 1)))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("DELETE", counter_entry(cid, 1)))
    # an id the P4Info lacks is INVALID_ARGUMENT, as BMv2 answers
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("MODIFY", counter_entry(0x12FFFFFF, 1, 1)))


def test_direct_counter_entries(client: Client, ids, server: P4RuntimeServer) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("fwd")
    client.write(update("INSERT", table_entry(t, [exact(1, b"\x01")], ids.action_id("drop"))))
    dc = Entity()
    dc.direct_counter_entry.table_entry.table_id = t
    dc.direct_counter_entry.table_entry.match.append(exact(1, b"\x01"))
    dc.direct_counter_entry.data.packet_count = 4
    dc.direct_counter_entry.data.byte_count = 40
    client.write(update("MODIFY", dc))
    [e] = client.read(dc)
    assert e.direct_counter_entry.data.packet_count == 4
    assert e.direct_counter_entry.table_entry.match[0].exact.value == b"\x01"
    frame = eth(0x01)
    server.inject(1, frame)  # the entry is hit: the data plane counts
    [e] = client.read(dc)
    data = e.direct_counter_entry.data
    assert (data.packet_count, data.byte_count) == (5, 40 + len(frame))
    wildcard = Entity()
    wildcard.direct_counter_entry.table_entry.table_id = 0
    assert len(client.read(wildcard)) == 1
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", dc))
    dc.direct_counter_entry.table_entry.match[0].exact.value = b"\x02"
    expect_code(Code.NOT_FOUND, client.write, update("MODIFY", dc))
    other = Entity()
    other.direct_counter_entry.table_entry.table_id = ids.table_id("routes")
    with pytest.raises(grpc.RpcError):  # routes has no direct counter
        client.read(other)


def test_meters(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    mid = ids.meter_id("port_meter")
    ent = Entity()
    ent.meter_entry.meter_id = mid
    ent.meter_entry.index.index = 1
    ent.meter_entry.config.cir = 1000
    ent.meter_entry.config.cburst = 100
    ent.meter_entry.config.pir = 2000
    ent.meter_entry.config.pburst = 200
    client.write(update("MODIFY", ent))
    read = Entity()
    read.meter_entry.meter_id = mid
    cells = {c.meter_entry.index.index: c.meter_entry for c in client.read(read)}
    assert len(cells) == 4
    assert cells[1].config == ent.meter_entry.config
    assert not cells[0].HasField("config")

    reset = Entity()
    reset.meter_entry.meter_id = mid
    reset.meter_entry.index.index = 1
    client.write(update("MODIFY", reset))  # no config: back to the default
    assert not client.read(reset)[0].meter_entry.HasField("config")

    ent.meter_entry.config.eburst = 5  # a two-rate meter has no eburst
    expect_code(Code.INVALID_ARGUMENT, client.write, update("MODIFY", ent))
    ent.meter_entry.config.eburst = 0
    ent.meter_entry.config.cir = 5000  # cir > pir
    expect_code(Code.INVALID_ARGUMENT, client.write, update("MODIFY", ent))
    ent.meter_entry.index.index = 4
    expect_code(Code.OUT_OF_RANGE, client.write, update("MODIFY", ent))
    colors = Entity()
    colors.meter_entry.meter_id = mid
    colors.meter_entry.counter_data.SetInParent()
    expect_code(Code.UNIMPLEMENTED, client.write, update("MODIFY", colors))


def test_direct_meter_entries(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("acl")
    client.write(update("INSERT", table_entry(t, [optional(3, b"\x07")],
                                              ids.action_id("acl_mark"), priority=5)))
    dm = Entity()
    dm.direct_meter_entry.table_entry.table_id = t
    dm.direct_meter_entry.table_entry.match.append(optional(3, b"\x07"))
    dm.direct_meter_entry.table_entry.priority = 5
    dm.direct_meter_entry.config.cir = 10
    dm.direct_meter_entry.config.cburst = 1
    dm.direct_meter_entry.config.pir = 20
    dm.direct_meter_entry.config.pburst = 2
    client.write(update("MODIFY", dm))
    [e] = client.read(dm)
    assert e.direct_meter_entry.config == dm.direct_meter_entry.config
    [te] = client.read(table_entry(t, meter_config=p4runtime_pb2.MeterConfig()))
    assert te.table_entry.meter_config == dm.direct_meter_entry.config
    expect_code(Code.INVALID_ARGUMENT, client.write, update("DELETE", dm))


def register_entry(rid: int, index: int | None = None,
                   data: p4data_pb2.P4Data | None = None) -> Entity:
    ent = Entity()
    ent.register_entry.register_id = rid
    if index is not None:
        ent.register_entry.index.index = index
    if data is not None:
        ent.register_entry.data.CopyFrom(data)
    return ent


def test_registers(client: Client, ids, server: P4RuntimeServer) -> None:  # type: ignore[no-untyped-def]
    rid = ids.register_id("reg32")
    client.write(update("MODIFY", register_entry(rid, 5, p4data_pb2.P4Data(
        bitstring=b"\x00\x00\x12\x34"))))
    [e] = client.read(register_entry(rid, 5))
    assert e.register_entry.data.bitstring == b"\x12\x34"
    assert server.switch.register_read("TestIngress.reg32", 5) == 0x1234
    assert len(client.read(register_entry(rid))) == 16
    assert len(client.read(register_entry(0))) == 16 + 4

    sid = ids.register_id("sreg")
    client.write(update("MODIFY", register_entry(sid, 1, p4data_pb2.P4Data(bitstring=b"\xff"))))
    [e] = client.read(register_entry(sid, 1))
    assert e.register_entry.data.bitstring == b"\xff"  # -1 as int<16>, canonical
    assert server.switch.register_read("TestIngress.sreg", 1) == -1

    expect_code(Code.INVALID_ARGUMENT, client.write, update("MODIFY", register_entry(
        rid, 1, p4data_pb2.P4Data(bitstring=b"\x01\x00\x00\x00\x00"))))
    expect_code(Code.OUT_OF_RANGE, client.write, update("MODIFY", register_entry(
        rid, 16, p4data_pb2.P4Data(bitstring=b"\x01"))))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("MODIFY", register_entry(
        rid, 1, p4data_pb2.P4Data(bool=True))))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", register_entry(
        rid, 1, p4data_pb2.P4Data(bitstring=b"\x01"))))
    client.write(update("MODIFY", register_entry(rid, None, p4data_pb2.P4Data(
        bitstring=b"\x07"))))  # every cell
    assert {e.register_entry.data.bitstring for e in client.read(register_entry(rid))} == {
        b"\x07"}


def test_value_sets(client: Client, ids, server: P4RuntimeServer) -> None:  # type: ignore[no-untyped-def]
    vid = ids.value_set_id("special_types")
    ent = Entity()
    ent.value_set_entry.value_set_id = vid
    ent.value_set_entry.members.add().match.append(exact(1, b"\x00\x88\xb5"))
    ent.value_set_entry.members.add().match.append(exact(1, b"\x88\xb6"))
    client.write(update("MODIFY", ent))
    [e] = client.read(ent)
    assert [m.match[0].exact.value for m in e.value_set_entry.members] == [b"\x88\xb5",
                                                                           b"\x88\xb6"]
    server.inject(1, eth(0x42, etype=0x88B6))  # the parser marks it; ingress writes reg32[0]
    assert server.switch.register_read("TestIngress.reg32", 0) == 1

    dup = Entity()
    dup.value_set_entry.value_set_id = vid
    for _ in range(2):
        dup.value_set_entry.members.add().match.append(exact(1, b"\x01"))
    expect_code(Code.ALREADY_EXISTS, client.write, update("MODIFY", dup))
    full = Entity()
    full.value_set_entry.value_set_id = vid
    for i in range(5):
        full.value_set_entry.members.add().match.append(exact(1, bytes([i + 1])))
    expect_code(Code.RESOURCE_EXHAUSTED, client.write, update("MODIFY", full))
    wrong = Entity()
    wrong.value_set_entry.value_set_id = vid
    wrong.value_set_entry.members.add().match.append(ternary(1, b"\x01", b"\x01"))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("MODIFY", wrong))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", ent))
    empty = Entity()
    empty.value_set_entry.value_set_id = vid
    client.write(update("MODIFY", empty))
    assert len(client.read(empty)[0].value_set_entry.members) == 0


def test_digest_entries(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    did = ids.digest_id("learn_t")
    ent = Entity()
    ent.digest_entry.digest_id = did
    ent.digest_entry.config.max_list_size = 4
    ent.digest_entry.config.max_timeout_ns = 1000
    expect_code(Code.NOT_FOUND, client.write, update("MODIFY", ent))
    client.write(update("INSERT", ent))
    expect_code(Code.ALREADY_EXISTS, client.write, update("INSERT", ent))
    ent.digest_entry.config.ack_timeout_ns = 5
    client.write(update("MODIFY", ent))
    wildcard = Entity()
    wildcard.digest_entry.SetInParent()
    [e] = client.read(wildcard)
    assert e.digest_entry.config.ack_timeout_ns == 5
    client.write(update("DELETE", ent))
    assert client.read(wildcard) == []
    expect_code(Code.NOT_FOUND, client.read, ent)  # a given digest: as BMv2 answers
    expect_code(Code.NOT_FOUND, client.write, update("DELETE", ent))
    bad = Entity()
    bad.digest_entry.digest_id = 0x17FFFFFF  # unlike other unknown ids, as BMv2 answers
    expect_code(Code.NOT_FOUND, client.write, update("INSERT", bad))


def pre_group(gid: int, *replicas: tuple[int, int], port_bytes: bool = False) -> Entity:
    ent = Entity()
    g = ent.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = gid
    for port, rid in replicas:
        r = g.replicas.add(instance=rid)
        if port_bytes:
            r.port = port.to_bytes(4, "big")
        else:
            r.egress_port = port
    return ent


def test_multicast_groups(client: Client, ids, server: P4RuntimeServer) -> None:  # type: ignore[no-untyped-def]
    client.write(update("INSERT", pre_group(7, (1, 1), (2, 1))))
    client.write(update("INSERT", pre_group(8, (3, 0), port_bytes=True)))
    groups = client.read(pre_group(0))
    assert [g.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
            for g in groups] == [7, 8]
    [g8] = client.read(pre_group(8))
    assert g8.packet_replication_engine_entry.multicast_group_entry.replicas[0].port == (
        b"\x00\x00\x00\x03")  # read back as written
    assert server.switch.mc_groups()[7] == [(1, 1), (2, 1)]

    # packets to group 7 go out of ports 1 and 2
    route = table_entry(ids.table_id("routes"), [], ids.action_id("set_mcast"), [b"\x07"])
    client.write(update("INSERT", route))
    assert sorted(p for p, _ in server.inject(4, eth(0x99))) == [1, 2]

    client.write(update("MODIFY", pre_group(7, (5, 2))))
    assert server.switch.mc_groups()[7] == [(5, 2)]
    expect_code(Code.ALREADY_EXISTS, client.write, update("INSERT", pre_group(7, (1, 1))))
    expect_code(Code.NOT_FOUND, client.write, update("MODIFY", pre_group(9, (1, 1))))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", pre_group(0, (1, 1))))
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("INSERT", pre_group(10, (1, 1), (1, 1))))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", pre_group(10, (600, 1))))
    client.write(update("DELETE", pre_group(7)))
    expect_code(Code.NOT_FOUND, client.write, update("DELETE", pre_group(7)))
    assert 7 not in server.switch.mc_groups()
    expect_code(Code.NOT_FOUND, client.read, pre_group(7))  # as BMv2 answers


def test_clone_sessions(client: Client, server: P4RuntimeServer) -> None:
    ent = Entity()
    s = ent.packet_replication_engine_entry.clone_session_entry
    s.session_id = 5
    s.replicas.add(egress_port=3, instance=1)
    s.class_of_service = 2
    s.packet_length_bytes = 64
    client.write(update("INSERT", ent))
    read = Entity()
    read.packet_replication_engine_entry.clone_session_entry.session_id = 0
    [e] = client.read(read)
    assert e.packet_replication_engine_entry.clone_session_entry == s
    assert server.switch.clone_session_get(5) == ([(3, 1)], 64)
    expect_code(Code.ALREADY_EXISTS, client.write, update("INSERT", ent))
    s.class_of_service = 9
    expect_code(Code.INVALID_ARGUMENT, client.write, update("MODIFY", ent))
    s.session_id = 0
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", ent))
    s.session_id = 5
    client.write(update("DELETE", ent))
    assert client.read(read) == []
    expect_code(Code.NOT_FOUND, client.read, ent)  # a given session: as BMv2 answers


def test_unsupported_entities(client: Client) -> None:
    member = Entity()
    member.action_profile_member.action_profile_id = 0x11000001  # not in this program
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", member))
    extern = Entity()
    extern.extern_entry.extern_type_id = 0x81
    expect_code(Code.UNIMPLEMENTED, client.write, update("INSERT", extern))
