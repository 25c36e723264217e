import pytest

from switch.engine.match import KeySpec, ValueSet
from switch.engine.meters import GREEN, RED, YELLOW, Meter
from switch.engine.pre import Pre
from switch.engine.runtime import (
    ErrorCode,
    Exact,
    Lpm,
    Optional,
    Range,
    SwitchRuntimeError,
    Ternary,
)
from switch.engine.tables import ActionSpec, Table, TableConfig

ACTIONS = [ActionSpec("C.fwd", [("port", 9, False)]), ActionSpec("C.drop", []),
           ActionSpec("NoAction", [])]


def make(keys, **kw):
    cfg = TableConfig("C.t", [KeySpec(*k) for k in keys], list(ACTIONS), "NoAction", [], **kw)
    return Table(cfg)


def action_of(t, key):
    e = t.lookup(key)
    return None if e is None else (t.actions[e.aidx].fqn, e.args)


def test_exact_single_and_multi():
    t = make([("a", "exact", 8)])
    h = t.add([Exact(5)], "fwd", [3])
    assert action_of(t, 5) == ("C.fwd", (3,))
    assert t.lookup(6) is None
    with pytest.raises(SwitchRuntimeError) as e:
        t.add([5], "drop")
    assert e.value.code is ErrorCode.ALREADY_EXISTS
    t.modify(h, "drop")
    assert action_of(t, 5) == ("C.drop", ())
    t.delete(h)
    assert t.lookup(5) is None
    with pytest.raises(SwitchRuntimeError) as e:
        t.delete(h)
    assert e.value.code is ErrorCode.NOT_FOUND
    t2 = make([("a", "exact", 8), ("b", "exact", 16)])
    t2.add({"a": 1, "b": 2}, "fwd", {"port": 7})
    assert action_of(t2, (1, 2)) == ("C.fwd", (7,))
    assert t2.lookup((2, 1)) is None


def test_lpm_longest_prefix_wins():
    t = make([("dst", "lpm", 32)])
    t.add([Lpm(0x0A000000, 8)], "fwd", [1])
    t.add([Lpm(0x0A010000, 16)], "fwd", [2])
    t.add([Lpm(0, 0)], "drop")
    assert action_of(t, 0x0A010203) == ("C.fwd", (2,))
    assert action_of(t, 0x0A020304) == ("C.fwd", (1,))
    assert action_of(t, 0x0B000000) == ("C.drop", ())
    # bits past the prefix are ignored, and the same prefix is a duplicate
    with pytest.raises(SwitchRuntimeError) as e:
        t.add([Lpm(0x0A0100FF, 16)], "drop")
    assert e.value.code is ErrorCode.ALREADY_EXISTS
    with pytest.raises(SwitchRuntimeError) as e:
        t.add([Lpm(0, 33)], "drop")
    assert e.value.code is ErrorCode.BAD_MATCH_KEY


def test_lpm_with_exact():
    t = make([("vrf", "exact", 8), ("dst", "lpm", 32)])
    t.add([Exact(1), Lpm(0x0A000000, 8)], "fwd", [1])
    t.add([Exact(2), Lpm(0x0A000000, 24)], "fwd", [2])
    assert action_of(t, (1, 0x0A000001)) == ("C.fwd", (1,))
    assert action_of(t, (2, 0x0A000001)) == ("C.fwd", (2,))
    assert t.lookup((2, 0x0A000101)) is None


def test_ternary_priorities_larger_wins():
    t = make([("a", "ternary", 8)])
    t.add([Ternary(0x10, 0xF0)], "fwd", [1], priority=10)
    t.add([Ternary(0x12, 0xFF)], "fwd", [2], priority=20)
    assert action_of(t, 0x12) == ("C.fwd", (2,))
    assert action_of(t, 0x13) == ("C.fwd", (1,))
    t.add([Ternary(0, 0)], "drop", priority=30)
    assert action_of(t, 0x12) == ("C.drop", ())
    assert t.find([Ternary(0x12, 0xFF)], 20) is not None
    assert t.find([Ternary(0x12, 0xFF)], 21) is None
    # same key, different priority: allowed
    t.add([Ternary(0x12, 0xFF)], "drop", priority=5)


def test_range_and_optional():
    t = make([("a", "range", 16), ("b", "optional", 8)])
    t.add([Range(10, 20), Optional(None)], "fwd", [1], priority=1)
    t.add([Range(15, 15), Optional(7)], "fwd", [2], priority=2)
    assert action_of(t, (15, 7)) == ("C.fwd", (2,))
    assert action_of(t, (15, 8)) == ("C.fwd", (1,))
    assert t.lookup((21, 7)) is None
    with pytest.raises(SwitchRuntimeError):
        t.add([Range(5, 4), Optional(None)], "drop", priority=3)


def test_bad_values_and_actions():
    t = make([("a", "exact", 8)], size=2)
    for bad in ([256], [-1], [Lpm(1, 4)], [Range(1, 2)]):
        with pytest.raises(SwitchRuntimeError) as e:
            t.add(bad, "drop")
        assert e.value.code is ErrorCode.BAD_MATCH_KEY
    with pytest.raises(SwitchRuntimeError) as e:
        t.add([1], "nope")
    assert e.value.code is ErrorCode.BAD_ACTION
    with pytest.raises(SwitchRuntimeError) as e:
        t.add([1], "fwd", [512])
    assert e.value.code is ErrorCode.BAD_ACTION_DATA
    with pytest.raises(SwitchRuntimeError) as e:
        t.add([1], "fwd", [])
    assert e.value.code is ErrorCode.BAD_ACTION_DATA
    t.add([1], "drop")
    t.add([2], "drop")
    with pytest.raises(SwitchRuntimeError) as e:
        t.add([3], "drop")
    assert e.value.code is ErrorCode.TABLE_FULL


def test_default_action_and_const():
    t = make([("a", "exact", 8)], entries_const=True)
    with pytest.raises(SwitchRuntimeError) as e:
        t.add([1], "drop")
    assert e.value.code is ErrorCode.CONST_TABLE
    t.set_default("fwd", [4])
    assert t.get_default().action == "C.fwd" and t.get_default().args == (4,)
    t.reset_default()
    assert t.get_default().action == "NoAction"
    t2 = make([("a", "exact", 8)], default_is_const=True)
    with pytest.raises(SwitchRuntimeError) as e:
        t2.set_default("drop")
    assert e.value.code is ErrorCode.CONST_TABLE


def test_entries_listing():
    t = make([("a", "ternary", 8)])
    h = t.add([Ternary(0x0F, 0x0F)], "fwd", [9], priority=3)
    [(hh, spec)] = t.list()
    assert hh == h
    assert spec.keys == (Ternary(0x0F, 0x0F),)
    assert spec.action.action == "C.fwd" and spec.action.args == (9,)
    assert spec.priority == 3
    t.clear()
    assert t.list() == []


def test_value_set():
    vs = ValueSet("P.vs", [KeySpec("f", "ternary", 16)], 4)
    vs.set([[Exact(0x800)], [Ternary(0x8600, 0xFF00)]])
    assert vs.match(0x800)
    assert vs.match(0x86DD)
    assert not vs.match(0x801)


def test_pre():
    pre = Pre()
    pre.group_set(1, [(1, 0), (2, 5)])
    assert pre.replicate(1) == [(1, 0), (2, 5)]
    assert pre.replicate(2) == []
    with pytest.raises(SwitchRuntimeError):
        pre.group_set(0, [])
    pre.session_set(3, [(4, 0)], truncate=10)
    assert pre.session(3).truncate == 10
    pre.session_delete(3)
    assert pre.session(3) is None
    with pytest.raises(SwitchRuntimeError) as e:
        pre.group_delete(9)
    assert e.value.code is ErrorCode.NOT_FOUND


def test_meter_trtcm():
    now = [0]
    m = Meter(by_bytes=False, clock=lambda: now[0])
    assert m.execute(100) == GREEN  # unconfigured
    # CIR 1 packet per 1000 us with burst 2, PIR 1 per 100 us with burst 3
    m.set_rates([(0.001, 2), (0.01, 3)])
    colours = [m.execute(100) for _ in range(4)]
    assert colours == [GREEN, GREEN, YELLOW, RED]
    now[0] += 100_000
    assert m.execute(100) == GREEN
