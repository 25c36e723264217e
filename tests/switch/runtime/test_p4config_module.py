"""``p4.tmp.p4config_pb2``, which the set-up installs for P4Runtime clients
(interop/p4config), writes the bytes BMv2's PI clients write, and the switch reads them."""

from __future__ import annotations

from switch.runtime.device_config import P4DeviceConfig, p4config_file, program_bytes


def test_clients_get_p4_tmp_p4config_pb2() -> None:
    from p4.tmp import p4config_pb2

    message = p4config_pb2.P4DeviceConfig(reassign=True, device_data=b'{"x": 1}')
    message.extras.kv["a"] = "b"
    data = message.SerializeToString()
    # field 1 (reassign) varint, field 2 (extras) with its map entry, field 3 the bytes
    assert data == b'\x08\x01\x12\x08\n\x06\n\x01a\x12\x01b\x1a\x08{"x": 1}'
    assert program_bytes(data) == b'{"x": 1}'
    assert p4config_pb2.DESCRIPTOR.package == "p4.tmp"


def test_the_definition_is_pis() -> None:
    f = p4config_file()
    (config,) = f.message_type
    assert [(x.name, x.number) for x in config.field] == [
        ("reassign", 1), ("extras", 2), ("device_data", 3)]
    assert program_bytes(b'  {"plain": true}') == b'  {"plain": true}'
    assert P4DeviceConfig.DESCRIPTOR.full_name == "p4.tmp.P4DeviceConfig"
