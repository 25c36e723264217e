"""Indirect tables: action profile members, selector groups and BMv2's member choice."""

from __future__ import annotations

import pytest
from v1helpers import eth, program

from switch.engine.hashes import crc16, pack_bits
from switch.engine.runtime import (
    ActionCall,
    ErrorCode,
    Exact,
    GroupRef,
    MemberRef,
    ProfileGroup,
    ProfileMember,
    SwitchRuntimeError,
)

PROG = program(
    ingress="""
    action set(bit<9> p) { sm.egress_spec = p; }
    action other(bit<9> p) { sm.egress_spec = p + 100; }
    action_selector(HashAlgorithm.crc16, 32w16, 32w10) sel;
    table ecmp {
        key = { h.e.dst: exact; h.e.src: selector; h.e.etype: selector; }
        actions = { set; NoAction; }
        implementation = sel;
    }
    table ecmp2 {
        key = { h.e.dst: exact; h.e.src: selector; h.e.etype: selector; }
        actions = { set; other; }
        implementation = sel;
    }
    table prof {
        key = { h.e.etype: exact; }
        actions = { set; }
        @name("ap") implementation = action_profile(32w2);
    }
    apply {
        sm.egress_spec = 1;
        if (h.e.dst == 7) { prof.apply(); } else if (h.e.dst == 8) { ecmp2.apply(); }
        else { ecmp.apply(); }
    }
""",
)


def out_port(sw, **fields) -> int:
    return sw.inject(0, eth(**fields))[0][0]


def bmv2_choice(members: list[int], src: int, etype: int) -> int:
    """BMv2's rule: crc16 over the selector fields, modulo the group size, over the
    members in handle order."""
    return members[crc16(pack_bits([(src, 48), (etype, 16)])) % len(members)]


def test_group_choice_matches_bmv2_rule(build):
    sw = build(PROG)
    for mid in (30, 10, 20):  # handles 0, 1, 2 in this order
        sw.profile_member_add("sel", mid, "set", [mid])
    sw.profile_group_add("sel", 1, [10, 20, 30])
    sw.table_add("ecmp", [Exact(5)], GroupRef(1))
    order = [30, 10, 20]
    seen = set()
    for src in range(40):
        port = out_port(sw, dst=5, src=src, etype=0x800)
        assert port == bmv2_choice(order, src, 0x800)
        assert out_port(sw, dst=5, src=src, etype=0x800) == port  # deterministic
        seen.add(port)
    assert seen == {10, 20, 30}
    # a member entry, then a miss: the program's default action (NoAction)
    sw.table_add("ecmp", [Exact(6)], MemberRef(20))
    assert out_port(sw, dst=6) == 20
    assert out_port(sw, dst=9) == 1


def test_weights_repeat_a_member(build):
    sw = build(PROG)
    sw.profile_member_add("sel", 1, "set", [1 + 10])
    sw.profile_member_add("sel", 2, "set", [2 + 10])
    sw.profile_group_add("sel", 5, {1: 1, 2: 3})
    sw.table_add("ecmp", [Exact(5)], GroupRef(5))
    for src in range(20):
        assert out_port(sw, dst=5, src=src) == bmv2_choice([11, 12, 12, 12], src, 0x1234)
    assert sw.profile_groups("sel") == [ProfileGroup(5, {1: 1, 2: 3})]


def test_shared_profile_and_member_modify(build):
    sw = build(PROG)
    sw.profile_member_add("sel", 1, "set", [3])
    sw.table_add("ecmp", [Exact(5)], MemberRef(1))
    sw.table_add("ecmp2", [Exact(8)], MemberRef(1))
    assert out_port(sw, dst=5) == 3
    assert out_port(sw, dst=8) == 3
    sw.profile_member_modify("sel", 1, "set", [4])
    assert out_port(sw, dst=5) == 4
    assert out_port(sw, dst=8) == 4
    # ecmp has no action "other": a member running it cannot serve ecmp's entry
    with pytest.raises(SwitchRuntimeError) as e:
        sw.profile_member_modify("sel", 1, "other", [1])
    assert e.value.code is ErrorCode.BAD_ACTION
    sw.profile_member_add("sel", 2, "other", [2])
    with pytest.raises(SwitchRuntimeError) as e:
        sw.table_add("ecmp", [Exact(6)], MemberRef(2))
    assert e.value.code is ErrorCode.BAD_ACTION
    sw.table_modify("ecmp2", 0, MemberRef(2))
    assert out_port(sw, dst=8) == 102
    assert sw.profile_members("sel") == [ProfileMember(1, ActionCall("I.set", (4,))),
                                         ProfileMember(2, ActionCall("I.other", (2,)))]
    assert [s.action for _h, s in sw.table_entries("ecmp")] == [MemberRef(1)]


def code_of(fn, *args) -> ErrorCode:
    with pytest.raises(SwitchRuntimeError) as e:
        fn(*args)
    return e.value.code


def test_errors(build):
    sw = build(PROG)
    sw.profile_member_add("sel", 1, "set", [3])
    assert code_of(sw.profile_member_add, "sel", 1, "set", [3]) is ErrorCode.ALREADY_EXISTS
    assert code_of(sw.profile_member_add, "sel", 2, "set", [1 << 9]) is ErrorCode.BAD_ACTION_DATA
    assert code_of(sw.profile_member_delete, "sel", 9) is ErrorCode.NOT_FOUND
    assert code_of(sw.profile_group_add, "sel", 1, [9]) is ErrorCode.NOT_FOUND
    assert code_of(sw.profile_group_add, "sel", 1, {1: 0}) is ErrorCode.INVALID_ARGUMENT
    assert code_of(sw.profile_group_add, "ap", 1, [1]) is ErrorCode.INVALID_ARGUMENT
    sw.profile_group_add("sel", 1, [])
    assert code_of(sw.table_add, "ecmp", [Exact(5)], GroupRef(1)) is ErrorCode.FAILED_PRECONDITION
    assert code_of(sw.table_add, "ecmp", [Exact(5)], GroupRef(2)) is ErrorCode.NOT_FOUND
    assert code_of(sw.table_add, "prof", [Exact(5)], GroupRef(1)) is ErrorCode.INVALID_ARGUMENT
    sw.profile_group_modify("sel", 1, [1])
    h = sw.table_add("ecmp", [Exact(5)], GroupRef(1))
    assert code_of(sw.profile_member_delete, "sel", 1) is ErrorCode.IN_USE  # in the group
    assert code_of(sw.profile_group_delete, "sel", 1) is ErrorCode.IN_USE  # by the entry
    # a group emptied under an entry runs no action (BMv2's empty_action)
    sw.profile_group_modify("sel", 1, [])
    assert out_port(sw, dst=5) == 1
    sw.table_delete("ecmp", h)
    sw.profile_group_delete("sel", 1)
    sw.profile_member_delete("sel", 1)
    assert sw.profile_members("sel") == [] and sw.profile_groups("sel") == []
    # the profile's size bounds its members
    sw.profile_member_add("ap", 1, "set", [1])
    sw.profile_member_add("ap", 2, "set", [2])
    assert code_of(sw.profile_member_add, "ap", 3, "set", [3]) is ErrorCode.TABLE_FULL
    # direct tables take no member
    assert code_of(sw.table_add, "nope", [Exact(1)], MemberRef(1)) is ErrorCode.NOT_FOUND


def test_direct_style_entries_still_work(build):
    """p4c's STF tests write indirect tables like direct ones."""
    sw = build(PROG)
    sw.table_add("prof", [Exact(0x1234)], "set", [9])
    assert out_port(sw, dst=7) == 9
    sw.profile_member_add("ap", 4, "set", [5])
    sw.table_modify("prof", 0, MemberRef(4))
    assert out_port(sw, dst=7) == 5


def test_trace_names_member_and_group(build):
    lines: list[str] = []
    sw = build(PROG, trace=lines.append)
    sw.profile_member_add("sel", 3, "set", [3])
    sw.profile_group_add("sel", 4, [3])
    sw.table_add("ecmp", [Exact(5)], GroupRef(4))
    assert out_port(sw, dst=5) == 3
    assert any("table I.ecmp: hit entry 0 [" in x and "-> group 4" in x for x in lines)
