"""The engine-to-gRPC error mapping and the batch error details."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from switch.engine.runtime import ErrorCode, SwitchRuntimeError
from switch.runtime.errors import (
    P4RuntimeError,
    as_p4runtime_error,
    batch_status,
    from_switch_error,
    invalid_argument,
)


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_engine_error_has_a_grpc_code(code: ErrorCode) -> None:
    err = from_switch_error(SwitchRuntimeError(code, "why"))
    assert err.code not in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.OK)
    assert err.message == "why"


def test_specific_mappings() -> None:
    def code(c: ErrorCode) -> grpc.StatusCode:
        return from_switch_error(SwitchRuntimeError(c, "")).code

    assert code(ErrorCode.TABLE_FULL) == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert code(ErrorCode.CONST_TABLE) == grpc.StatusCode.PERMISSION_DENIED
    assert code(ErrorCode.UNSUPPORTED) == grpc.StatusCode.UNIMPLEMENTED
    assert code(ErrorCode.BAD_MATCH_KEY) == grpc.StatusCode.INVALID_ARGUMENT


def test_unexpected_exceptions_are_internal() -> None:
    err = as_p4runtime_error(KeyError("x"), "test")
    assert err.code == grpc.StatusCode.INTERNAL and "KeyError" in err.message
    same = invalid_argument("bad")
    assert as_p4runtime_error(same) is same


def test_batch_status_has_one_error_per_element() -> None:
    errors: list[P4RuntimeError | None] = [None, invalid_argument("bad"), None]
    status = batch_status(errors, "Write")
    assert status.code == code_pb2.UNKNOWN
    unpacked = []
    for detail in status.details:
        e = p4runtime_pb2.Error()
        assert detail.Unpack(e)
        unpacked.append((e.canonical_code, e.message))
    assert unpacked == [(code_pb2.OK, ""), (code_pb2.INVALID_ARGUMENT, "bad"), (code_pb2.OK, "")]


def test_second_server_on_a_taken_port_fails() -> None:
    from switch.runtime import P4RuntimeServer

    first = P4RuntimeServer(device_id=1, address="127.0.0.1:0")
    port = first.start()
    try:
        second = P4RuntimeServer(device_id=2, address=f"127.0.0.1:{port}")
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}"):
            second.start()
    finally:
        first.stop()
