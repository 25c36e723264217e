"""Capabilities, Set/GetForwardingPipelineConfig and request-level checks."""

from __future__ import annotations

import json

import grpc
import pytest
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2
from p4rt_helpers import Client, eth, expect_code, lpm, table_entry, update

from switch.runtime import API_VERSION, P4RuntimeServer

Code = grpc.StatusCode
Set = p4runtime_pb2.SetForwardingPipelineConfigRequest
Get = p4runtime_pb2.GetForwardingPipelineConfigRequest


@pytest.fixture
def primary(address: str, clients: list[Client]) -> Client:
    c = Client(address, election_id=(0, 10))
    clients.append(c)
    return c


def get_config(c: Client, rtype: int = Get.ALL, device_id: int = 1
               ) -> p4runtime_pb2.GetForwardingPipelineConfigResponse:
    return c.stub.GetForwardingPipelineConfig(Get(device_id=device_id, response_type=rtype),
                                              timeout=10)


def route(c) -> p4runtime_pb2.Update:  # type: ignore[no-untyped-def]
    return update("INSERT", table_entry(c.names.table_id("routes"), [lpm(1, b"\x01", 48)],
                                        c.names.action_id("NoAction")))


def test_capabilities(primary: Client) -> None:
    resp = primary.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=10)
    assert resp.p4runtime_api_version == API_VERSION == "1.4.1"


def test_no_pipeline_yet(primary: Client, compiled) -> None:  # type: ignore[no-untyped-def]
    assert not get_config(primary).HasField("config")
    expect_code(Code.FAILED_PRECONDITION, primary.write, route(compiled))
    with pytest.raises(grpc.RpcError) as info:
        primary.read(table_entry(0))
    assert info.value.code() == Code.FAILED_PRECONDITION


def test_set_and_get_config(primary: Client, compiled, server: P4RuntimeServer) -> None:  # type: ignore[no-untyped-def]
    primary.set_pipeline(compiled.p4info, compiled.device_config, cookie=42)
    assert server.switch is not None
    full = get_config(primary).config
    assert full.p4info == compiled.p4info
    assert full.p4_device_config == compiled.device_config
    assert full.cookie.cookie == 42
    cookie_only = get_config(primary, Get.COOKIE_ONLY).config
    assert cookie_only.cookie.cookie == 42 and not cookie_only.HasField("p4info")
    assert not cookie_only.p4_device_config
    info_only = get_config(primary, Get.P4INFO_AND_COOKIE).config
    assert info_only.HasField("p4info") and not info_only.p4_device_config
    blob_only = get_config(primary, Get.DEVICE_CONFIG_AND_COOKIE).config
    assert blob_only.p4_device_config and not blob_only.HasField("p4info")


def test_commit_clears_state_and_reconcile_keeps_it(primary: Client, compiled,  # type: ignore[no-untyped-def]
                                                    server: P4RuntimeServer) -> None:
    primary.set_pipeline(compiled.p4info, compiled.device_config)
    primary.write(route(compiled))
    first = server.switch
    primary.set_pipeline(compiled.p4info, compiled.device_config,
                         action=Set.RECONCILE_AND_COMMIT, cookie=7)
    assert server.switch is first and len(primary.read(table_entry(0))) == 2
    assert get_config(primary).config.cookie.cookie == 7
    primary.set_pipeline(compiled.p4info, compiled.device_config)  # VERIFY_AND_COMMIT
    assert server.switch is not first
    assert len(primary.read(table_entry(0))) == 1  # only the const entry


def test_verify_save_and_commit(primary: Client, compiled, server: P4RuntimeServer) -> None:  # type: ignore[no-untyped-def]
    primary.set_pipeline(compiled.p4info, compiled.device_config, action=Set.VERIFY)
    assert server.switch is None
    expect_code(Code.NOT_FOUND, primary.set_pipeline, None, b"", action=Set.COMMIT)
    primary.set_pipeline(compiled.p4info, compiled.device_config, action=Set.VERIFY_AND_SAVE)
    assert server.switch is None  # packets do not see the saved pipeline yet
    to_port3 = table_entry(compiled.names.table_id("routes"), [lpm(1, b"\x01", 48)],
                           compiled.names.action_id("forward"), [b"\x03"])
    primary.write(update("INSERT", to_port3))  # writes go to the saved pipeline
    expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, compiled.p4info,
                compiled.device_config, action=Set.COMMIT)
    primary.set_pipeline(None, b"", action=Set.COMMIT)
    assert server.switch is not None
    assert len(primary.read(table_entry(compiled.names.table_id("routes")))) == 1
    assert [p for p, _ in server.inject(1, eth(0x01))] == [3]


def test_bad_configs(primary: Client, compiled) -> None:  # type: ignore[no-untyped-def]
    expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, compiled.p4info, b"not json")
    expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, compiled.p4info, b"")
    expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, None, b"",
                action=Set.VERIFY_AND_COMMIT)
    expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, compiled.p4info,
                compiled.device_config, action=Set.UNSPECIFIED)

    renamed = p4info_pb2.P4Info()
    renamed.CopyFrom(compiled.p4info)
    renamed.tables[0].preamble.id += 1
    e = expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, renamed,
                    compiled.device_config)
    assert "does not match" in e.details()
    narrower = p4info_pb2.P4Info()
    narrower.CopyFrom(compiled.p4info)
    narrower.actions[-1].params.add(id=9, name="x", bitwidth=8)
    expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, narrower, compiled.device_config)

    # a syntactically valid artifact of a program with an error
    doc = json.loads(compiled.device_config)
    doc["text"] = doc["text"].replace("bit<48> dst;", "bit<48> dst")
    expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, compiled.p4info,
                json.dumps(doc).encode())

    # no P4Info at all: the program's own is used
    primary.set_pipeline(None, compiled.device_config)
    assert get_config(primary).config.p4info == compiled.p4info


def test_the_device_config_wrapped_as_bmv2_takes_it(primary: Client, compiled,  # type: ignore[no-untyped-def]
                                                     server: P4RuntimeServer) -> None:
    """A serialized p4.tmp.P4DeviceConfig whose device_data is the program, as p4lang's
    p4runtime_lib and BMv2's PI clients send it; Get gives it back as it came."""
    from switch.runtime.device_config import P4DeviceConfig

    wrapped = P4DeviceConfig(reassign=True, device_data=compiled.device_config)
    wrapped.extras.kv["note"] = "ignored"
    primary.set_pipeline(compiled.p4info, wrapped.SerializeToString())
    assert server.switch is not None
    assert get_config(primary).config.p4_device_config == wrapped.SerializeToString()
    e = expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, compiled.p4info,
                    P4DeviceConfig(reassign=True).SerializeToString())
    assert "a p4.tmp.P4DeviceConfig without device_data" in e.details()
    e = expect_code(Code.INVALID_ARGUMENT, primary.set_pipeline, compiled.p4info,
                    P4DeviceConfig(device_data=b"not json").SerializeToString())
    assert "not a compiled program: invalid JSON" in e.details()


def test_device_id_and_role(primary: Client, compiled) -> None:  # type: ignore[no-untyped-def]
    primary.set_pipeline(compiled.p4info, compiled.device_config)
    with pytest.raises(grpc.RpcError) as info:
        get_config(primary, device_id=2)
    assert info.value.code() == Code.NOT_FOUND
    req = p4runtime_pb2.WriteRequest(device_id=2, updates=[route(compiled)])
    req.election_id.low = 10
    with pytest.raises(grpc.RpcError) as info:
        primary.stub.Write(req, timeout=10)
    assert info.value.code() == Code.NOT_FOUND
    req.device_id = 1
    req.role = "other"
    with pytest.raises(grpc.RpcError) as info:
        primary.stub.Write(req, timeout=10)
    assert info.value.code() == Code.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:
        list(primary.stub.Read(p4runtime_pb2.ReadRequest(device_id=3, entities=[
            table_entry(0)]), timeout=10))
    assert info.value.code() == Code.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:
        list(primary.stub.Read(p4runtime_pb2.ReadRequest(device_id=1, entities=[
            p4runtime_pb2.Entity()]), timeout=10))
    assert info.value.code() == Code.UNKNOWN  # the one request of the batch is invalid


def test_internal_errors_do_not_crash_the_server(primary: Client, compiled,  # type: ignore[no-untyped-def]
                                                 server: P4RuntimeServer) -> None:
    primary.set_pipeline(compiled.p4info, compiled.device_config)

    class Broken:
        def __getattr__(self, name: str) -> object:
            raise RuntimeError("engine exploded")

    real = server._active.switch
    server._active.switch = Broken()
    try:
        e = expect_code(Code.INTERNAL, primary.write, route(compiled))
        assert e is not None
    finally:
        server._active.switch = real
    primary.write(route(compiled))  # still serving


def test_in_process_pipeline(compiled) -> None:  # type: ignore[no-untyped-def]
    """A switch process can load the program itself; controllers then only write."""
    server = P4RuntimeServer(device_id=1, address="127.0.0.1:0", cpu_port=255)
    server.set_pipeline(compiled.program)
    server.start()
    try:
        c = Client(f"127.0.0.1:{server.port}", election_id=(0, 1))
        try:
            c.write(route(compiled))
            config = get_config(c).config
            assert config.p4info == compiled.p4info
            assert config.p4_device_config == compiled.device_config
        finally:
            c.close()
    finally:
        server.stop(grace=0)


def test_reconcile_with_new_code_keeps_state(primary: Client, compiled,  # type: ignore[no-untyped-def]
                                             server: P4RuntimeServer) -> None:
    from p4.v1 import p4data_pb2
    from p4rt_helpers import PROGRAM, exact, optional

    from switch.frontend import compile_text
    from switch.frontend.artifact import dump_artifact

    n = compiled.names
    primary.set_pipeline(compiled.p4info, compiled.device_config)
    counter = p4runtime_pb2.CounterData(packet_count=3, byte_count=30)
    meter = p4runtime_pb2.MeterConfig(cir=10, cburst=1, pir=20, pburst=2)
    group = p4runtime_pb2.Entity()
    group.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = 4
    group.packet_replication_engine_entry.multicast_group_entry.replicas.add(egress_port=1)
    reg = p4runtime_pb2.Entity()
    reg.register_entry.register_id = n.register_id("reg32")
    reg.register_entry.index.index = 3
    reg.register_entry.data.CopyFrom(p4data_pb2.P4Data(bitstring=b"\x2a"))
    vset = p4runtime_pb2.Entity()
    vset.value_set_entry.value_set_id = n.value_set_id("special_types")
    vset.value_set_entry.members.add().match.append(exact(1, b"\x88\xb6"))
    primary.write(
        update("INSERT", table_entry(n.table_id("fwd"), [exact(1, b"\x01")],
                                     n.action_id("forward"), [b"\x03"], counter_data=counter,
                                     controller_metadata=5)),
        update("INSERT", table_entry(n.table_id("acl"), [optional(3, b"\x01")],
                                     n.action_id("acl_mark"), priority=2, meter_config=meter)),
        update("MODIFY", table_entry(n.table_id("routes"), [], n.action_id("drop"),
                                     is_default_action=True)),
        update("INSERT", group), update("MODIFY", reg), update("MODIFY", vset))
    before = sorted(e.SerializeToString() for e in primary.read(
        table_entry(0, counter_data=p4runtime_pb2.CounterData()), group, reg, vset,
        table_entry(n.table_id("routes"), is_default_action=True)))

    egress = ("control TestEgress(inout headers_t hdr, inout meta_t meta, "
              "inout standard_metadata_t sm) {\n    apply { ")
    assert egress in PROGRAM
    changed = compile_text(PROGRAM.replace(egress, egress + "meta.color = 1; "), "p4rt_test.p4")
    config = dump_artifact(changed).encode()
    assert config != compiled.device_config
    first = server.switch
    primary.set_pipeline(compiled.p4info, config, action=Set.RECONCILE_AND_COMMIT)
    assert server.switch is not first
    after = sorted(e.SerializeToString() for e in primary.read(
        table_entry(0, counter_data=p4runtime_pb2.CounterData()), group, reg, vset,
        table_entry(n.table_id("routes"), is_default_action=True)))
    assert after == before
    [acl] = primary.read(table_entry(n.table_id("acl"), meter_config=meter))
    assert acl.table_entry.meter_config == meter
    assert server.switch.mc_groups() == {4: [(1, 0)]}


def test_write_batches_are_atomic_for_packets(compiled) -> None:  # type: ignore[no-untyped-def]
    """The data plane (server.inject) waits while a Write batch is being applied."""
    import threading
    import time

    from switch.v1model import V1Switch

    events: list[str] = []
    started = threading.Event()

    class SlowSwitch:
        def __init__(self, program: object):
            self._sw = V1Switch(program, cpu_port=255)

        def __getattr__(self, name: str) -> object:
            return getattr(self._sw, name)

        def table_add(self, *args: object, **kwargs: object) -> int:
            events.append("add")
            started.set()
            time.sleep(0.05)
            return self._sw.table_add(*args, **kwargs)

        def inject(self, port: int, data: bytes) -> list:
            events.append("inject")
            return self._sw.inject(port, data)

    server = P4RuntimeServer(device_id=1, address="127.0.0.1:0", cpu_port=255,
                             on_pipeline=SlowSwitch)
    server.start()
    try:
        c = Client(f"127.0.0.1:{server.port}", election_id=(0, 1))
        try:
            c.set_pipeline(compiled.p4info, compiled.device_config)
            n = compiled.names
            batch = [update("INSERT", table_entry(n.table_id("routes"), [lpm(1, bytes([i]), 48)],
                                                  n.action_id("NoAction"))) for i in (1, 2, 3)]
            packets = threading.Thread(target=lambda: (started.wait(5),
                                                       server.inject(1, eth(0x09))))
            packets.start()
            c.write(*batch)
            packets.join(5)
        finally:
            c.close()
    finally:
        server.stop(grace=0)
    assert events == ["add", "add", "add", "inject"]
