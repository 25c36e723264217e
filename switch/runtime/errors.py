"""P4Runtime errors: gRPC status codes, the engine-to-gRPC mapping and batch details.

Every failure inside the server is a ``P4RuntimeError`` carrying the gRPC code the
P4Runtime specification prescribes. Engine errors (``SwitchRuntimeError``) are turned
into gRPC codes here and nowhere else (``from_switch_error``). Anything else that escapes
a handler is a bug: it becomes INTERNAL with its message and is logged with a traceback.

Batch RPCs (Write, Read) that fail partially answer UNKNOWN and put a serialized
``google.rpc.Status`` in the ``grpc-status-details-bin`` trailing metadata, whose
``details`` hold one ``p4.v1.Error`` per update (OK for those that succeeded).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import grpc
from google.protobuf import any_pb2
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2

from switch.engine.runtime import ErrorCode, SwitchRuntimeError

log = logging.getLogger("switch.runtime")

StatusCode = grpc.StatusCode

DETAILS_KEY = "grpc-status-details-bin"


class P4RuntimeError(Exception):
    """A request (or one update of a batch) failed with a gRPC status code."""

    def __init__(self, code: grpc.StatusCode, message: str):
        self.code = code
        self.message = message
        super().__init__(f"{code.name}: {message}")


def invalid_argument(message: str) -> P4RuntimeError:
    return P4RuntimeError(StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> P4RuntimeError:
    return P4RuntimeError(StatusCode.NOT_FOUND, message)


def already_exists(message: str) -> P4RuntimeError:
    return P4RuntimeError(StatusCode.ALREADY_EXISTS, message)


def permission_denied(message: str) -> P4RuntimeError:
    return P4RuntimeError(StatusCode.PERMISSION_DENIED, message)


def failed_precondition(message: str) -> P4RuntimeError:
    return P4RuntimeError(StatusCode.FAILED_PRECONDITION, message)


def unimplemented(message: str) -> P4RuntimeError:
    return P4RuntimeError(StatusCode.UNIMPLEMENTED, message)


def out_of_range(message: str) -> P4RuntimeError:
    return P4RuntimeError(StatusCode.OUT_OF_RANGE, message)


def resource_exhausted(message: str) -> P4RuntimeError:
    return P4RuntimeError(StatusCode.RESOURCE_EXHAUSTED, message)


# The one place where engine error codes become gRPC codes.
_ENGINE_CODES: dict[ErrorCode, grpc.StatusCode] = {
    ErrorCode.NOT_FOUND: StatusCode.NOT_FOUND,
    ErrorCode.ALREADY_EXISTS: StatusCode.ALREADY_EXISTS,
    ErrorCode.INVALID_ARGUMENT: StatusCode.INVALID_ARGUMENT,
    ErrorCode.BAD_MATCH_KEY: StatusCode.INVALID_ARGUMENT,
    ErrorCode.BAD_ACTION: StatusCode.INVALID_ARGUMENT,
    ErrorCode.BAD_ACTION_DATA: StatusCode.INVALID_ARGUMENT,
    ErrorCode.TABLE_FULL: StatusCode.RESOURCE_EXHAUSTED,
    ErrorCode.CONST_TABLE: StatusCode.PERMISSION_DENIED,
    ErrorCode.OUT_OF_RANGE: StatusCode.OUT_OF_RANGE,
    ErrorCode.IN_USE: StatusCode.FAILED_PRECONDITION,
    ErrorCode.FAILED_PRECONDITION: StatusCode.FAILED_PRECONDITION,
    ErrorCode.UNSUPPORTED: StatusCode.UNIMPLEMENTED,
}


def from_switch_error(e: SwitchRuntimeError) -> P4RuntimeError:
    code = _ENGINE_CODES.get(e.code, StatusCode.UNKNOWN)
    return P4RuntimeError(code, e.message)


def as_p4runtime_error(exc: BaseException, what: str = "request") -> P4RuntimeError:
    """The P4RuntimeError to report for ``exc``; unexpected exceptions are logged."""
    if isinstance(exc, P4RuntimeError):
        return exc
    if isinstance(exc, SwitchRuntimeError):
        return from_switch_error(exc)
    log.exception("internal error while handling a P4Runtime %s", what)
    return P4RuntimeError(StatusCode.INTERNAL, f"internal error: {type(exc).__name__}: {exc}")


def code_number(code: grpc.StatusCode) -> int:
    """The numeric value of a gRPC code (as google.rpc.Code and p4.v1.Error use it)."""
    return int(code.value[0])


def p4_error(err: P4RuntimeError | None) -> p4runtime_pb2.Error:
    """The ``p4.v1.Error`` for one element of a batch (None for success)."""
    if err is None:
        return p4runtime_pb2.Error(canonical_code=code_number(StatusCode.OK))
    return p4runtime_pb2.Error(canonical_code=code_number(err.code), message=err.message)


def batch_status(errors: Sequence[P4RuntimeError | None], message: str) -> status_pb2.Status:
    status = status_pb2.Status(code=code_number(StatusCode.UNKNOWN), message=message)
    for err in errors:
        packed = any_pb2.Any()
        packed.Pack(p4_error(err))
        status.details.append(packed)
    return status


def batch_summary(errors: Sequence[P4RuntimeError | None], what: str) -> str:
    """A one-line summary of a partially failed batch, e.g. for the gRPC details text."""
    failed = [(i, e) for i, e in enumerate(errors) if e is not None]
    first_index, first = failed[0]
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return (f"{what}: {len(failed)} of {len(errors)} failed; at index {first_index}: "
            f"{first.code.name}: {first.message}{more}")


def set_batch_error(context: grpc.ServicerContext, errors: Sequence[P4RuntimeError | None],
                    what: str) -> None:
    """Make the RPC end with UNKNOWN and per-element details (the caller then returns)."""
    message = batch_summary(errors, what)
    status = batch_status(errors, message)
    context.set_trailing_metadata(((DETAILS_KEY, status.SerializeToString()),))
    context.set_code(StatusCode.UNKNOWN)
    context.set_details(message)
