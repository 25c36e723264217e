"""The runtime interface of a running program: what the P4Runtime server, the STF
runner and tests use to manage a switch's state.

Names are P4Info fully-qualified names (``MyIngress.ipv4_lpm``); a unique suffix of a
name on a dot boundary (``ipv4_lpm``) is accepted too. Values are Python ints; byte
strings are the server's business. Errors are ``SwitchRuntimeError`` with a typed code
that the P4Runtime layer maps to gRPC status codes in one place.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union


class ErrorCode(enum.Enum):
    NOT_FOUND = "not found"
    ALREADY_EXISTS = "already exists"
    INVALID_ARGUMENT = "invalid argument"
    BAD_MATCH_KEY = "bad match key"
    BAD_ACTION = "bad action"
    BAD_ACTION_DATA = "bad action data"
    TABLE_FULL = "table full"
    CONST_TABLE = "table is const"
    OUT_OF_RANGE = "index out of range"
    IN_USE = "still in use"
    FAILED_PRECONDITION = "failed precondition"
    UNSUPPORTED = "unsupported"


class SwitchRuntimeError(Exception):
    def __init__(self, code: ErrorCode, message: str):
        self.code = code
        self.message = message
        super().__init__(f"{code.value}: {message}")


@dataclass(frozen=True, slots=True)
class Exact:
    value: int


@dataclass(frozen=True, slots=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True, slots=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True, slots=True)
class Range:
    low: int
    high: int


@dataclass(frozen=True, slots=True)
class Optional:
    """An optional-match key: ``value`` None is the wildcard."""

    value: int | None


MatchValue = Union[Exact, Lpm, Ternary, Range, Optional]  # noqa: UP007


@dataclass(frozen=True, slots=True)
class ActionCall:
    action: str  # fqn
    args: tuple[int, ...]  # control-plane parameters in declaration order


@dataclass(frozen=True, slots=True)
class MemberRef:
    """An indirect table entry's action: member ``id`` of the table's action profile."""

    id: int


@dataclass(frozen=True, slots=True)
class GroupRef:
    """An indirect table entry's action: group ``id`` of the table's action selector."""

    id: int


@dataclass(frozen=True, slots=True)
class ProfileMember:
    id: int
    action: ActionCall


@dataclass(frozen=True, slots=True)
class ProfileGroup:
    id: int
    members: dict[int, int]  # member id -> weight
    max_size: int = 0


@dataclass(frozen=True, slots=True)
class EntrySpec:
    keys: tuple[MatchValue, ...]  # one per key element, in key order
    # a direct action; MemberRef/GroupRef for entries of indirect tables written so
    action: ActionCall | MemberRef | GroupRef
    priority: int | None  # None for tables without ternary/range/optional keys
