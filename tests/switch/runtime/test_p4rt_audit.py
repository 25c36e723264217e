"""Findings of the audit against the P4Runtime specification (1.3/1.4): one test per
divergence that was fixed, with the exact status code and message."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2
from p4rt_helpers import OK, Client, batch_errors, eth, exact, expect_code, lpm, table_entry, update

from switch.runtime import P4RuntimeServer

Code = grpc.StatusCode
Entity = p4runtime_pb2.Entity


@pytest.fixture
def ids(compiled):  # type: ignore[no-untyped-def]
    return compiled.names


def test_a_huge_group_weight_is_resource_exhausted(client: Client, compiled) -> None:  # type: ignore[no-untyped-def]
    # the engine lists a member ``weight`` times: a weight of 2**31 - 1 once made the
    # server allocate billions of list slots
    [sel] = compiled.p4info.action_profiles
    pid = sel.preamble.id
    member = Entity()
    m = member.action_profile_member
    m.action_profile_id, m.member_id = pid, 1
    m.action.action_id = compiled.names.action_id("NoAction")
    client.write(update("INSERT", member))
    group = Entity()
    g = group.action_profile_group
    g.action_profile_id, g.group_id = pid, 1
    g.members.add(member_id=1, weight=2**31 - 1)
    e = expect_code(Code.RESOURCE_EXHAUSTED, client.write, update("INSERT", group))
    assert ("the weights add up to 2147483647; the built-in switch supports at most 65536 "
            "per group") in batch_errors(e)[0][1]
    g.members[0].weight = 3
    g.max_size = 1 << 20
    e = expect_code(Code.RESOURCE_EXHAUSTED, client.write, update("INSERT", group))
    assert "max_size 1048576 is more than the built-in switch supports" in batch_errors(e)[0][1]
    g.max_size = 0
    client.write(update("INSERT", group))
    [back] = client.read(group)
    assert back.action_profile_group.members[0].weight == 3


def read_error(client: Client, ent: Entity) -> tuple[int, str]:
    """The (code, message) of a one-request Read that must fail."""
    with pytest.raises(grpc.RpcError) as info:
        client.read(ent)
    [error] = batch_errors(info.value)
    return error


def test_a_read_of_all_tables_takes_no_filter(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    for field, value in (("controller_metadata", 7), ("metadata", b"x"), ("priority", 3)):
        code, message = read_error(client, table_entry(0, **{field: value}))
        assert code == Code.INVALID_ARGUMENT.value[0]
        assert message == "a read of all tables (table_id 0) takes no other filter"
    assert client.read(table_entry(0))  # the const entry at least


def test_a_default_entry_read_has_no_match_and_priority_0(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("fwd")
    code, message = read_error(client, table_entry(t, [exact(1, b"\x01")],
                                                   is_default_action=True))
    assert (code, message) == (Code.INVALID_ARGUMENT.value[0],
                               "the default entry has no match and priority 0")
    code, _ = read_error(client, table_entry(t, priority=1, is_default_action=True))
    assert code == Code.INVALID_ARGUMENT.value[0]
    [entry] = client.read(table_entry(t, is_default_action=True))
    assert entry.table_entry.is_default_action


def test_get_pipeline_config_with_an_unknown_response_type(client: Client) -> None:
    req = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1, response_type=9)
    with pytest.raises(grpc.RpcError) as info:
        client.stub.GetForwardingPipelineConfig(req, timeout=10)
    assert info.value.code() == Code.INVALID_ARGUMENT
    assert info.value.details() == ("unknown response_type 9 (ALL, COOKIE_ONLY, "
                                    "P4INFO_AND_COOKIE or DEVICE_CONFIG_AND_COOKIE)")


def test_delete_ignores_everything_but_the_key(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("fwd")
    client.write(update("INSERT", table_entry(t, [exact(1, b"\x01")], ids.action_id("forward"),
                                              [b"\x02"])))
    nonsense = table_entry(t, [exact(1, b"\x00\x01")], 0x01FFFFFF, [b"\xff" * 9],
                           controller_metadata=5, idle_timeout_ns=10)
    nonsense.table_entry.time_since_last_hit.SetInParent()
    client.write(update("DELETE", nonsense))
    assert client.read(table_entry(t)) == []


def test_election_id_0_is_an_election_id(address: str, clients: list[Client], compiled) -> None:  # type: ignore[no-untyped-def]
    zero = Client(address, election_id=(0, 0))  # set, but all zero: a primary
    clients.append(zero)
    zero.set_pipeline(compiled.p4info, compiled.device_config)
    t = compiled.names.table_id("fwd")
    entry = table_entry(t, [exact(1, b"\x01")], compiled.names.action_id("drop"))
    zero.write(update("INSERT", entry))
    unset = p4runtime_pb2.WriteRequest(device_id=1, updates=[update("DELETE", entry)])
    with pytest.raises(grpc.RpcError) as info:  # unset is not (0, 0)
        zero.stub.Write(unset, timeout=10)
    assert info.value.code() == Code.PERMISSION_DENIED
    assert "election id unset is not the primary's (0)" in info.value.details()


def test_wrong_match_kind_message(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    wrong = table_entry(ids.table_id("fwd"), [lpm(1, b"\x01", 48)], ids.action_id("drop"))
    e = expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", wrong))
    assert batch_errors(e)[0][1] == "match field hdr.ethernet.dst is an exact match, got lpm"


def test_streams_beyond_the_limit_are_refused_and_unary_rpcs_go_on() -> None:
    # each open StreamChannel holds a gRPC worker thread: unlimited streams once left no
    # thread for Write or Read (DEADLINE_EXCEEDED)
    server = P4RuntimeServer(device_id=1, address="127.0.0.1:0", max_workers=4)
    address = f"127.0.0.1:{server.start()}"
    made: list[Client] = []
    try:
        made += [Client(address, election_id=(0, 1)), Client(address, arbitrate=False)]
        assert server.max_streams == 2
        extra = Client(address, arbitrate=False)
        made.append(extra)
        assert extra.stream_done.wait(5)
        assert extra.stream_status is not None
        assert extra.stream_status.code() == Code.RESOURCE_EXHAUSTED
        assert extra.stream_status.details() == ("too many open StreamChannels: this server "
                                                 "serves at most 2 at once")
        caps = extra.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=5)
        assert caps.p4runtime_api_version
        made[1].close()  # a slot frees up
        for _ in range(50):
            later = Client(address, arbitrate=False)
            made.append(later)
            if not later.stream_done.wait(0.1):
                break
        assert later.arbitrate((0, 2)).arbitration.status.code == OK  # served
        assert not later.stream_done.is_set()
    finally:
        for c in made:
            c.close()
        server.stop(grace=0)


def test_a_direct_counter_read_of_all_tables_takes_no_match(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    ent = Entity()
    ent.direct_counter_entry.table_entry.match.append(exact(1, b"\x01"))  # table_id 0
    code, message = read_error(client, ent)
    assert (code, message) == (Code.INVALID_ARGUMENT.value[0], "a direct counter read of all "
                               "tables (table_id 0) takes no match or priority")
    client.write(update("INSERT", table_entry(ids.table_id("fwd"), [exact(1, b"\x01")],
                                              ids.action_id("drop"))))
    [everything] = client.read(Entity(direct_counter_entry=p4runtime_pb2.DirectCounterEntry()))
    assert everything.direct_counter_entry.table_entry.table_id == ids.table_id("fwd")


OTHER_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; }
struct H { h_t h; }
struct M { }
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action set(bit<9> p) { sm.egress_spec = p; }
    table t { key = { h.h.x: exact; } actions = { set; NoAction; } }
    apply { t.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out b, in H h) { apply { b.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_reconcile_with_another_p4info_keeps_state_or_refuses(client: Client, ids,  # type: ignore[no-untyped-def]
                                                               server: P4RuntimeServer
                                                               ) -> None:
    # it used to clear the forwarding state and answer OK
    from switch.frontend import compile_text
    from switch.frontend.artifact import dump_artifact
    from switch.frontend.p4info import build_p4info

    other = compile_text(OTHER_PROGRAM, "other.p4")
    reconcile = p4runtime_pb2.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT
    fwd = table_entry(ids.table_id("fwd"), [exact(1, b"\x01")], ids.action_id("drop"))
    client.write(update("INSERT", fwd))
    running = server.switch
    e = expect_code(Code.INVALID_ARGUMENT, client.set_pipeline, build_p4info(other),
                    dump_artifact(other).encode(), action=reconcile)
    assert e.details() == ("RECONCILE_AND_COMMIT with another P4Info cannot preserve the "
                           "forwarding state: entries of table TestIngress.fwd; use "
                           "VERIFY_AND_COMMIT to start from a clear state")
    assert server.switch is running and len(client.read(table_entry(ids.table_id("fwd")))) == 1
    client.write(update("DELETE", fwd))  # nothing left to preserve: it commits
    client.set_pipeline(build_p4info(other), dump_artifact(other).encode(), action=reconcile)
    assert server.switch is not running


def test_digest_lists_without_a_size_limit_are_cut_at_max_list_size() -> None:
    # max_list_size 0 with a long max_timeout_ns once buffered digests without bound
    from switch.runtime.digests import MAX_LIST_SIZE, DigestBatcher

    config = p4runtime_pb2.DigestEntry.Config(max_timeout_ns=2**62, max_list_size=0)
    batcher = DigestBatcher()
    for i in range(2 * MAX_LIST_SIZE + 5):
        batcher.offer(1, (i,), now_ns=0)
    lists = batcher.due({1: config}, now_ns=1)
    assert [len(items) for _, _, items in lists] == [MAX_LIST_SIZE, MAX_LIST_SIZE]
    assert lists[0][2][0] == (0,) and batcher.pending()  # the last 5 wait for more


def test_clone_session_with_a_negative_packet_length(client: Client) -> None:
    ent = Entity()
    c = ent.packet_replication_engine_entry.clone_session_entry
    c.session_id, c.packet_length_bytes = 5, -5
    c.replicas.add(egress_port=1)
    e = expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", ent))
    assert batch_errors(e)[0][1] == ("clone session 5: packet_length_bytes -5 is negative "
                                     "(0: no truncation)")


SDN_PORT_CPU = 0xFFFFFFFD


def test_sdn_cpu_port_is_the_cpu_port(client: Client, server: P4RuntimeServer,  # type: ignore[no-untyped-def]
                                      compiled) -> None:
    # the proto enum value is -3 (int32): the uint32 port 0xfffffffd never matched it
    ent = Entity()
    g = ent.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = 3
    g.replicas.add(egress_port=SDN_PORT_CPU, instance=1)
    g.replicas.add(port=SDN_PORT_CPU.to_bytes(4, "big"), instance=2)
    g.replicas.add(egress_port=2, instance=1)
    client.write(update("INSERT", ent))
    [back] = client.read(ent)
    assert back == ent  # as written
    names = compiled.names
    client.write(update("INSERT", table_entry(names.table_id("fwd"), [exact(1, b"\x01")],
                                              names.action_id("set_mcast"), [b"\x03"])))
    assert [port for port, _ in server.inject(1, eth(0x01))] == [2]
    for _ in range(2):  # the two copies for the CPU port became PacketIns
        assert client.packets.get(timeout=5).packet.payload
    c = Entity()
    c.packet_replication_engine_entry.clone_session_entry.session_id = 4
    c.packet_replication_engine_entry.clone_session_entry.replicas.add(egress_port=SDN_PORT_CPU)
    client.write(update("INSERT", c))


def test_sdn_cpu_port_without_a_cpu_port(compiled) -> None:  # type: ignore[no-untyped-def]
    server = P4RuntimeServer(device_id=1, address="127.0.0.1:0")  # no cpu_port
    client = Client(f"127.0.0.1:{server.start()}", election_id=(0, 1))
    try:
        client.set_pipeline(compiled.p4info, compiled.device_config)
        ent = Entity()
        g = ent.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = 3
        g.replicas.add(egress_port=SDN_PORT_CPU)
        e = expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", ent))
        assert batch_errors(e)[0][1] == ("multicast group 3: SDN_PORT_CPU given, but the "
                                         "switch has no CPU port")
    finally:
        client.close()
        server.stop(grace=0)


def test_direct_resources_of_the_default_entry_are_unimplemented(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    # they used to act on the table's regular entry with the same (empty) match
    ent = Entity()
    dc = ent.direct_counter_entry
    dc.table_entry.table_id = ids.table_id("fwd")
    dc.table_entry.is_default_action = True
    dc.data.packet_count = 1
    e = expect_code(Code.UNIMPLEMENTED, client.write, update("MODIFY", ent))
    assert batch_errors(e)[0][1] == ("table TestIngress.fwd: direct resources of default "
                                     "entries are not supported")
    code, message = read_error(client, ent)
    assert code == Code.UNIMPLEMENTED.value[0] and "default entries" in message
    acl = Entity()
    dm = acl.direct_meter_entry
    dm.table_entry.table_id = ids.table_id("acl")
    dm.table_entry.is_default_action = True
    e = expect_code(Code.UNIMPLEMENTED, client.write, update("MODIFY", acl))
    assert "direct resources of default entries are not supported" in batch_errors(e)[0][1]


def test_a_read_of_the_whole_forwarding_state(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    # the spec's example lists extern_entry {} first; it was UNIMPLEMENTED and failed
    every = [Entity(extern_entry=p4runtime_pb2.ExternEntry()), table_entry(0),
             Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()),
             Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup())]
    found = client.read(*every)
    assert [e.WhichOneof("entity") for e in found] == ["table_entry"]  # the const entry
    one_type = Entity()
    one_type.extern_entry.extern_type_id = 0x81
    code, message = read_error(client, one_type)
    assert (code, message) == (Code.NOT_FOUND.value[0], "no extern type with id 129 in the "
                               "P4Info (v1model has no architecture-specific externs "
                               "(ExternEntry))")


def test_modify_without_an_action_keeps_the_cookies(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    # "a MODIFY without action that changes no direct resource is a no-op": it used to
    # reset controller_metadata and metadata
    t = ids.table_id("fwd")
    client.write(update("INSERT", table_entry(t, [exact(1, b"\x01")], ids.action_id("drop"),
                                              controller_metadata=7, metadata=b"m")))
    counter = p4runtime_pb2.CounterData(packet_count=3, byte_count=30)
    client.write(update("MODIFY", table_entry(t, [exact(1, b"\x01")], counter_data=counter)))
    [e] = client.read(table_entry(t, counter_data=p4runtime_pb2.CounterData()))
    assert (e.table_entry.controller_metadata, e.table_entry.metadata) == (7, b"m")
    assert e.table_entry.counter_data == counter
    assert e.table_entry.action.action.action_id == ids.action_id("drop")
    client.write(update("MODIFY", table_entry(t, [exact(1, b"\x01")], ids.action_id("drop"))))
    [e] = client.read(table_entry(t))
    assert (e.table_entry.controller_metadata, e.table_entry.metadata) == (0, b"")


def test_a_watch_port_must_be_a_port(client: Client, compiled) -> None:  # type: ignore[no-untyped-def]
    [sel] = compiled.p4info.action_profiles
    member = Entity()
    m = member.action_profile_member
    m.action_profile_id, m.member_id = sel.preamble.id, 1
    m.action.action_id = compiled.names.action_id("NoAction")
    client.write(update("INSERT", member))
    group = Entity()
    g = group.action_profile_group
    g.action_profile_id, g.group_id = sel.preamble.id, 1
    g.members.add(member_id=1, weight=1, watch_port=b"\x10\x00")
    e = expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", group))
    assert batch_errors(e)[0][1] == ("action profile TestIngress.sel, group 1: member 1: "
                                     "watch_port 4096 is not a port of the switch (ports have "
                                     "9 bits)")
    g.members[0].watch_port = b"\x00\x03"  # padded port 3: fine, read back as written
    client.write(update("INSERT", group))
    [back] = client.read(group)
    assert back.action_profile_group.members[0].watch_port == b"\x00\x03"
