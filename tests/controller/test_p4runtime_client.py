"""The P4Runtime client against the built-in switch's P4Runtime server (in process)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from p4runtime_client_helpers import Pipeline, Switch

from controller import (
    ArbitrationError,
    CloneSession,
    EncodeError,
    Exact,
    Lpm,
    MulticastGroup,
    NoPipelineError,
    Optional,
    P4RuntimeClient,
    Range,
    Replica,
    RpcError,
    SchemaError,
    TableEntry,
    Ternary,
    WriteError,
)
from controller.entities import encode_table_entry


def route(prefix: str, port: int, mac: str = "00:00:00:00:01:01") -> TableEntry:
    return TableEntry("routes", {"hdr.ipv4.dst": prefix}, "route",
                      {"port": port, "dst_mac": mac})


def ipv4_frame(dst: str, src_mac: int = 0xAA) -> bytes:
    a, b, c, d = (int(x) for x in dst.split("."))
    ip = bytes([0x45, 0, 0, 20, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, a, b, c, d])
    return (b"\x00\x00\x00\x00\x00\x01" + src_mac.to_bytes(6, "big") + b"\x08\x00" + ip)


def test_lpm_entry_insert_read_modify_delete(client: P4RuntimeClient, switch: Switch) -> None:
    client.insert(route("10.0.1.0/24", 1), route("10.0.0.0/8", 3))
    entries = {e.match["hdr.ipv4.dst"]: e for e in client.read_table("routes")}
    assert set(entries) == {Lpm(0x0A000100, 24), Lpm(0x0A000000, 8)}
    entry = entries[Lpm(0x0A000100, 24)]
    assert entry.table == "CtlIngress.routes"
    assert entry.action == "CtlIngress.route"
    assert entry.params == {"port": 1, "dst_mac": 0x000000000101}
    assert [p for p, _ in switch.server.inject(1, ipv4_frame("10.0.1.9"))] == [1]
    assert [p for p, _ in switch.server.inject(1, ipv4_frame("10.7.0.1"))] == [3]

    client.modify(route("10.0.1.0/24", 4))
    [got] = client.read_table("routes", {"hdr.ipv4.dst": "10.0.1.0/24"})
    assert got.params["port"] == 4
    assert [p for p, _ in switch.server.inject(1, ipv4_frame("10.0.1.9"))] == [4]

    client.delete(route("10.0.1.0/24", 4))
    assert [e.match["hdr.ipv4.dst"] for e in client.read_table("routes")] == [
        Lpm(0x0A000000, 8)]


def test_written_bytes_are_canonical(client: P4RuntimeClient) -> None:
    ent = encode_table_entry(client.schema, route("10.0.1.0/24", 1, "00:00:00:00:00:0a"))
    te = ent.table_entry
    assert te.match[0].lpm.value == b"\x0a\x00\x01\x00"
    assert te.match[0].lpm.prefix_len == 24
    assert [p.value for p in te.action.action.params] == [b"\x01", b"\x0a"]


def test_read_back_entry_equals_the_written_one(client: P4RuntimeClient) -> None:
    entry = TableEntry("CtlIngress.l2", {"hdr.ethernet.dst": Exact(0xAABBCCDDEEFF)},
                       "CtlIngress.forward", {"port": 5})
    client.insert(TableEntry("l2", {"dst": "aa:bb:cc:dd:ee:ff"}, "forward", {"port": "5"}))
    assert client.read_table("l2") == [entry]


def test_ternary_range_optional_and_dont_care(client: P4RuntimeClient) -> None:
    client.insert(
        TableEntry("acl", {"sm.ingress_port": "1&&&0x1ff", "etype": "0x800..0x806",
                           "hdr.ethernet.src": "00:00:00:00:00:aa"}, "drop", priority=10),
        # all don't care: every field is omitted from the entry
        TableEntry("acl", {"sm.ingress_port": (0, 0), "etype": (0, 0xFFFF),
                           "hdr.ethernet.src": None}, "NoAction", priority=1))
    entries = sorted(client.read_table("acl"), key=lambda e: e.priority)
    assert [e.priority for e in entries] == [1, 10]
    assert entries[0].match == {}
    assert entries[1].match == {"sm.ingress_port": Ternary(1, 0x1FF),
                                "hdr.ethernet.etype": Range(0x800, 0x806),
                                "hdr.ethernet.src": Optional(0xAA)}


def test_default_action(client: P4RuntimeClient, switch: Switch) -> None:
    assert client.read_default_action("routes").action == "CtlIngress.drop"
    client.set_default_action("routes", "route", {"port": 6, "dst_mac": 1})
    default = client.read_default_action("routes")
    assert default.is_default and default.action == "CtlIngress.route"
    assert default.params == {"port": 6, "dst_mac": 1}
    assert [p for p, _ in switch.server.inject(1, ipv4_frame("192.168.0.1"))] == [6]


def test_write_errors_name_the_failed_entity(client: P4RuntimeClient) -> None:
    client.insert(route("10.0.1.0/24", 1))
    with pytest.raises(WriteError) as info:
        client.insert(route("10.0.2.0/24", 2), route("10.0.1.0/24", 1))
    err = info.value
    assert err.total == 2
    [failure] = err.failures
    assert failure.index == 1 and failure.code == "ALREADY_EXISTS"
    assert failure.entity == ("INSERT table CtlIngress.routes match hdr.ipv4.dst=10.0.1.0/24 "
                              "action CtlIngress.route(port=1, dst_mac=00:00:00:00:01:01)")
    assert "switch s1 (127.0.0.1:" in str(err)
    assert "1 of 2 updates failed" in str(err)
    # the batch's other update went through
    assert len(client.read_table("routes")) == 2

    with pytest.raises(WriteError, match=r"DELETE table CtlIngress.l2 match "
                                         r"hdr.ethernet.dst=00:00:00:00:00:07 .*NOT_FOUND"):
        client.delete(TableEntry("l2", {"dst": 7}, "NoAction"))


def test_a_large_failed_batch_says_what_failed(client: P4RuntimeClient) -> None:
    """300 failed updates: their details exceed gRPC's default 16 KiB metadata limit,
    which would turn the answer into RESOURCE_EXHAUSTED; the message names five."""
    routes = [route(f"10.{i // 256}.{i % 256}.0/24", 1) for i in range(300)]
    client.insert(*routes)
    with pytest.raises(WriteError) as info:
        client.insert(*routes)
    err = info.value
    assert (err.total, len(err.failures)) == (300, 300)
    assert {f.code for f in err.failures} == {"ALREADY_EXISTS"}
    lines = str(err).splitlines()
    assert lines[0].endswith("Write: 300 of 300 updates failed")
    assert [line.split(" (")[0] for line in lines[1:6]] == [
        f"  update {i}" for i in range(5)]
    assert lines[6:] == ["  ... and 295 more"]


@pytest.mark.parametrize(("entry", "message"), [
    (TableEntry("nope", {}, "drop"),
     "the P4Info has no table 'nope'; its tables: CtlIngress.acl, CtlIngress.l2, "
     "CtlIngress.routes"),
    (TableEntry("l2", {"hdr.ipv4.dst": 1}, "drop"),
     "table CtlIngress.l2 has no match field 'hdr.ipv4.dst'; its match fields: "
     "hdr.ethernet.dst"),
    (TableEntry("l2", {"dst": 1}, "route", {"port": 1}),
     "table CtlIngress.l2 has no action 'route'"),
    (TableEntry("l2", {"dst": 1}, "forward", {}),
     "action CtlIngress.forward: missing parameter.s. port"),
    (TableEntry("l2", {"dst": 1}, "forward", {"prt": 1}),
     "action CtlIngress.forward has no parameter 'prt'; its parameters: port"),
    (TableEntry("l2", {"dst": 1}, "forward", {"port": 512}),
     r"action CtlIngress.forward parameter port: value 512 \(0x200\) does not fit in 9 bits"),
    (TableEntry("l2", {}, "drop"), "table CtlIngress.l2: the exact match field "
     "hdr.ethernet.dst is missing"),
    (TableEntry("acl", {"sm.ingress_port": 1}, "drop"),
     "table CtlIngress.acl has ternary, range or optional match fields: its entries need "
     "a priority > 0"),
    (TableEntry("l2", {"dst": "aa:bb"}, "drop"),
     "table CtlIngress.l2 match field hdr.ethernet.dst: cannot read 'aa:bb'"),
    (TableEntry("routes", {"dst": "10.0.0.0/8"}), "table CtlIngress.routes: the entry needs "
     "an action"),
])
def test_bad_entries_fail_before_sending(client: P4RuntimeClient, entry: TableEntry,
                                         message: str) -> None:
    with pytest.raises((SchemaError, EncodeError), match=message):
        client.insert(entry)


def test_short_and_ambiguous_names() -> None:
    from p4.config.v1 import p4info_pb2

    from controller import P4InfoSchema

    info = p4info_pb2.P4Info()
    for name in ("A.t", "B.t", "B.u"):
        table = info.tables.add()
        table.preamble.name = name
    schema = P4InfoSchema(info)
    assert schema.table("A.t").preamble.name == "A.t"
    assert schema.table("u").preamble.name == "B.u"
    with pytest.raises(SchemaError, match="table name 't' is ambiguous in the P4Info: A.t, B.t"):
        schema.table("t")


def test_multicast_groups_and_clone_sessions(client: P4RuntimeClient, switch: Switch) -> None:
    client.insert(MulticastGroup(5, [1, 3, (4, 2)]), CloneSession(7, [Replica(6)],
                                                                   packet_length_bytes=64))
    assert client.read_multicast_groups(5) == [
        MulticastGroup(5, [Replica(1), Replica(3), Replica(4, 2)])]
    assert client.read_clone_sessions() == [CloneSession(7, [6], 0, 64)]
    client.insert(TableEntry("l2", {"dst": 0xFFFFFFFFFFFF}, "flood", {"group": 5}))
    frame = b"\xff" * 6 + b"\x00" * 6 + b"\x12\x34" + b"x" * 20
    assert sorted(p for p, _ in switch.server.inject(1, frame)) == [1, 3, 4]

    client.modify(MulticastGroup(5, [3]))
    assert [p for p, _ in switch.server.inject(1, frame)] == [3]
    client.delete(MulticastGroup(5))
    assert client.read_multicast_groups() == []
    with pytest.raises(WriteError, match=r"update 0 \(DELETE multicast group 5 replicas "
                                         r"\[\]\): NOT_FOUND"):
        client.delete(MulticastGroup(5))


def test_counters_and_registers(client: P4RuntimeClient, switch: Switch) -> None:
    frame = b"\x00" * 12 + b"\x12\x34" + b"y" * 50
    for _ in range(3):
        switch.server.inject(4, frame)
    cells = client.read_counter("port_packets")
    assert len(cells) == 8
    assert cells[4].packets == 3 and cells[4].bytes == 3 * len(frame)
    assert client.read_counter("port_packets", 1)[1].packets == 0
    assert client.read_register("last_len", 0) == {0: len(frame)}

    client.write_register("signed_cells", 1, -300)
    assert client.read_register("signed_cells") == {0: 0, 1: -300}
    with pytest.raises(EncodeError, match="does not fit in int<16>"):
        client.write_register("signed_cells", 0, 40000)


def test_direct_counter(client: P4RuntimeClient, switch: Switch) -> None:
    entry = TableEntry("l2", {"dst": 1}, "forward", {"port": 2})
    client.insert(entry)
    switch.server.inject(1, b"\x00\x00\x00\x00\x00\x01" + b"\x00" * 6 + b"\x12\x34")
    assert client.read_direct_counter(TableEntry("l2", {"dst": 1})).packets == 1


def test_packet_out_and_packet_in(client: P4RuntimeClient) -> None:
    client.insert(TableEntry("acl", {"sm.ingress_port": 2, "etype": "0x9000..0x9000"},
                             "to_cpu", priority=1))
    frame = b"\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x02\x90\x00ping"
    client.packet_out(frame, egress_port=2)
    got = client.packet_in(timeout=5)
    assert got is not None
    assert got.payload == frame
    assert got.metadata["ingress_port"] == 2
    assert client.packet_in(timeout=0.05) is None
    with pytest.raises(EncodeError, match="packet_out has no metadata 'port'; it has: "
                                          "egress_port, _pad"):
        client.packet_out(frame, port=2)


def test_arbitration(switch: Switch, pipeline: Pipeline, clients: list[P4RuntimeClient]
                     ) -> None:
    first = P4RuntimeClient(switch.address, election_id=(0, 10), name="first")
    clients.append(first)
    first.connect()
    assert first.is_primary
    lower = P4RuntimeClient(switch.address, election_id=5, name="lower")
    clients.append(lower)
    with pytest.raises(ArbitrationError, match=r"switch lower \(127.0.0.1:\d+\) device 1: "
                                               r"not the primary controller"):
        lower.connect()
    backup = P4RuntimeClient(switch.address, election_id=6, require_primary=False)
    clients.append(backup)
    backup.connect()
    assert not backup.is_primary
    backup.use_p4info(pipeline.p4info)
    with pytest.raises(RpcError, match="PERMISSION_DENIED"):
        backup.set_pipeline(pipeline.p4info, pipeline.config)

    higher = P4RuntimeClient(switch.address, election_id=(1, 0), name="higher")
    clients.append(higher)
    higher.connect()
    deadline = time.monotonic() + 5
    while first.is_primary and time.monotonic() < deadline:
        time.sleep(0.01)
    assert higher.is_primary and not first.is_primary


def test_many_switches_in_one_process(make_switch: Callable[[int], Switch],
                                      pipeline: Pipeline, forward_pipeline: Pipeline,
                                      clients: list[P4RuntimeClient]) -> None:
    switches = [make_switch(1), make_switch(2)]
    c1 = P4RuntimeClient(switches[0].address, device_id=1, name="s1")
    c2 = P4RuntimeClient(switches[1].address, device_id=2, name="s2")
    clients.extend([c1, c2])
    for c in (c1, c2):
        c.connect()
    c1.set_pipeline(pipeline.p4info, pipeline.config)
    c2.set_pipeline(forward_pipeline.p4info, forward_pipeline.config)
    c1.insert(route("10.0.1.0/24", 1))
    c2.insert(TableEntry("ipv4_lpm", {"hdr.ipv4.dst_addr": "10.0.2.0/24"}, "forward",
                         {"port": 2, "dst_mac": "00:00:00:00:02:02"}))
    assert [e.table for e in c1.read_table()] == ["CtlIngress.routes"]
    [e2] = c2.read_table()
    assert e2.table == "ForwardIngress.ipv4_lpm"
    assert e2.match == {"hdr.ipv4.dst_addr": Lpm(0x0A000200, 24)}

    # a third client learns the names from the switch itself
    c3 = P4RuntimeClient(switches[1].address, device_id=2, election_id=(0, 2), name="s2b")
    clients.append(c3)
    c3.connect()
    with pytest.raises(NoPipelineError, match="no P4Info yet"):
        c3.read_table("ipv4_lpm")
    c3.fetch_pipeline()
    assert c3.read_table("ipv4_lpm") == [e2]


def test_wrong_device_id_and_unreachable_switch(switch: Switch,
                                                clients: list[P4RuntimeClient]) -> None:
    wrong = P4RuntimeClient(switch.address, device_id=9, timeout=3)
    clients.append(wrong)
    with pytest.raises(ArbitrationError, match="device 9: the switch refused the arbitration "
                                               "update: NOT_FOUND"):
        wrong.connect()
    nowhere = P4RuntimeClient("127.0.0.1:1", timeout=0.3, name="gone")
    with pytest.raises(RpcError, match=r"switch gone \(127.0.0.1:1\) device 1: UNAVAILABLE: "
                                       r"no P4Runtime server answered within 0.3 s"):
        nowhere.connect()


def test_set_pipeline_errors(switch: Switch, pipeline: Pipeline, tmp_path,  # type: ignore[no-untyped-def]
                             clients: list[P4RuntimeClient]) -> None:
    c = P4RuntimeClient(switch.address)
    clients.append(c)
    c.connect()
    bad = tmp_path / "bad.txtpb"
    bad.write_text("tables { nonsense: 1 }")
    with pytest.raises(SchemaError, match="bad.txtpb: not a P4Info"):
        c.set_pipeline(bad, pipeline.config)
    with pytest.raises(RpcError, match="SetForwardingPipelineConfig: INVALID_ARGUMENT"):
        c.set_pipeline(pipeline.p4info, b"not a compiled program")
