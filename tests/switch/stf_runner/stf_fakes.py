"""A stand-in program description and switch for runner tests: the runner needs only
the table/action metadata of a ``Program`` and the ``V1Switch`` methods."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from switch.engine.runtime import ErrorCode, SwitchRuntimeError


@dataclass
class FakeKey:
    name: str
    match_kind: str
    width: int


@dataclass
class FakeTable:
    fqn: str
    keys: list[FakeKey]
    actions: list[str]


@dataclass
class FakeAction:
    fqn: str
    params: list[tuple[str, int]]


@dataclass
class FakeExtern:
    fqn: str
    extern: str
    args: list[Any]


@dataclass
class FakeProgram:
    tables: dict[str, FakeTable] = field(default_factory=dict)
    actions: dict[str, FakeAction] = field(default_factory=dict)
    externs: dict[str, FakeExtern] = field(default_factory=dict)


def program(tables: Sequence[FakeTable], actions: Sequence[FakeAction],
            externs: Sequence[FakeExtern] = ()) -> FakeProgram:
    return FakeProgram({t.fqn: t for t in tables}, {a.fqn: a for a in actions},
                       {e.fqn: e for e in externs})


Behaviour = Callable[["FakeSwitch", int, bytes], list[tuple[int, bytes]]]


def echo(port_offset: int = 1) -> Behaviour:
    """Send every packet out on ``in port + port_offset`` unchanged."""
    return lambda sw, port, data: [(port + port_offset, data)]


class FakeSwitch:
    """Records every control-plane call; packets go through ``behaviour``."""

    def __init__(self, behaviour: Behaviour | None = None):
        self.behaviour = behaviour or echo()
        self.calls: list[tuple[Any, ...]] = []
        self.entries: list[tuple[str, Any, str, Sequence[int], int | None]] = []
        self.registers: dict[tuple[str, int], int] = {}
        self.counters: dict[tuple[str, int], tuple[int, int]] = {}
        self.groups: dict[int, list[tuple[int, int]]] = {}
        self.sessions: dict[int, list[tuple[int, int]]] = {}
        self.injected: list[tuple[int, bytes]] = []
        self.tracer: Callable[[str], None] | None = None

    def inject(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        self.injected.append((port, data))
        if self.tracer is not None:
            self.tracer(f"parse {data.hex()}")
        return self.behaviour(self, port, data)

    def table_add(self, table: str, keys: Mapping[str, Any] | Sequence[Any], action: str,
                  args: Sequence[int] = (), priority: int | None = None) -> int:
        self.entries.append((table, keys, action, tuple(args), priority))
        return len(self.entries) - 1

    def table_set_default(self, table: str, action: str, args: Sequence[int] = ()) -> None:
        self.calls.append(("set_default", table, action, tuple(args)))

    def mc_group_set(self, gid: int, replicas: Sequence[tuple[int, int]]) -> None:
        self.groups[gid] = list(replicas)

    def clone_session_set(self, session: int, replicas: Sequence[tuple[int, int]],
                          truncate: int | None = None) -> None:
        self.sessions[session] = list(replicas)

    def register_read(self, name: str, index: int) -> int:
        if name != "MyIngress.r":
            raise SwitchRuntimeError(ErrorCode.NOT_FOUND, f"no register {name}")
        return self.registers.get((name, index), 0)

    def register_write(self, name: str, index: int, value: int) -> None:
        self.registers[(name, index)] = value

    def register_reset(self, name: str) -> None:
        for key in [k for k in self.registers if k[0] == name]:
            del self.registers[key]

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        return self.counters.get((name, index), (0, 0))

    def table_clear(self, table: str) -> None:
        self.calls.append(("clear", table))

    def meter_set_rates(self, name: str, index: int, rates: list[tuple[float, int]]) -> None:
        self.calls.append(("meter", name, index, rates))

    def set_trace(self, trace: Callable[[str], None] | None) -> None:
        self.tracer = trace
