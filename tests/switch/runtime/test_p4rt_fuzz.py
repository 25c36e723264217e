"""Robustness: malformed and random P4Runtime requests against an in-process server.

Every answer must be a proper gRPC status with a message (never INTERNAL, which means
an unexpected exception in the server), a partially failed batch must carry one
``p4.v1.Error`` per element, stream errors must name their cause, and the server must
keep serving valid requests afterwards. Ids are drawn half from the test program's
P4Info and half at random, byte strings with all sorts of lengths, integers up to the
limits of their protobuf types, enums beyond their declared values.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p4.v1 import p4runtime_pb2
from p4rt_helpers import (
    CPU_PORT,
    DEVICE_ID,
    OK,
    Client,
    batch_errors,
    drain,
    exact,
    table_entry,
    update,
)

from switch.runtime import P4RuntimeServer

Code = grpc.StatusCode
Entity = p4runtime_pb2.Entity
FieldMatch = p4runtime_pb2.FieldMatch

PRIMARY = (2**64 - 1, 2**64 - 1)  # the highest election id: fuzzed controllers stay backups
EXAMPLES = settings(max_examples=200, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
BAD_CODES = {Code.INTERNAL, Code.UNAVAILABLE, Code.DEADLINE_EXCEEDED, Code.OK}


# --------------------------------------------------------------------------- fixtures


class Fuzzed:
    def __init__(self, server: P4RuntimeServer, client: Client, compiled: Any):
        self.server = server
        self.client = client
        self.compiled = compiled
        self.address = f"127.0.0.1:{server.port}"
        info = compiled.p4info
        self.ids: dict[str, list[int]] = {
            kind: [x.preamble.id for x in getattr(info, kind)] or [0]
            for kind in ("tables", "actions", "counters", "direct_counters", "meters",
                         "direct_meters", "registers", "digests", "value_sets",
                         "action_profiles", "controller_packet_metadata")}

    def id_of(self, kind: str) -> st.SearchStrategy[int]:
        """Mostly ids of ``kind``, sometimes of another kind, 0 or anything."""
        every = sorted({i for ids in self.ids.values() for i in ids})
        return st.one_of(st.sampled_from(self.ids[kind]), st.sampled_from(self.ids[kind]),
                         st.sampled_from(self.ids[kind]), st.sampled_from(every), uint32,
                         st.just(0))


@pytest.fixture(scope="module")
def fuzzed(compiled: Any) -> Iterator[Fuzzed]:
    server = P4RuntimeServer(device_id=DEVICE_ID, address="127.0.0.1:0", cpu_port=CPU_PORT,
                             on_output=lambda port, frame: None)
    server.start()
    client = Client(f"127.0.0.1:{server.port}", election_id=PRIMARY)
    client.set_pipeline(compiled.p4info, compiled.device_config)
    try:
        yield Fuzzed(server, client, compiled)
    finally:
        client.close()
        server.stop(grace=0)


# ------------------------------------------------------------------------- strategies

uint32 = st.integers(0, 2**32 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
uint64 = st.integers(0, 2**64 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
small = st.integers(0, 8)
some_bytes = st.one_of(st.binary(min_size=1, max_size=2), st.binary(min_size=1, max_size=2),
                       st.binary(max_size=8), st.binary(min_size=9, max_size=40),
                       st.sampled_from([b"", b"\x00", b"\xff" * 64, b"\x00" * 300 + b"\x01"]))
enum_value = st.integers(-3, 12)
update_type = st.one_of(st.sampled_from([1, 2, 3]), st.sampled_from([1, 2, 3]), enum_value)
field_id = st.one_of(st.integers(1, 3), st.integers(1, 3), small, uint32)


@st.composite
def field_match(draw: st.DrawFn) -> FieldMatch:
    fm = FieldMatch(field_id=draw(field_id))
    kind = draw(st.sampled_from(["exact", "lpm", "ternary", "range", "optional", None]))
    if kind == "exact":
        fm.exact.value = draw(some_bytes)
    elif kind == "lpm":
        fm.lpm.value = draw(some_bytes)
        fm.lpm.prefix_len = draw(st.one_of(st.integers(-2, 64), int32))
    elif kind == "ternary":
        fm.ternary.value = draw(some_bytes)
        fm.ternary.mask = draw(some_bytes)
    elif kind == "range":
        fm.range.low = draw(some_bytes)
        fm.range.high = draw(some_bytes)
    elif kind == "optional":
        fm.optional.value = draw(some_bytes)
    return fm


@st.composite
def action(draw: st.DrawFn, f: Fuzzed) -> p4runtime_pb2.Action:
    a = p4runtime_pb2.Action(action_id=draw(f.id_of("actions")))
    for _ in range(draw(st.integers(0, 3))):
        a.params.add(param_id=draw(field_id), value=draw(some_bytes))
    return a


@st.composite
def meter_config(draw: st.DrawFn) -> p4runtime_pb2.MeterConfig:
    return p4runtime_pb2.MeterConfig(cir=draw(int64), cburst=draw(int64), pir=draw(int64),
                                     pburst=draw(int64), eburst=draw(int64))


@st.composite
def counter_data(draw: st.DrawFn) -> p4runtime_pb2.CounterData:
    return p4runtime_pb2.CounterData(packet_count=draw(int64), byte_count=draw(int64))


@st.composite
def table_entry_msg(draw: st.DrawFn, f: Fuzzed) -> p4runtime_pb2.TableEntry:
    te = p4runtime_pb2.TableEntry(table_id=draw(f.id_of("tables")))
    te.match.extend(draw(st.lists(field_match(), max_size=4)))
    which = draw(st.sampled_from(["action", "member", "group", "set", None]))
    if which == "action":
        te.action.action.CopyFrom(draw(action(f)))
    elif which == "member":
        te.action.action_profile_member_id = draw(st.one_of(small, uint32))
    elif which == "group":
        te.action.action_profile_group_id = draw(st.one_of(small, uint32))
    elif which == "set":
        te.action.action_profile_action_set.SetInParent()
    te.priority = draw(st.one_of(st.just(0), small, int32))
    te.controller_metadata = draw(st.one_of(small, uint64))
    te.metadata = draw(st.one_of(st.just(b""), some_bytes))
    rare = st.integers(0, 5)
    te.is_default_action = draw(rare) == 0
    te.is_const = draw(rare) == 0
    te.idle_timeout_ns = draw(int64) if draw(rare) == 0 else 0
    if draw(rare) == 0:
        te.counter_data.CopyFrom(draw(counter_data()))
    if draw(rare) == 0:
        te.meter_config.CopyFrom(draw(meter_config()))
    if draw(st.integers(0, 7)) == 0:
        te.meter_counter_data.SetInParent()
    if draw(st.integers(0, 7)) == 0:
        te.time_since_last_hit.elapsed_ns = draw(int64)
    return te


def replicas(draw: st.DrawFn, out: Any) -> None:
    for _ in range(draw(st.integers(0, 4))):
        r = out.add(instance=draw(st.one_of(small, uint32)))
        if draw(st.booleans()):
            r.egress_port = draw(st.one_of(small, uint32))
        elif draw(st.booleans()):
            r.port = draw(some_bytes)


@st.composite
def entity(draw: st.DrawFn, f: Fuzzed) -> Entity:
    ent = Entity()
    kind = draw(st.sampled_from([
        "table_entry", "action_profile_member", "action_profile_group", "counter_entry",
        "direct_counter_entry", "meter_entry", "direct_meter_entry", "register_entry",
        "value_set_entry", "digest_entry", "multicast", "clone", "pre_empty",
        "extern_entry", None]))
    index = st.one_of(small, int64)
    if kind == "table_entry":
        ent.table_entry.CopyFrom(draw(table_entry_msg(f)))
    elif kind == "action_profile_member":
        m = ent.action_profile_member
        m.action_profile_id = draw(f.id_of("action_profiles"))
        m.member_id = draw(st.one_of(small, uint32))
        if draw(st.booleans()):
            m.action.CopyFrom(draw(action(f)))
    elif kind == "action_profile_group":
        g = ent.action_profile_group
        g.action_profile_id = draw(f.id_of("action_profiles"))
        g.group_id = draw(st.one_of(small, uint32))
        g.max_size = draw(st.one_of(small, int32))
        for _ in range(draw(st.integers(0, 4))):
            g.members.add(member_id=draw(st.one_of(small, uint32)),
                          weight=draw(st.one_of(small, int32)), watch_port=draw(some_bytes))
    elif kind in ("counter_entry", "meter_entry", "register_entry"):
        e = getattr(ent, kind)
        what = kind.split("_")[0]
        setattr(e, what + "_id", draw(f.id_of(what + "s")))
        if draw(st.booleans()):
            e.index.index = draw(index)
        if kind == "counter_entry" and draw(st.booleans()):
            e.data.CopyFrom(draw(counter_data()))
        if kind == "meter_entry" and draw(st.booleans()):
            e.config.CopyFrom(draw(meter_config()))
        if kind == "meter_entry" and draw(st.integers(0, 5)) == 0:
            e.counter_data.SetInParent()
        if kind == "register_entry" and draw(st.booleans()):
            which = draw(st.sampled_from(["bitstring", "bool", "enum_value", "struct", "error"]))
            if which == "bitstring":
                e.data.bitstring = draw(some_bytes)
            elif which == "bool":
                e.data.bool = draw(st.booleans())
            elif which == "enum_value":
                e.data.enum_value = draw(some_bytes)
            elif which == "struct":
                e.data.struct.members.add(bitstring=draw(some_bytes))
            else:
                e.data.error = draw(st.text(max_size=5))
    elif kind in ("direct_counter_entry", "direct_meter_entry"):
        e = getattr(ent, kind)
        e.table_entry.CopyFrom(draw(table_entry_msg(f)))
        if kind == "direct_counter_entry" and draw(st.booleans()):
            e.data.CopyFrom(draw(counter_data()))
        if kind == "direct_meter_entry" and draw(st.booleans()):
            e.config.CopyFrom(draw(meter_config()))
    elif kind == "value_set_entry":
        v = ent.value_set_entry
        v.value_set_id = draw(f.id_of("value_sets"))
        for _ in range(draw(st.integers(0, 6))):
            v.members.add().match.extend(draw(st.lists(field_match(), max_size=2)))
    elif kind == "digest_entry":
        d = ent.digest_entry
        d.digest_id = draw(f.id_of("digests"))
        if draw(st.booleans()):
            d.config.max_timeout_ns = draw(st.one_of(small, int64))
            d.config.max_list_size = draw(st.one_of(small, int32))
            d.config.ack_timeout_ns = draw(st.one_of(small, int64))
    elif kind == "multicast":
        g = ent.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = draw(st.one_of(small, uint32))
        replicas(draw, g.replicas)
    elif kind == "clone":
        c = ent.packet_replication_engine_entry.clone_session_entry
        c.session_id = draw(st.one_of(small, uint32))
        c.class_of_service = draw(st.one_of(small, uint32))
        c.packet_length_bytes = draw(st.one_of(small, int32))
        replicas(draw, c.replicas)
    elif kind == "pre_empty":
        ent.packet_replication_engine_entry.SetInParent()
    elif kind == "extern_entry":
        ent.extern_entry.extern_type_id = draw(uint32)
    return ent


# ---------------------------------------------------------------------------- checks


def check_status(call: Callable[[], Any], elements: int) -> None:
    """``call`` succeeds or fails with a proper status (batch details for UNKNOWN)."""
    try:
        call()
    except grpc.RpcError as e:
        code, details = e.code(), e.details()
        assert code not in BAD_CODES, (code, details)
        assert details, f"{code.name} without a message"
        if code == Code.UNKNOWN:
            errors = batch_errors(e)
            assert len(errors) == elements, errors
            assert any(c != OK for c, _ in errors)
            for c, message in errors:
                assert c != Code.INTERNAL.value[0], message
                assert c == OK or message, f"code {c} without a message"


def still_serving(f: Fuzzed) -> None:
    stub = f.client.stub
    resp = stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=5)
    assert resp.p4runtime_api_version
    f.client.read(table_entry(0))


def first_reply(c: Client, timeout: float = 5) -> p4runtime_pb2.StreamMessageResponse | None:
    """The first arbitration reply on ``c``'s stream, or None when the stream ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return c.arbitration.get(timeout=0.01)
        except queue.Empty:
            if c.stream_done.is_set():
                return None
    raise AssertionError("no arbitration reply and the stream is still open")


# ----------------------------------------------------------------------------- tests


@EXAMPLES
@given(data=st.data())
def test_random_writes(fuzzed: Fuzzed, data: st.DataObject) -> None:
    f = fuzzed
    updates = data.draw(st.lists(st.tuples(update_type, entity(f)), max_size=6))
    req = p4runtime_pb2.WriteRequest(device_id=DEVICE_ID)
    req.election_id.high, req.election_id.low = PRIMARY
    req.atomicity = data.draw(st.sampled_from([0, 0, 0, 1, 2, 7]))
    for utype, ent in updates:
        req.updates.add(type=utype, entity=ent)
    check_status(lambda: f.client.stub.Write(req, timeout=10), len(updates))
    still_serving(f)


@EXAMPLES
@given(data=st.data())
def test_random_reads(fuzzed: Fuzzed, data: st.DataObject) -> None:
    f = fuzzed
    entities = data.draw(st.lists(entity(f), max_size=5))
    req = p4runtime_pb2.ReadRequest(device_id=DEVICE_ID, entities=entities)
    check_status(lambda: list(f.client.stub.Read(req, timeout=10)), len(entities))
    still_serving(f)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(device_id=st.one_of(st.just(DEVICE_ID), uint64), role=st.sampled_from(["", "x"]),
       action=enum_value, config=some_bytes, p4info=st.booleans(), cookie=uint64,
       response_type=enum_value, election=st.booleans())
def test_random_pipeline_requests(fuzzed: Fuzzed, device_id: int, role: str, action: int,
                                  config: bytes, p4info: bool, cookie: int,
                                  response_type: int, election: bool) -> None:
    f = fuzzed
    req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=device_id, role=role,
                                                           action=action)
    if election:
        req.election_id.high, req.election_id.low = PRIMARY
    if config or p4info:
        req.config.p4_device_config = config  # never a loadable program: nothing commits
        req.config.cookie.cookie = cookie
    if p4info:
        req.config.p4info.CopyFrom(f.compiled.p4info)
    check_status(lambda: f.client.stub.SetForwardingPipelineConfig(req, timeout=30), 0)
    get = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=device_id,
                                                           response_type=response_type)
    check_status(lambda: f.client.stub.GetForwardingPipelineConfig(get, timeout=10), 0)
    still_serving(f)


@EXAMPLES
@given(data=st.data())
def test_random_stream_messages(fuzzed: Fuzzed, data: st.DataObject) -> None:
    f = fuzzed
    c = f.client
    drain(c.errors)
    sent = 0
    for _ in range(data.draw(st.integers(1, 4))):
        req = p4runtime_pb2.StreamMessageRequest()
        kind = data.draw(st.sampled_from(["packet", "digest_ack", "other", "empty"]))
        if kind == "packet":
            req.packet.payload = data.draw(st.one_of(some_bytes, st.binary(max_size=200)))
            for _ in range(data.draw(st.integers(0, 3))):
                req.packet.metadata.add(metadata_id=data.draw(field_id),
                                        value=data.draw(some_bytes))
        elif kind == "digest_ack":
            req.digest_ack.digest_id = data.draw(f.id_of("digests"))
            req.digest_ack.list_id = data.draw(uint64)
        elif kind == "other":
            req.other.CopyFrom(any_pb2.Any(type_url=data.draw(st.text(max_size=10)),
                                           value=data.draw(some_bytes)))
        c.send(req)
        sent += 1
    # the reply to an arbitration update comes after every earlier message's errors
    reply = c.arbitrate(PRIMARY)
    assert reply.arbitration.status.code == OK
    for err in drain(c.errors):
        e = err.error
        assert e.canonical_code not in (OK, Code.INTERNAL.value[0]), e
        assert e.message, e
        # the cause is named, except for an empty message (no kind to name)
        assert e.WhichOneof("details") is not None or "empty" in e.message, e
    assert not c.stream_done.is_set(), c.stream_status
    still_serving(f)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(device_id=st.one_of(st.just(DEVICE_ID), uint64), election=st.one_of(
    st.none(), st.tuples(uint64, uint64).filter(lambda e: e != PRIMARY)),
       role=st.sampled_from(["", "r"]), config=st.booleans())
def test_random_arbitration(fuzzed: Fuzzed, device_id: int, election: tuple[int, int] | None,
                            role: str, config: bool) -> None:
    f = fuzzed
    other = Client(f.address, arbitrate=False)
    try:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        if election is not None:
            req.arbitration.election_id.high, req.arbitration.election_id.low = election
        if role:
            req.arbitration.role.name = role
        if config:
            req.arbitration.role.config.type_url = "x"
        other.send(req)
        reply = first_reply(other)
        if reply is not None:
            assert reply.arbitration.status.code != OK  # never above the primary
        else:
            status = other.stream_status
            assert status is not None and status.code() not in BAD_CODES, status
            assert status.details()
    finally:
        other.close()
    still_serving(f)
    assert f.server.arbiter.primary() is not None


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["Write", "Read", "SetForwardingPipelineConfig",
                               "GetForwardingPipelineConfig", "Capabilities"]),
       payload=st.binary(max_size=64))
def test_undecodable_requests(fuzzed: Fuzzed, method: str, payload: bytes) -> None:
    """Raw bytes: whatever gRPC and protobuf make of them, the server goes on."""
    f = fuzzed
    call: Any
    if method == "Read":
        call = f.client.channel.unary_stream(f"/p4.v1.P4Runtime/{method}")
    else:
        call = f.client.channel.unary_unary(f"/p4.v1.P4Runtime/{method}")
    try:
        result = call(payload, timeout=10)
        if method == "Read":
            list(result)
    except grpc.RpcError as e:
        assert e.code() not in (Code.UNAVAILABLE, Code.DEADLINE_EXCEEDED), e
    still_serving(f)


def test_valid_requests_after_the_fuzzing(fuzzed: Fuzzed) -> None:
    f = fuzzed
    c = f.client
    names = f.compiled.names
    t = names.table_id("fwd")
    for ent in c.read(table_entry(t)):  # whatever the fuzzing inserted
        c.write(update("DELETE", ent))
    ent = table_entry(t, [exact(1, b"\x0a")], names.action_id("forward"), [b"\x02"])
    c.write(update("INSERT", ent))
    [back] = c.read(table_entry(t))
    assert back.table_entry.match[0].exact.value == b"\x0a"
    c.write(update("DELETE", ent))
    assert c.read(table_entry(t)) == []


# ------------------------------------------------------------- read-write symmetry


def padded(value: int, draw: st.DrawFn, signed: bool = False) -> bytes:
    """``value`` in its canonical byte string, with 0-3 padding bytes in front."""
    nbits = (value if value >= 0 else ~value).bit_length() + (1 if signed else 0)
    size = max(1, (nbits + 7) // 8) + draw(st.integers(0, 3))
    return value.to_bytes(size, "big", signed=signed)


def canonical(value: int) -> bytes:
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


@st.composite
def acl_entry(draw: st.DrawFn, f: Fuzzed) -> tuple[Entity, Entity]:
    """A valid entry of ``acl`` (ternary bit<9>, range bit<16>, optional bit<48>), as
    written (random padding) and as it must read back (canonical)."""
    names = f.compiled.names
    written = table_entry(names.table_id("acl"), action_id=names.action_id("NoAction"))
    expected = table_entry(names.table_id("acl"), action_id=names.action_id("NoAction"))
    for e in (written, expected):
        e.table_entry.action.action.SetInParent()

    def match(field_id: int, kind: str, **values: int) -> None:
        """The field as written (padded) and as read back (canonical)."""
        make = getattr(FieldMatch, kind.capitalize())
        written.table_entry.match.add(field_id=field_id, **{kind: make(
            **{k: padded(v, draw) for k, v in values.items()})})
        expected.table_entry.match.add(field_id=field_id, **{kind: make(
            **{k: canonical(v) for k, v in values.items()})})

    if draw(st.booleans()):
        mask = draw(st.integers(1, 2**9 - 1))
        match(1, "ternary", value=draw(st.integers(0, 2**9 - 1)) & mask, mask=mask)
    if draw(st.booleans()):
        low = draw(st.integers(0, 2**16 - 1))
        high = draw(st.integers(low, 2**16 - 1))
        if (low, high) != (0, 2**16 - 1):
            match(2, "range", low=low, high=high)
    if draw(st.booleans()):
        match(3, "optional", value=draw(st.integers(0, 2**48 - 1)))
    prio, cookie = draw(st.integers(1, 2**31 - 1)), draw(uint64)
    metadata = draw(st.binary(max_size=8))
    for e in (written, expected):
        e.table_entry.priority = prio
        e.table_entry.controller_metadata = cookie
        e.table_entry.metadata = metadata
    return written, expected


@st.composite
def routes_entry(draw: st.DrawFn, f: Fuzzed) -> tuple[Entity, Entity]:
    """A valid entry of ``routes`` (lpm bit<48>) with ``forward(bit<9>)``."""
    names = f.compiled.names
    plen = draw(st.integers(0, 48))
    value = draw(st.integers(0, 2**48 - 1)) >> (48 - plen) << (48 - plen) if plen else 0
    port = draw(st.integers(0, 2**9 - 1))
    t, a = names.table_id("routes"), names.action_id("forward")
    if plen:
        written = table_entry(t, [FieldMatch(field_id=1, lpm=FieldMatch.LPM(
            value=padded(value, draw), prefix_len=plen))], a, [padded(port, draw)])
        expected = table_entry(t, [FieldMatch(field_id=1, lpm=FieldMatch.LPM(
            value=canonical(value), prefix_len=plen))], a, [canonical(port)])
    else:
        written = table_entry(t, [], a, [padded(port, draw)])
        expected = table_entry(t, [], a, [canonical(port)])
    return written, expected


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_table_entries_read_back_canonical(fuzzed: Fuzzed, data: st.DataObject) -> None:
    f = fuzzed
    c = f.client
    written, expected = data.draw(st.one_of(acl_entry(f), routes_entry(f)))
    tid = written.table_entry.table_id
    for ent in c.read(table_entry(tid)):
        if not ent.table_entry.is_const:
            c.write(update("DELETE", ent))
    c.write(update("INSERT", written))
    [back] = c.read(table_entry(tid))
    assert back == expected
    [same] = c.read(written)  # the written form selects the entry too
    assert same == expected
    c.write(update("DELETE", written))
    assert c.read(table_entry(tid)) == []


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_registers_read_back_canonical(fuzzed: Fuzzed, data: st.DataObject) -> None:
    f = fuzzed
    c = f.client
    name, signed, width = data.draw(st.sampled_from([("reg32", False, 32),
                                                      ("sreg", True, 16)]))
    if signed:
        value = data.draw(st.integers(-(2 ** (width - 1)), 2 ** (width - 1) - 1))
    else:
        value = data.draw(st.integers(0, 2**width - 1))
    ent = Entity()
    r = ent.register_entry
    r.register_id = f.compiled.names.register_id(name)
    r.index.index = data.draw(st.integers(0, 3))
    r.data.bitstring = padded(value, data.draw, signed=signed)
    c.write(update("MODIFY", ent))
    [back] = c.read(ent)
    nbits = (value if value >= 0 else ~value).bit_length() + (1 if signed else 0)
    assert back.register_entry.data.bitstring == value.to_bytes(
        max(1, (nbits + 7) // 8), "big", signed=signed)


# ------------------------------------------------ action selector reference counting


@st.composite
def selector_op(draw: st.DrawFn, f: Fuzzed) -> tuple[str, Entity]:
    """One INSERT / MODIFY / DELETE of a member, group or ``ecmp`` entry, over a few ids
    so that they refer to each other."""
    names = f.compiled.names
    [sel] = f.compiled.p4info.action_profiles
    kind = draw(st.sampled_from(["INSERT", "MODIFY", "DELETE"]))
    ent = Entity()
    what = draw(st.sampled_from(["member", "group", "entry"]))
    if what == "member":
        m = ent.action_profile_member
        m.action_profile_id, m.member_id = sel.preamble.id, draw(st.integers(1, 3))
        if draw(st.booleans()):
            m.action.action_id = names.action_id("forward")
            m.action.params.add(param_id=1, value=bytes([draw(st.integers(1, 8))]))
        else:
            m.action.action_id = names.action_id("NoAction")
    elif what == "group":
        g = ent.action_profile_group
        g.action_profile_id, g.group_id = sel.preamble.id, draw(st.integers(1, 2))
        for mid in draw(st.sets(st.integers(1, 3))):
            g.members.add(member_id=mid, weight=draw(st.integers(1, 3)))
    else:
        te = ent.table_entry
        te.table_id = names.table_id("ecmp")
        te.match.append(exact(1, bytes([draw(st.integers(1, 2))])))
        if draw(st.booleans()):
            te.action.action_profile_member_id = draw(st.integers(1, 3))
        else:
            te.action.action_profile_group_id = draw(st.integers(1, 2))
    return kind, ent


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_selector_references_stay_consistent(fuzzed: Fuzzed, data: st.DataObject) -> None:
    """Random sequences of member, group and entry updates: every answer is a proper
    status, and afterwards entries, groups and members can all be deleted in that order
    (a leaked reference would make a delete FAILED_PRECONDITION)."""
    f = fuzzed
    c = f.client
    [sel] = f.compiled.p4info.action_profiles
    for kind, ent in data.draw(st.lists(selector_op(f), min_size=1, max_size=25)):
        check_status(lambda: c.write(update(kind, ent)), 1)  # noqa: B023 - called at once
    entries = c.read(table_entry(f.compiled.names.table_id("ecmp")))
    groups = c.read(Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup(
        action_profile_id=sel.preamble.id)))
    members = c.read(Entity(action_profile_member=p4runtime_pb2.ActionProfileMember(
        action_profile_id=sel.preamble.id)))
    member_ids = {m.action_profile_member.member_id for m in members}
    group_ids = {g.action_profile_group.group_id for g in groups}
    for g in groups:
        assert {m.member_id for m in g.action_profile_group.members} <= member_ids
    for e in entries:
        a = e.table_entry.action
        assert (a.action_profile_member_id in member_ids
                or a.action_profile_group_id in group_ids), e
    for ent in entries + groups + members:
        c.write(update("DELETE", ent))


# ------------------------------------------------------------ RECONCILE_AND_COMMIT


@st.composite
def state_op(draw: st.DrawFn, f: Fuzzed) -> tuple[str, Entity]:
    """An update that builds forwarding state: entries, selector objects, multicast
    groups, clone sessions, registers, counters, meters and the default of ``routes``."""
    names = f.compiled.names
    what = draw(st.sampled_from(["acl", "routes", "selector", "pre", "register", "counter",
                                 "meter", "default"]))
    if what == "acl":
        return "INSERT", draw(acl_entry(f))[0]
    if what == "routes":
        return "INSERT", draw(routes_entry(f))[0]
    if what == "selector":
        return draw(selector_op(f))
    ent = Entity()
    if what == "pre":
        pre = ent.packet_replication_engine_entry
        group = draw(st.booleans())
        out = pre.multicast_group_entry if group else pre.clone_session_entry
        if group:
            out.multicast_group_id = draw(st.integers(1, 3))
        else:
            out.session_id = draw(st.integers(1, 3))
        for port in draw(st.sets(st.integers(0, 8), max_size=3)):
            out.replicas.add(egress_port=port, instance=draw(st.integers(0, 3)))
        return draw(st.sampled_from(["INSERT", "MODIFY", "DELETE"])), ent
    if what == "register":
        r = ent.register_entry
        r.register_id = names.register_id("reg32")
        r.index.index = draw(st.integers(0, 15))
        r.data.bitstring = canonical(draw(st.integers(0, 2**32 - 1)))
    elif what == "counter":
        c = ent.counter_entry
        c.counter_id = names.counter_id("port_counter")
        c.index.index = draw(st.integers(0, 7))
        c.data.CopyFrom(p4runtime_pb2.CounterData(packet_count=draw(st.integers(0, 99)),
                                                  byte_count=draw(st.integers(0, 9999))))
    elif what == "meter":
        m = ent.meter_entry
        m.meter_id = names.meter_id("port_meter")
        m.index.index = draw(st.integers(0, 3))
        cir = draw(st.integers(1, 1000))
        m.config.CopyFrom(p4runtime_pb2.MeterConfig(cir=cir, cburst=10, pir=2 * cir,
                                                    pburst=20))
    else:
        ent.table_entry.table_id = names.table_id("routes")
        ent.table_entry.is_default_action = True
        if draw(st.booleans()):
            ent.table_entry.action.action.action_id = names.action_id("drop")
    return "MODIFY", ent


def everything(f: Fuzzed) -> list[bytes]:
    """Every entity the server holds, serialized and sorted."""
    read = f.client.read(
        table_entry(0, counter_data=p4runtime_pb2.CounterData()),
        table_entry(0, is_default_action=True),
        Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()),
        Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()),
        Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry()),
        Entity(register_entry=p4runtime_pb2.RegisterEntry()),
        Entity(counter_entry=p4runtime_pb2.CounterEntry()),
        Entity(meter_entry=p4runtime_pb2.MeterEntry()),
        Entity(direct_meter_entry=p4runtime_pb2.DirectMeterEntry()),
        Entity(value_set_entry=p4runtime_pb2.ValueSetEntry()),
        Entity(digest_entry=p4runtime_pb2.DigestEntry()))
    return sorted(e.SerializeToString() for e in read)


@pytest.fixture(scope="module")
def changed_config(compiled: Any) -> bytes:
    """The test program with other code but the same P4Info."""
    from p4rt_helpers import PROGRAM

    from switch.frontend import compile_text
    from switch.frontend.artifact import dump_artifact

    egress = ("control TestEgress(inout headers_t hdr, inout meta_t meta, "
              "inout standard_metadata_t sm) {\n    apply { ")
    changed = compile_text(PROGRAM.replace(egress, egress + "meta.color = 2; "), "p4rt_test.p4")
    return dump_artifact(changed).encode()


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_reconcile_keeps_random_state(fuzzed: Fuzzed, changed_config: bytes,
                                      data: st.DataObject) -> None:
    f = fuzzed
    c = f.client
    for kind, ent in data.draw(st.lists(state_op(f), max_size=12)):
        check_status(lambda: c.write(update(kind, ent)), 1)  # noqa: B023 - called at once
    before = everything(f)
    running = f.server.switch
    get = p4runtime_pb2.GetForwardingPipelineConfigRequest(
        device_id=DEVICE_ID, response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest
        .DEVICE_CONFIG_AND_COOKIE)
    current = c.stub.GetForwardingPipelineConfig(get, timeout=10).config.p4_device_config
    config = changed_config if current != changed_config else f.compiled.device_config
    c.set_pipeline(f.compiled.p4info, config,
                   action=p4runtime_pb2.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT)
    assert f.server.switch is not running
    assert everything(f) == before
