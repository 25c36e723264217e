"""The device config of SetForwardingPipelineConfig, in both forms BMv2's PI server takes.

A controller sends the compiled program (``ina p4c -o``, JSON) either as it is, or
wrapped as a serialized ``p4.tmp.P4DeviceConfig`` whose ``device_data`` holds it, as
p4lang's ``p4runtime_lib`` (the tutorials) and PI's own clients do. The message is
defined here (PI's ``p4/tmp/p4config.proto``: ``reassign`` 1, ``extras`` 2 with a
string map ``kv``, ``device_data`` 3) because no PyPI package ships it; the
``ina-p4config`` distribution under ``interop/`` gives clients the same definition as
``p4.tmp.p4config_pb2``.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

FIELD = descriptor_pb2.FieldDescriptorProto
PACKAGE = "p4.tmp"
FILE_NAME = "p4/tmp/p4config.proto"


class DeviceConfigError(ValueError):
    """A device config in neither form; the message says what was found."""


def p4config_file() -> descriptor_pb2.FileDescriptorProto:
    """``p4/tmp/p4config.proto`` as a descriptor (wire-compatible with PI's)."""
    f = descriptor_pb2.FileDescriptorProto(name=FILE_NAME, package=PACKAGE, syntax="proto3")
    config = f.message_type.add(name="P4DeviceConfig")
    config.field.add(name="reassign", number=1, type=FIELD.TYPE_BOOL,
                     label=FIELD.LABEL_OPTIONAL, json_name="reassign")
    extras = config.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=FIELD.TYPE_STRING, label=FIELD.LABEL_OPTIONAL,
                    json_name="key")
    entry.field.add(name="value", number=2, type=FIELD.TYPE_STRING,
                    label=FIELD.LABEL_OPTIONAL, json_name="value")
    extras.field.add(name="kv", number=1, type=FIELD.TYPE_MESSAGE,
                     label=FIELD.LABEL_REPEATED, json_name="kv",
                     type_name=f".{PACKAGE}.P4DeviceConfig.Extras.KvEntry")
    config.field.add(name="extras", number=2, type=FIELD.TYPE_MESSAGE,
                     label=FIELD.LABEL_OPTIONAL, json_name="extras",
                     type_name=f".{PACKAGE}.P4DeviceConfig.Extras")
    config.field.add(name="device_data", number=3, type=FIELD.TYPE_BYTES,
                     label=FIELD.LABEL_OPTIONAL, json_name="deviceData")
    return f


def p4config_message_class(pool: descriptor_pool.DescriptorPool) -> type[Message]:
    """The P4DeviceConfig class in ``pool`` (the file is added to it if missing)."""
    name = f"{PACKAGE}.P4DeviceConfig"
    try:
        descriptor = pool.FindMessageTypeByName(name)
    except KeyError:
        pool.Add(p4config_file())
        descriptor = pool.FindMessageTypeByName(name)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


# A pool of its own: the switch must not clash with a client's p4.tmp in the same process.
P4DeviceConfig = p4config_message_class(descriptor_pool.DescriptorPool())


def program_bytes(device_config: bytes) -> bytes:
    """The compiled program a device config carries, in either form."""
    if device_config.lstrip()[:1] == b"{":
        return device_config
    message = P4DeviceConfig()
    try:
        message.ParseFromString(device_config)
    except DecodeError:
        raise DeviceConfigError("neither a compiled program (JSON from 'ina p4c -o') nor a "
                                "serialized p4.tmp.P4DeviceConfig") from None
    data: bytes = message.device_data  # type: ignore[attr-defined]
    if not data:
        raise DeviceConfigError("a p4.tmp.P4DeviceConfig without device_data (it must hold "
                                "the compiled program, JSON from 'ina p4c -o')")
    return data
