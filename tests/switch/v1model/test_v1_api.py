"""The runtime API of V1Switch: name resolution, typed errors, thread safety."""

from __future__ import annotations

import threading

import pytest
from v1helpers import eth, program

from switch.engine.runtime import ErrorCode, Exact, Lpm, SwitchRuntimeError

PROG = program(
    ingress="""
    register<bit<32>>(8) r;
    counter(8, CounterType.packets) c;
    action set(bit<9> p) { sm.egress_spec = p; }
    table t { key = { h.e.dst: exact; } actions = { set; NoAction; } default_action = NoAction; }
    table l { key = { h.e.src: lpm; } actions = { set; } const default_action = set(3); }
    apply { sm.egress_spec = 2; t.apply(); l.apply(); c.count(0); }
""",
)


def code(fn, *args, **kw) -> ErrorCode:
    with pytest.raises(SwitchRuntimeError) as e:
        fn(*args, **kw)
    return e.value.code


def test_errors(build):
    sw = build(PROG)
    assert code(sw.table_add, "nope", [Exact(1)], "set", [1]) is ErrorCode.NOT_FOUND
    assert code(sw.table_add, "t", [Exact(1)], "nope", [1]) is ErrorCode.BAD_ACTION
    assert code(sw.table_add, "t", [Exact(1), Exact(2)], "set", [1]) is ErrorCode.BAD_MATCH_KEY
    assert code(sw.table_add, "t", [Exact(1 << 48)], "set", [1]) is ErrorCode.BAD_MATCH_KEY
    assert code(sw.table_add, "t", [Exact(1)], "set", [1 << 9]) is ErrorCode.BAD_ACTION_DATA
    assert code(sw.table_add, "l", [Lpm(0, 49)], "set", [1]) is ErrorCode.BAD_MATCH_KEY
    h = sw.table_add("t", [Exact(1)], "set", [1])
    assert code(sw.table_add, "t", [Exact(1)], "set", [2]) is ErrorCode.ALREADY_EXISTS
    assert code(sw.table_modify, "t", h + 100, "set", [1]) is ErrorCode.NOT_FOUND
    assert code(sw.table_delete, "t", h + 100) is ErrorCode.NOT_FOUND
    assert code(sw.table_set_default, "l", "set", [4]) is ErrorCode.CONST_TABLE
    assert code(sw.register_read, "r", 8) is ErrorCode.OUT_OF_RANGE
    assert code(sw.register_read, "zz", 0) is ErrorCode.NOT_FOUND
    assert code(sw.counter_read, "c", -1) is ErrorCode.OUT_OF_RANGE
    assert code(sw.mc_group_set, 0, []) is ErrorCode.INVALID_ARGUMENT
    assert code(sw.clone_session_delete, 3) is ErrorCode.NOT_FOUND
    # fully qualified and suffix names
    fq = next(iter(n for n in sw.tables if n.endswith(".t")))
    assert sw.table_entries(fq) == sw.table_entries("t")
    assert sw.table_get_default("l").args == (3,)
    sw.table_modify("t", h, "NoAction", [])
    assert sw.inject(0, eth(dst=1))[0][0] == 3


def test_concurrent_updates(build):
    sw = build(PROG)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for i in range(300):
                h = sw.table_add("t", [Exact(i + 10)], "set", [i % 500])
                sw.register_write("r", i % 8, i)
                sw.table_delete("t", h)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    th = threading.Thread(target=writer)
    th.start()
    for _ in range(300):
        assert len(sw.inject(0, eth(dst=5))) == 1
    th.join()
    assert not errors
    assert sw.counter_read("c", 0)[0] == 300
