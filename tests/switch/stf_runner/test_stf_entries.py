"""STF key values and names turned into runtime table entries."""

from __future__ import annotations

import pytest
from stf_fakes import FakeAction, FakeKey, FakeTable, program

from switch.engine.runtime import Exact, Lpm, Optional, Range, Ternary
from switch.stf.commands import ActionCall, SetDefault, TableAdd
from switch.stf.entries import (
    EntryError,
    build_default,
    build_entry,
    default_match_value,
    match_value,
    resolve_key,
    resolve_name,
)
from switch.stf.parse_stf import parse_key_value, parse_line


def mv(kind: str, width: int, text: str) -> object:
    return match_value(kind, width, parse_key_value(text))


# ---------------------------------------------------------------------------- values


def test_exact() -> None:
    assert mv("exact", 16, "0x0A0B") == Exact(0x0A0B)
    assert mv("exact", 16, "2573") == Exact(2573)
    assert mv("exact", 1, "0b1") == Exact(1)


@pytest.mark.parametrize("text", ["0x0*", "1/8", "1&&&1", "1->2", "*"])
def test_exact_rejects_other_forms(text: str) -> None:
    with pytest.raises(EntryError):
        mv("exact", 8, text)


def test_lpm_explicit_prefix() -> None:
    assert mv("lpm", 32, "0x0A010200/24") == Lpm(0x0A010200, 24)


def test_lpm_prefix_from_written_digits_like_bmv2() -> None:
    assert mv("lpm", 32, "0x0A01****") == Lpm(0x0A010000, 16)
    assert mv("lpm", 32, "0x0A010203") == Lpm(0x0A010203, 32)
    assert mv("lpm", 8, "0b101*****") == Lpm(0b10100000, 3)


def test_lpm_decimal_is_full_width_and_wide_hex_is_clamped() -> None:
    assert mv("lpm", 16, "10") == Lpm(10, 16)
    assert mv("lpm", 9, "0x1FF") == Lpm(0x1FF, 9)


def test_lpm_other_forms() -> None:
    assert mv("lpm", 8, "*") == Lpm(0, 0)
    assert mv("lpm", 8, "0xA0&&&0xF0") == Lpm(0xA0, 4)
    with pytest.raises(EntryError, match="not a prefix mask"):
        mv("lpm", 8, "0xA0&&&0x0F")
    with pytest.raises(EntryError, match="longer than the key"):
        mv("lpm", 8, "0/9")
    with pytest.raises(EntryError):
        mv("lpm", 8, "1->2")


def test_ternary_explicit_mask() -> None:
    assert mv("ternary", 8, "0x10&&&0xF0") == Ternary(0x10, 0xF0)
    assert mv("ternary", 16, "0x0A**&&&0xFFFF") == Ternary(0x0A00, 0xFF00)


def test_ternary_mask_from_wildcard_digits_like_bmv2() -> None:
    assert mv("ternary", 32, "0x****0101") == Ternary(0x0101, 0x0000FFFF)
    assert mv("ternary", 16, "0x25**") == Ternary(0x2500, 0xFF00)
    assert mv("ternary", 4, "0b1*0*") == Ternary(0b1000, 0b1010)


def test_ternary_short_hex_masks_only_written_digits_like_bmv2() -> None:
    assert mv("ternary", 16, "0x01") == Ternary(0x01, 0x00FF)


def test_ternary_decimal_is_exact() -> None:
    assert mv("ternary", 12, "5") == Ternary(5, 0xFFF)


def test_ternary_other_forms() -> None:
    assert mv("ternary", 8, "*") == Ternary(0, 0)
    assert mv("ternary", 8, "0xA0/4") == Ternary(0xA0, 0xF0)
    with pytest.raises(EntryError):
        mv("ternary", 8, "1->2")


def test_range() -> None:
    assert mv("range", 16, "100->200") == Range(100, 200)
    assert mv("range", 16, "7") == Range(7, 7)
    assert mv("range", 4, "*") == Range(0, 15)
    with pytest.raises(EntryError):
        mv("range", 8, "1/8")


def test_optional() -> None:
    assert mv("optional", 8, "7") == Optional(7)
    assert mv("optional", 8, "*") == Optional(None)
    assert mv("optional", 8, "0x**") == Optional(None)
    assert mv("optional", 8, "3&&&0xFF") == Optional(3)
    assert mv("optional", 8, "3&&&0") == Optional(None)
    with pytest.raises(EntryError, match="partial mask"):
        mv("optional", 8, "3&&&0x0F")
    with pytest.raises(EntryError):
        mv("optional", 8, "0x*1")


def test_unknown_match_kind() -> None:
    with pytest.raises(EntryError, match="selector"):
        mv("selector", 8, "1")


def test_defaults_are_bmv2s() -> None:
    assert default_match_value("exact", 8) == Exact(0)
    assert default_match_value("lpm", 8) == Lpm(0, 0)
    assert default_match_value("ternary", 8) == Ternary(0, 0)
    assert default_match_value("range", 4) == Range(0, 15)
    assert default_match_value("optional", 8) == Optional(None)


# ---------------------------------------------------------------------------- names


def test_resolve_name_exact_then_suffix() -> None:
    names = ["MyIngress.t", "MyIngress.sub.t", "MyEgress.u"]
    assert resolve_name("MyIngress.t", names, "table") == "MyIngress.t"
    assert resolve_name("u", names, "table") == "MyEgress.u"
    assert resolve_name("sub.t", names, "table") == "MyIngress.sub.t"
    with pytest.raises(EntryError, match="ambiguous"):
        resolve_name("t", names, "table")
    with pytest.raises(EntryError, match="no table named 'v'"):
        resolve_name("v", names, "table")


def test_resolve_name_plain_suffix_as_bmv2_does() -> None:
    assert resolve_name("setb1", ["ingress.do_setb1"], "action") == "ingress.do_setb1"


KEYS = ["hdr.ipv4.dstAddr", "hdr.h.isValid()", "meta.stack[0].f", "a_hi", "meta.valid"]


@pytest.mark.parametrize(("written", "index"), [
    ("hdr.ipv4.dstAddr", 0),
    ("dstAddr", 0),
    ("ipv4.dstAddr", 0),
    ("hdr.h.isValid()", 1),
    ("hdr.h.$valid$", 1),
    ("h.$valid$", 1),
    ("hdr.h$valid$", 1),
    ("h.$valid", 1),
    ("hdr.h.valid", 1),
    ("meta.stack$0.f", 2),
    ("stack[0].f", 2),
    ("a_hi", 3),
    ("hdr.h.a_hi", 3),
    ("meta.valid", 4),
])
def test_resolve_key(written: str, index: int) -> None:
    assert resolve_key(written, KEYS) == index
    # p4c's P4Info names a validity key h.$valid$: every spelling finds it too
    p4c_keys = [k.replace(".isValid()", ".$valid$") for k in KEYS]
    assert resolve_key(written, p4c_keys) == index


def test_resolve_bare_valid() -> None:
    assert resolve_key("valid", ["hdr.h.isValid()", "x"]) == 0
    assert resolve_key("$valid$", ["hdr.h.isValid()", "x"]) == 0
    assert resolve_key("valid", ["hdr.h.$valid$", "x"]) == 0
    assert resolve_key("isValid()", ["hdr.h.$valid$", "x"]) == 0


def test_resolve_key_errors() -> None:
    with pytest.raises(EntryError, match="the keys are: hdr.a.f, hdr.b.f"):
        resolve_key("g", ["hdr.a.f", "hdr.b.f"])
    with pytest.raises(EntryError, match="ambiguous"):
        resolve_key("f", ["hdr.a.f", "hdr.b.f"])


def test_key_names_are_compared_without_spaces() -> None:
    assert resolve_key("hdr.h.a", ["hdr.h.a "]) == 0


# ---------------------------------------------------------------------------- entries

PROGRAM = program(
    [
        FakeTable("MyIngress.acl", [FakeKey("hdr.h.a", "ternary", 8),
                                    FakeKey("hdr.h.b", "exact", 8),
                                    FakeKey("hdr.h.isValid()", "exact", 1)],
                  ["MyIngress.set_out", "NoAction"]),
        FakeTable("MyIngress.fwd", [FakeKey("hdr.h.dst", "lpm", 16),
                                    FakeKey("hdr.h.sel", "selector", 8)],
                  ["MyIngress.set_out", "MyIngress.set_two", "NoAction"]),
        FakeTable("MyIngress.dup", [FakeKey("hdr.h.a", "exact", 8),
                                    FakeKey("hdr.h.a", "ternary", 8)], ["NoAction"]),
    ],
    [FakeAction("MyIngress.set_out", [("port", 9)]),
     FakeAction("MyIngress.set_two", [("a", 8), ("b", 8)]),
     FakeAction("NoAction", [])],
)


def add(line: str) -> object:
    cmd = parse_line(line, 1)
    assert isinstance(cmd, TableAdd)
    return build_entry(PROGRAM, cmd)


def test_entry_with_priority_defaults_and_args() -> None:
    entry = add("add acl 10 hdr.h.a:0x1*&&&0xFF set_out(port:3)")
    assert entry.table == "MyIngress.acl"
    assert entry.keys() == {"hdr.h.a": Ternary(0x10, 0xF0), "hdr.h.b": Exact(0),
                            "hdr.h.isValid()": Exact(0)}
    assert entry.action == "MyIngress.set_out"
    assert entry.args == (3,)
    assert entry.priority == 10


def test_priority_is_dropped_for_tables_that_take_none() -> None:
    entry = add("add fwd 10 dst:0x0A00/8 set_out(port:1)")
    assert entry.priority is None
    assert entry.keys() == {"hdr.h.dst": Lpm(0x0A00, 8)}


def test_missing_priority_stays_missing() -> None:
    assert add("add acl hdr.h.a:1 NoAction()").priority is None


def test_args_are_given_in_declaration_order() -> None:
    entry = add("add fwd dst:1 set_two(b:2, a:1)")
    assert entry.args == (1, 2)


def test_duplicate_key_names_pass_keys_in_order() -> None:
    cmd = TableAdd(1, "dup", None, (), ActionCall("NoAction", ()))
    assert build_entry(PROGRAM, cmd).keys() == (Exact(0), Ternary(0, 0))


@pytest.mark.parametrize(("line", "message"), [
    ("add nope x:1 NoAction()", "no table named 'nope'"),
    ("add acl hdr.h.zz:1 NoAction()", "no key named 'hdr.h.zz'"),
    ("add acl hdr.h.a:1 hdr.h.a:2 NoAction()", "key hdr.h.a is given twice"),
    ("add acl hdr.h.b:1/8 NoAction()", "key hdr.h.b: an exact key takes a plain number"),
    ("add acl hdr.h.b:1 set_two(a:1, b:2)", "no action named 'set_two'"),
    ("add acl hdr.h.b:1 set_out()", "missing argument(s) port"),
    ("add acl hdr.h.b:1 set_out(port:1, port:2)", "given twice"),
    ("add acl hdr.h.b:1 set_out(prt:1)", "has no parameter 'prt' (its parameters: port)"),
])
def test_entry_errors(line: str, message: str) -> None:
    with pytest.raises(EntryError) as info:
        add(line)
    assert message in str(info.value)


def test_setdefault() -> None:
    cmd = parse_line("setdefault MyIngress.fwd MyIngress.set_out(port:4)", 1)
    assert isinstance(cmd, SetDefault)
    default = build_default(PROGRAM, cmd)
    assert (default.table, default.action, default.args) == ("MyIngress.fwd",
                                                             "MyIngress.set_out", (4,))


def test_two_lpm_keys_take_a_priority_as_in_bmv2() -> None:
    prog = program([FakeTable("t", [FakeKey("a", "lpm", 8), FakeKey("b", "lpm", 8)],
                              ["NoAction"])], [FakeAction("NoAction", [])])
    cmd = parse_line("add t 3 a:1/8 b:2/8 NoAction()", 1)
    assert isinstance(cmd, TableAdd)
    assert build_entry(prog, cmd).priority == 3
