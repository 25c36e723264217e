"""Byte strings, match fields, parameters and P4Data, without a server."""

from __future__ import annotations

import grpc
import pytest
from p4.config.v1 import p4info_pb2, p4types_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2
from p4rt_helpers import exact, lpm, optional, range_, ternary

from switch.engine.runtime import Exact, Lpm, Optional, Range, Ternary
from switch.runtime.codec import (
    P4DataCodec,
    decode_int,
    decode_match,
    decode_params,
    decode_uint,
    encode_int,
    encode_match,
    encode_uint,
)
from switch.runtime.errors import P4RuntimeError
from switch.runtime.stream import packet_in_message, packet_out_frame

Code = grpc.StatusCode
MF = p4info_pb2.MatchField


def code_of(fn, *args):  # type: ignore[no-untyped-def]
    with pytest.raises(P4RuntimeError) as info:
        fn(*args)
    return info.value.code


# The examples of the specification's valid and invalid byte string tables.
@pytest.mark.parametrize("signed, width, data, value", [
    (False, 8, b"\x63", 99), (False, 16, b"\x00\x63", 99), (False, 16, b"\x63", 99),
    (False, 16, b"\x30\x64", 12388), (False, 16, b"\x00\x30\x64", 12388),
    (False, 12, b"\x00\x63", 99), (False, 12, b"\x63", 99), (False, 12, b"\x00\x00\x63", 99),
    (True, 8, b"\x63", 99), (True, 8, b"\x9d", -99), (True, 8, b"\xff\x9d", -99),
    (True, 12, b"\xfd\x1d", -739), (True, 16, b"\x00\x00", 0), (True, 16, b"\x00", 0),
])
def test_valid_byte_strings(signed: bool, width: int, data: bytes, value: int) -> None:
    decode = decode_int if signed else decode_uint
    assert decode(data, width, "v") == value
    encoded = encode_int(value) if signed else encode_uint(value)
    assert decode(encoded, width, "v") == value
    assert len(encoded) <= len(data)  # the canonical form is the shortest


@pytest.mark.parametrize("signed, width, data", [
    (False, 8, b"\x01\x63"), (False, 8, b""), (False, 16, b"\x01\x00\x63"),
    (False, 12, b"\x10\x63"), (False, 12, b"\x01\x00\x63"), (False, 12, b"\x00\x40\x63"),
    (True, 8, b"\x00\x9d"), (True, 12, b"\x8d\x1d"), (True, 16, b""),
])
def test_invalid_byte_strings(signed: bool, width: int, data: bytes) -> None:
    """INVALID_ARGUMENT, as the spec's sections on match fields, action parameters, packet
    metadata and register data say (and BMv2 answers), not OUT_OF_RANGE."""
    assert code_of(decode_int if signed else decode_uint, data, width, "v") == (
        Code.INVALID_ARGUMENT)


def test_canonical_encodings() -> None:
    assert encode_uint(0) == b"\x00" and encode_uint(0x1FF) == b"\x01\xff"
    assert encode_int(-1) == b"\xff" and encode_int(127) == b"\x7f"
    assert encode_int(128) == b"\x00\x80" and encode_int(-129) == b"\xff\x7f"


FIELDS = [
    MF(id=1, name="e", bitwidth=16, match_type=MF.EXACT),
    MF(id=2, name="l", bitwidth=32, match_type=MF.LPM),
    MF(id=3, name="t", bitwidth=9, match_type=MF.TERNARY),
    MF(id=4, name="r", bitwidth=8, match_type=MF.RANGE),
    MF(id=5, name="o", bitwidth=48, match_type=MF.OPTIONAL),
]


def test_match_round_trip_and_wildcards() -> None:
    given = [exact(1, b"\x00\x00\x05"), lpm(2, b"\x0a\x00\x00\x00", 8),
             ternary(3, b"\x01", b"\x01\x0f"), range_(4, b"\x02", b"\x09"), optional(5, b"\x07")]
    values = decode_match(FIELDS, given, "t")
    assert values == (Exact(5), Lpm(0x0A000000, 8), Ternary(1, 0x10F), Range(2, 9), Optional(7))
    back = encode_match(FIELDS, values)
    assert back[0].exact.value == b"\x05" and back[3].range.high == b"\x09"
    only_exact = decode_match(FIELDS, [exact(1, b"\x05")], "t")
    assert only_exact[1:] == (Lpm(0, 0), Ternary(0, 0), Range(0, 255), Optional(None))
    assert encode_match(FIELDS, only_exact) == [exact(1, b"\x05")]


@pytest.mark.parametrize("fm, code", [
    (lpm(2, b"\x0a", 0), Code.INVALID_ARGUMENT),  # don't care given
    (lpm(2, b"\x0a\x00\x00\x01", 24), Code.INVALID_ARGUMENT),  # bits beyond the prefix
    (lpm(2, b"\x0a", 33), Code.INVALID_ARGUMENT),
    (ternary(3, b"\x02", b"\x01"), Code.INVALID_ARGUMENT),  # bits outside the mask
    (ternary(3, b"\x00", b"\x00"), Code.INVALID_ARGUMENT),
    (ternary(3, b"\x00", b"\x02\x00"), Code.INVALID_ARGUMENT),  # a 10-bit mask
    (range_(4, b"\x00", b"\xff"), Code.INVALID_ARGUMENT),  # the full range
    (range_(4, b"\x05", b"\x01"), Code.INVALID_ARGUMENT),
    (exact(5, b"\x01"), Code.INVALID_ARGUMENT),  # optional field given as exact
    (p4runtime_pb2.FieldMatch(field_id=5), Code.INVALID_ARGUMENT),  # no value at all
])
def test_bad_match_fields(fm: p4runtime_pb2.FieldMatch, code: grpc.StatusCode) -> None:
    assert code_of(decode_match, FIELDS, [exact(1, b"\x01"), fm], "t") == code


def test_params() -> None:
    action = p4info_pb2.Action()
    action.preamble.name = "a"
    action.params.add(id=1, name="port", bitwidth=9)
    action.params.add(id=2, name="mac", bitwidth=48)
    params = [p4runtime_pb2.Action.Param(param_id=2, value=b"\x00\x01"),
              p4runtime_pb2.Action.Param(param_id=1, value=b"\x01\x00")]
    assert decode_params(action, params) == (256, 1)
    assert code_of(decode_params, action, params[:1]) == Code.INVALID_ARGUMENT
    assert code_of(decode_params, action, params + params[:1]) == Code.INVALID_ARGUMENT
    too_wide = [p4runtime_pb2.Action.Param(param_id=1, value=b"\x02\x00"), params[0]]
    assert code_of(decode_params, action, too_wide) == Code.INVALID_ARGUMENT


def test_p4data() -> None:
    info = p4types_pb2.P4TypeInfo()
    st = info.structs["learn_t"]
    st.members.add(name="src").type_spec.bitstring.bit.bitwidth = 48
    st.members.add(name="delta").type_spec.bitstring.int.bitwidth = 8
    st.members.add(name="flag").type_spec.bool.SetInParent()
    st.members.add(name="reason").type_spec.serializable_enum.name = "Reason"
    info.serializable_enums["Reason"].underlying_type.bitwidth = 8
    codec = P4DataCodec(info)
    spec = p4types_pb2.P4DataTypeSpec()
    spec.struct.name = "learn_t"
    data = codec.encode_leaves(spec, iter((0xAA, -2, 1, 2)))
    m = data.struct.members
    assert (m[0].bitstring, m[1].bitstring, m[2].bool, m[3].enum_value) == (
        b"\xaa", b"\xfe", True, b"\x02")

    int16 = p4types_pb2.P4DataTypeSpec()
    int16.bitstring.int.bitwidth = 16
    assert codec.decode(int16, p4data_pb2.P4Data(bitstring=b"\xff\xfe"), "r") == -2
    assert codec.encode(int16, -2).bitstring == b"\xfe"
    assert code_of(codec.decode, int16, p4data_pb2.P4Data(bool=True), "r") == (
        Code.INVALID_ARGUMENT)
    assert code_of(codec.decode, spec, data, "r") == Code.UNIMPLEMENTED  # structs: no


def test_controller_headers() -> None:
    out = p4info_pb2.ControllerPacketMetadata()
    out.preamble.name = "packet_out"
    out.metadata.add(id=1, name="egress_port", bitwidth=9)
    out.metadata.add(id=2, name="_pad", bitwidth=7, annotations=["@padding"])
    po = p4runtime_pb2.PacketOut(payload=b"data")
    po.metadata.add(metadata_id=1, value=b"\x01\x02")
    assert packet_out_frame(out, po) == bytes([0x81, 0x00]) + b"data"
    assert packet_out_frame(None, p4runtime_pb2.PacketOut(payload=b"x")) == b"x"

    pin = packet_in_message(out, bytes([0x81, 0x7F]) + b"rest")
    assert [(m.metadata_id, m.value) for m in pin.metadata] == [(1, b"\x01\x02"), (2, b"\x7f")]
    assert pin.payload == b"rest"
