"""TableEntry writes and reads through a real gRPC channel."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2
from p4rt_helpers import (
    OK,
    Client,
    batch_errors,
    exact,
    expect_code,
    lpm,
    optional,
    range_,
    table_entry,
    ternary,
    update,
)

Code = grpc.StatusCode
MAC1 = b"\x00\x00\x00\x00\x00\x01"


@pytest.fixture
def ids(compiled):  # type: ignore[no-untyped-def]
    return compiled.names


def read_table(client: Client, table_id: int, **fields: object) -> list[p4runtime_pb2.TableEntry]:
    return [e.table_entry for e in client.read(table_entry(table_id, **fields))]


def fwd(ids, mac: bytes = MAC1, port: bytes = b"\x03", **fields: object):  # type: ignore[no-untyped-def]
    return table_entry(ids.table_id("fwd"), [exact(1, mac)], ids.action_id("forward"), [port],
                       **fields)


def test_insert_read_modify_delete(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    client.write(update("INSERT", fwd(ids, controller_metadata=7, metadata=b"cookie")))
    [entry] = read_table(client, ids.table_id("fwd"))
    assert entry.match[0].exact.value == b"\x01"  # canonical form
    assert entry.action.action.action_id == ids.action_id("forward")
    assert entry.action.action.params[0].value == b"\x03"
    assert entry.controller_metadata == 7 and entry.metadata == b"cookie"
    assert entry.priority == 0 and not entry.is_const

    client.write(update("MODIFY", fwd(ids, port=b"\x04")))
    [entry] = read_table(client, ids.table_id("fwd"))
    assert entry.action.action.params[0].value == b"\x04"
    assert entry.controller_metadata == 0  # MODIFY assigns the whole entry

    client.write(update("DELETE", table_entry(ids.table_id("fwd"), [exact(1, b"\x01")])))
    assert read_table(client, ids.table_id("fwd")) == []
    expect_code(Code.NOT_FOUND, client.write, update("DELETE", fwd(ids)))
    expect_code(Code.NOT_FOUND, client.write, update("MODIFY", fwd(ids)))


def test_padded_and_canonical_byte_strings(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    client.write(update("INSERT", fwd(ids, mac=b"\x00\x00\x00\x00\x00\x00\x00\x02",
                                      port=b"\x00\x05")))
    [entry] = read_table(client, ids.table_id("fwd"))
    assert entry.match[0].exact.value == b"\x02"
    assert entry.action.action.params[0].value == b"\x05"
    expect_code(Code.ALREADY_EXISTS, client.write, update("INSERT", fwd(ids, mac=b"\x02")))


def test_values_that_do_not_fit_are_invalid(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("INSERT", fwd(ids, mac=b"\x01\x00\x00\x00\x00\x00\x01")))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", fwd(ids, mac=b"")))
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("INSERT", fwd(ids, port=b"\x02\x00")))
    assert read_table(client, ids.table_id("fwd")) == []


def test_match_field_errors(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("fwd")
    a = ids.action_id("forward")
    bad = [
        table_entry(t, [], a, [b"\x01"]),  # the exact field is missing
        table_entry(t, [exact(9, b"\x01")], a, [b"\x01"]),  # unknown field id
        table_entry(t, [lpm(1, b"\x01", 48)], a, [b"\x01"]),  # wrong match kind
        table_entry(t, [exact(1, b"\x01"), exact(1, b"\x02")], a, [b"\x01"]),  # twice
        table_entry(t, [exact(1, b"\x01")], a, [b"\x01"], priority=5),  # needs priority 0
    ]
    for ent in bad:
        expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", ent))


def test_action_checks(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("routes")
    m = [lpm(1, b"\x01", 48)]
    expect_code(Code.INVALID_ARGUMENT, client.write,  # not an action of the table
                update("INSERT", table_entry(t, m, ids.action_id("learn"))))
    expect_code(Code.PERMISSION_DENIED, client.write,  # @defaultonly
                update("INSERT", table_entry(t, m, ids.action_id("drop"))))
    expect_code(Code.INVALID_ARGUMENT, client.write,  # missing parameter
                update("INSERT", table_entry(t, m, ids.action_id("forward"))))
    extra = table_entry(t, m, ids.action_id("forward"), [b"\x01"])
    extra.table_entry.action.action.params.add(param_id=2, value=b"\x01")
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", extra))
    expect_code(Code.INVALID_ARGUMENT, client.write,  # INSERT without an action
                update("INSERT", table_entry(t, m)))
    profile = table_entry(t, m)
    profile.table_entry.action.action_profile_member_id = 1
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", profile))


def test_lpm_rules(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("routes")
    a = ids.action_id("forward")
    for m in (lpm(1, b"\x00", 0), lpm(1, b"\x0a\x00\x00\x00\x00\x01", 8),
              lpm(1, b"\x0a", 49)):
        expect_code(Code.INVALID_ARGUMENT, client.write,
                    update("INSERT", table_entry(t, [m], a, [b"\x01"])))
    client.write(update("INSERT", table_entry(t, [lpm(1, b"\x0a\x00\x00\x00\x00\x00", 8)],
                                              a, [b"\x01"])))
    client.write(update("INSERT", table_entry(t, [], a, [b"\x02"])))  # don't care: omitted
    entries = read_table(client, t)
    assert len(entries) == 2
    by_len = {len(e.match): e for e in entries}
    assert by_len[1].match[0].lpm.value == b"\x0a\x00\x00\x00\x00\x00"
    assert by_len[1].match[0].lpm.prefix_len == 8
    assert by_len[0].action.action.params[0].value == b"\x02"


def test_ternary_range_optional_and_priorities(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("acl")
    a = ids.action_id("NoAction")

    def acl(match, priority=10):  # type: ignore[no-untyped-def]
        return update("INSERT", table_entry(t, match, a, priority=priority))

    for bad in ([ternary(1, b"\x01", b"\x00")],  # don't care given
                [ternary(1, b"\x03", b"\x01")],  # value bits outside the mask
                [range_(2, b"\x00", b"\xff\xff")],  # the full range given
                [range_(2, b"\x05", b"\x04")]):  # low > high
        expect_code(Code.INVALID_ARGUMENT, client.write, acl(bad))
    expect_code(Code.INVALID_ARGUMENT, client.write, acl([ternary(1, b"\x01", b"\x01")], 0))
    client.write(acl([ternary(1, b"\x01", b"\x01\xff")], 10))
    client.write(acl([ternary(1, b"\x01", b"\x01\xff")], 20))  # same match, other priority
    client.write(acl([range_(2, b"\x08\x00", b"\x08\x06"), optional(3, b"\xaa")], 30))
    client.write(acl([], 1))  # every field don't care
    entries = read_table(client, t)
    assert sorted(e.priority for e in entries) == [1, 10, 20, 30]
    by_prio = {e.priority: e for e in entries}
    assert len(by_prio[1].match) == 0
    assert by_prio[10].match[0].ternary.mask == b"\x01\xff"
    assert {m.field_id for m in by_prio[30].match} == {2, 3}
    assert [e.priority for e in read_table(client, t, priority=20)] == [20]
    only = read_table(client, t, match=[ternary(1, b"\x01", b"\x01\xff")], priority=10)
    assert [e.priority for e in only] == [10]
    client.write(update("DELETE", table_entry(t, [ternary(1, b"\x01", b"\x01\xff")],
                                              priority=10)))
    assert sorted(e.priority for e in read_table(client, t)) == [1, 20, 30]


def test_table_full_is_resource_exhausted(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    for i in range(4):  # size = 4
        client.write(update("INSERT", fwd(ids, mac=bytes([i + 1]))))
    expect_code(Code.RESOURCE_EXHAUSTED, client.write, update("INSERT", fwd(ids, mac=b"\x09")))


def test_keyless_table_takes_no_entries(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("INSERT", table_entry(ids.table_id("stats"), [],
                                             ids.action_id("count_port"))))


def test_default_entry(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("routes")
    [entry] = read_table(client, t, is_default_action=True)
    assert entry.is_default_action and entry.action.action.action_id == ids.action_id("NoAction")
    client.write(update("MODIFY", table_entry(t, [], ids.action_id("drop"),
                                              is_default_action=True, controller_metadata=3)))
    [entry] = read_table(client, t, is_default_action=True)
    assert entry.action.action.action_id == ids.action_id("drop")
    assert entry.controller_metadata == 3
    client.write(update("MODIFY", table_entry(t, is_default_action=True)))  # reset
    [entry] = read_table(client, t, is_default_action=True)
    assert entry.action.action.action_id == ids.action_id("NoAction")
    assert entry.controller_metadata == 0
    assert read_table(client, t) == []  # the default entry is not a regular entry

    default = table_entry(t, [], ids.action_id("drop"), is_default_action=True)
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", default))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("DELETE", default))
    with_match = table_entry(t, [lpm(1, b"\x01", 48)], ids.action_id("drop"),
                             is_default_action=True)
    expect_code(Code.INVALID_ARGUMENT, client.write, update("MODIFY", with_match))
    expect_code(Code.PERMISSION_DENIED, client.write,  # const default_action
                update("MODIFY", table_entry(ids.table_id("acl"), [], ids.action_id("NoAction"),
                                             is_default_action=True)))


def test_const_table(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    t = ids.table_id("consts")
    [entry] = read_table(client, t)
    assert entry.is_const and entry.match[0].exact.value == b"\x08\x06"
    assert entry.action.action.action_id == ids.action_id("drop")
    new = table_entry(t, [exact(1, b"\x08\x00")], ids.action_id("drop"))
    expect_code(Code.PERMISSION_DENIED, client.write, update("INSERT", new))
    old = table_entry(t, [exact(1, b"\x08\x06")], ids.action_id("NoAction"))
    expect_code(Code.PERMISSION_DENIED, client.write, update("MODIFY", old))
    expect_code(Code.PERMISSION_DENIED, client.write, update("DELETE", old))
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("INSERT", fwd(ids, is_const=True)))


def test_idle_timeout(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    smac = table_entry(ids.table_id("smac"), [exact(1, b"\x01")], ids.action_id("NoAction"),
                       idle_timeout_ns=1_000_000)
    e = expect_code(Code.UNIMPLEMENTED, client.write, update("INSERT", smac))
    assert "idle timeout not supported" in batch_errors(e)[0][1]
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("INSERT", fwd(ids, idle_timeout_ns=1_000_000)))


def test_direct_resources_in_table_entries(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    counter = p4runtime_pb2.CounterData(packet_count=5, byte_count=500)
    client.write(update("INSERT", fwd(ids, counter_data=counter)))
    [plain] = read_table(client, ids.table_id("fwd"))
    assert not plain.HasField("counter_data")
    [entry] = read_table(client, ids.table_id("fwd"), counter_data=p4runtime_pb2.CounterData())
    assert (entry.counter_data.packet_count, entry.counter_data.byte_count) == (5, 500)
    expect_code(Code.INVALID_ARGUMENT, client.write,  # routes has no direct counter
                update("INSERT", table_entry(ids.table_id("routes"), [lpm(1, b"\x01", 48)],
                                             ids.action_id("NoAction"), counter_data=counter)))

    t = ids.table_id("acl")
    config = p4runtime_pb2.MeterConfig(cir=100, cburst=10, pir=200, pburst=20)
    client.write(update("INSERT", table_entry(t, [optional(3, b"\x01")], ids.action_id(
        "acl_mark"), priority=1, meter_config=config)))
    [entry] = read_table(client, t, meter_config=p4runtime_pb2.MeterConfig())
    assert entry.meter_config == config
    client.write(update("MODIFY", table_entry(t, [optional(3, b"\x01")], priority=1)))
    [entry] = read_table(client, t, meter_config=p4runtime_pb2.MeterConfig())
    assert not entry.HasField("meter_config")  # MODIFY without a config: the default
    bad = p4runtime_pb2.MeterConfig(cir=300, cburst=10, pir=200, pburst=20)
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("MODIFY", table_entry(t, [optional(3, b"\x01")], priority=1,
                                             meter_config=bad)))
    colors = table_entry(t, [optional(3, b"\x02")], ids.action_id("acl_mark"), priority=1)
    colors.table_entry.meter_counter_data.SetInParent()
    expect_code(Code.UNIMPLEMENTED, client.write, update("INSERT", colors))


def test_batch_error_details(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    client.write(update("INSERT", fwd(ids, mac=b"\x02")))
    with pytest.raises(grpc.RpcError) as info:
        client.write(update("INSERT", fwd(ids, mac=b"\x01")),
                     update("INSERT", fwd(ids, mac=b"\x02")),
                     update("INSERT", table_entry(ids.table_id("fwd"), [exact(1, b"\x03")],
                                                  ids.action_id("learn"))),
                     update("INSERT", fwd(ids, mac=b"\x04")))
    e = info.value
    assert e.code() == Code.UNKNOWN
    codes = [c for c, _ in batch_errors(e)]
    assert codes == [OK, Code.ALREADY_EXISTS.value[0], Code.INVALID_ARGUMENT.value[0], OK]
    macs = sorted(x.match[0].exact.value for x in read_table(client, ids.table_id("fwd")))
    assert macs == [b"\x01", b"\x02", b"\x04"]  # the good updates were applied


def test_wildcard_reads_and_filters(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    client.write(update("INSERT", fwd(ids, mac=b"\x01", metadata=b"x")),
                 update("INSERT", table_entry(ids.table_id("fwd"), [exact(1, b"\x02")],
                                              ids.action_id("drop"), controller_metadata=9)),
                 update("INSERT", table_entry(ids.table_id("routes"), [lpm(1, b"\x01", 48)],
                                              ids.action_id("NoAction"))))
    everything = [e.table_entry for e in client.read(table_entry(0))]
    assert sorted(e.table_id for e in everything) == sorted(
        [ids.table_id("fwd")] * 2 + [ids.table_id("routes"), ids.table_id("consts")])
    t = ids.table_id("fwd")
    drops = table_entry(t)
    drops.table_entry.action.action.action_id = ids.action_id("drop")
    assert [e.table_entry.match[0].exact.value for e in client.read(drops)] == [b"\x02"]
    assert len(read_table(client, t, metadata=b"x")) == 1
    assert len(read_table(client, t, controller_metadata=9)) == 1
    assert read_table(client, t, match=[exact(1, b"\x07")]) == []


def test_request_level_errors(client: Client, ids) -> None:  # type: ignore[no-untyped-def]
    # a table id the P4Info lacks is INVALID_ARGUMENT, as BMv2 answers
    expect_code(Code.INVALID_ARGUMENT, client.write,
                update("INSERT", table_entry(0x02FFFFFF, [exact(1, b"\x01")], 1)))
    expect_code(Code.INVALID_ARGUMENT, client.write, update("INSERT", table_entry(0)))
    expect_code(Code.UNIMPLEMENTED, client.write, update("INSERT", fwd(ids)), atomicity=1)
    expect_code(Code.UNIMPLEMENTED, client.write, update("INSERT", fwd(ids)), atomicity=2)
    expect_code(Code.INVALID_ARGUMENT, client.write,
                p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT))
    with pytest.raises(grpc.RpcError) as info:
        client.read(table_entry(0x02FFFFFF))
    assert info.value.code() == Code.UNKNOWN
    assert [c for c, _ in batch_errors(info.value)] == [Code.INVALID_ARGUMENT.value[0]]
