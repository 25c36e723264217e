"""The STF parser: every command, number and key-value syntax, and errors with lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from switch.stf import StfError, parse_stf
from switch.stf import commands as S
from switch.stf.parse_stf import parse_key_value, parse_number, parse_stf_file


def one(text: str) -> S.Command:
    commands = parse_stf(text, "t.stf").commands
    assert len(commands) == 1
    return commands[0]


def errors(text: str) -> list[tuple[int, str]]:
    with pytest.raises(StfError) as info:
        parse_stf(text, "t.stf")
    return [(d.line, d.message) for d in info.value.diagnostics]


# ---------------------------------------------------------------------------- packets


def test_packet_hex_with_spaces() -> None:
    assert one("packet 3 0A0b 0c\t0D") == S.Packet(1, 3, bytes.fromhex("0a0b0c0d"))


def test_packet_odd_digits_end_with_a_byte_of_the_lone_digit() -> None:
    # as p4c's runner converts them: "0a0" is 0a 00, "125" is 12 05
    assert one("packet 0 0a0") == S.Packet(1, 0, b"\x0a\x00")
    assert one("packet 0 12 5") == S.Packet(1, 0, b"\x12\x05")


def test_packet_without_data_is_an_empty_packet() -> None:
    assert one("packet 2") == S.Packet(1, 2, b"")


def test_expect_pattern_wildcards_and_dollar() -> None:
    assert one("expect 1 0a** 1*  $") == S.Expect(1, 1, "0A**1*", True)
    assert one("expect 1 0a**1*$") == S.Expect(1, 1, "0A**1*", True)
    assert one("expect 2 ab") == S.Expect(1, 2, "AB", False)


def test_expect_without_data_accepts_anything() -> None:
    assert one("expect 5") == S.Expect(1, 5, None, False)


def test_expect_odd_number_of_nibbles_is_allowed() -> None:
    assert one("expect 1 abc") == S.Expect(1, 1, "ABC", False)


def test_comments_blank_lines_and_line_numbers() -> None:
    text = "# header\n\n   \npacket 0 00 # trailing\nEXPECT 1 00\n"
    commands = parse_stf(text).commands
    assert commands == [S.Packet(4, 0, b"\x00"), S.Expect(5, 1, "00", False)]


@pytest.mark.parametrize(("line", "message"), [
    ("packet 0 0g", "invalid hex digit 'g'"),
    ("packet 0 0*", "invalid hex digit '*'"),
    ("packet x 00", "invalid port 'x'"),
    ("expect 1 0$0", "invalid character '$'"),
    ("expect 1 $", "'$' without packet data"),
    ("expect", "expected PORT"),
])
def test_packet_and_expect_errors(line: str, message: str) -> None:
    [(number, text)] = errors(line)
    assert number == 1
    assert message in text


# ---------------------------------------------------------------------------- add


def test_add_with_priority_keys_action_and_handle() -> None:
    cmd = one("add ingress.t 10 hdr.h.a:0x0A**&&&0xFF00 b:1 ingress.act(x:0x10, y : 2) = A")
    assert isinstance(cmd, S.TableAdd)
    assert cmd.table == "ingress.t"
    assert cmd.priority == 10
    assert [k.name for k in cmd.keys] == ["hdr.h.a", "b"]
    assert cmd.action == S.ActionCall("ingress.act", (("x", 16), ("y", 2)))
    assert cmd.handle == "A"


def test_add_without_priority_and_without_args() -> None:
    cmd = one("add t f:5 NoAction()")
    assert isinstance(cmd, S.TableAdd)
    assert cmd.priority is None
    assert cmd.action == S.ActionCall("NoAction", ())
    assert cmd.keys[0].value == S.KeyNumber(S.StfNumber("5", 5, 10, None, 0))


def test_add_without_keys() -> None:
    cmd = one("add t a(p:1)")
    assert isinstance(cmd, S.TableAdd)
    assert cmd.keys == ()


def test_add_key_spellings_of_p4c_tests() -> None:
    cmd = one("add ex1 100 extra$0.h:0x25** data.$valid$:1 h.isValid():1 act1(val:0x25)")
    assert isinstance(cmd, S.TableAdd)
    assert [k.name for k in cmd.keys] == ["extra$0.h", "data.$valid$", "h.isValid()"]


def test_add_key_value_forms() -> None:
    cmd = one("add t a:0x0A000000/8 b:0x10&&&0xF0 c:1->5 d:* e:0b1*0 f:0o7 act()")
    assert isinstance(cmd, S.TableAdd)
    values = [k.value for k in cmd.keys]
    assert values[0] == S.KeyLpm(parse_number("0x0A000000"), 8)
    assert values[1] == S.KeyTernary(parse_number("0x10"), parse_number("0xF0"))
    assert values[2] == S.KeyRange(parse_number("1"), parse_number("5"))
    assert values[3] == S.KeyWildcard()
    assert values[4] == S.KeyNumber(S.StfNumber("0b1*0", 0b100, 2, 0b101, 3))
    assert values[5] == S.KeyNumber(S.StfNumber("0o7", 7, 8, 7, 3))


@pytest.mark.parametrize(("line", "message"), [
    ("add", "expected TABLE"),
    ("add t", "expected KEY:VALUE or ACTION(...), found 'end of line'"),
    ("add t f:1", "found 'end of line'"),
    ("add t f:1 g act()", "found 'g act()'"),
    ("add t f:0xZZ act()", "key f: invalid digit 'Z'"),
    ("add t f:12a act()", "invalid number '12a'"),
    ("add t f:1 act(p:1", "missing ')'"),
    ("add t f:1 act(p) ", "expected NAME:VALUE, got 'p'"),
    ("add t f:1 act(p:0x1*)", "'*' is not allowed"),
    ("add t f:1 act() junk", "unexpected text after the action: 'junk'"),
    ("add t f:1/x act()", "invalid prefix length"),
])
def test_add_errors(line: str, message: str) -> None:
    [(number, text)] = errors(line)
    assert number == 1
    assert message in text, text


def test_setdefault() -> None:
    assert one("setdefault t ingress.a(v:7)") == S.SetDefault(
        1, "t", S.ActionCall("ingress.a", (("v", 7),)))
    assert one("SETDEFAULT t NoAction()") == S.SetDefault(1, "t", S.ActionCall("NoAction", ()))


def test_setdefault_errors() -> None:
    assert "expected TABLE ACTION" in errors("setdefault t")[0][1]
    assert "unexpected text" in errors("setdefault t a() b")[0][1]


# ---------------------------------------------------------------------------- direct commands


@pytest.mark.parametrize(("line", "command"), [
    ("mc_mgrp_create 1", S.McMgrpCreate(1, 1)),
    ("mc_mgrp_destroy 1", S.McMgrpDestroy(1, 1)),
    ("mc_node_create 10 2 3", S.McNodeCreate(1, 10, (2, 3))),
    ("mc_node_create 10", S.McNodeCreate(1, 10, ())),
    ("mc_node_update 0 4 5", S.McNodeUpdate(1, 0, (4, 5))),
    ("mc_node_destroy 0", S.McNodeDestroy(1, 0)),
    ("mc_node_associate 1 0", S.McNodeAssociate(1, 1, 0)),
    ("mc_node_dissociate 1 0", S.McNodeDissociate(1, 1, 0)),
    ("mirroring_add 5 2", S.MirroringAdd(1, 5, 2)),
    ("mirroring_add_mc 5 1", S.MirroringAddMc(1, 5, 1)),
    ("mirroring_delete 5", S.MirroringDelete(1, 5)),
    ("mirroring_get 5", S.MirroringGet(1, 5)),
    ("register_read MyIngress.r 0", S.RegisterRead(1, "MyIngress.r", 0, None)),
    ("register_read r 3 0x11", S.RegisterRead(1, "r", 3, 0x11)),
    ("register_write r 3 17", S.RegisterWrite(1, "r", 3, 17)),
    ("register_write r 3 -2", S.RegisterWrite(1, "r", 3, -2)),
    ("register_read r 0 -0x1", S.RegisterRead(1, "r", 0, -1)),
    ("register_reset r", S.RegisterReset(1, "r")),
    ("counter_read c 2", S.CounterRead(1, "c", 2)),
    ("counter_write c 2 5 300", S.CounterWrite(1, "c", 2, 5, 300)),
    ("check_counter c(2)", S.CheckCounter(1, "c", 2, None, "==", 0)),
    ("check_counter c(2) packets == 3", S.CheckCounter(1, "c", 2, "packets", "==", 3)),
    ("check_counter c( 0x2 ) bytes>=64", S.CheckCounter(1, "c", 2, "bytes", ">=", 64)),
    ("check_counter c($A) packets != 0", S.CheckCounter(1, "c", "A", "packets", "!=", 0)),
    ("meter_set_rates m 0 0.5:10 1:20", S.MeterRates(1, "m", 0, ((0.5, 10), (1.0, 20)))),
    ("meter_array_set_rates m 2:3", S.MeterRates(1, "m", None, ((2.0, 3),))),
    ("meter_get_rates m 1", S.MeterGetRates(1, "m", 1)),
    ("wait", S.Wait(1)),
    ("no_packet", S.NoPacket(1)),
    ("remove all", S.RemoveAll(1)),
])
def test_direct_commands(line: str, command: S.Command) -> None:
    assert one(line) == command


@pytest.mark.parametrize(("line", "message"), [
    ("mc_mgrp_create", "expected GROUP"),
    ("mc_mgrp_create 1 2", "expected GROUP"),
    ("mc_node_create", "expected RID PORT"),
    ("mc_node_create 1 x", "invalid port 'x'"),
    ("mc_node_associate 1", "expected GROUP NODE"),
    ("mirroring_add 1", "expected SESSION PORT"),
    ("register_read r", "expected REGISTER INDEX [VALUE]"),
    ("register_read r x", "invalid number 'x'"),
    ("register_read r 0 --1", "invalid number '-1'"),
    ("register_write r -1 0", "invalid number '-1'"),
    ("register_write r 1", "expected REGISTER INDEX VALUE"),
    ("register_reset 9r", "invalid name '9r'"),
    ("counter_write c 1 2", "expected COUNTER INDEX PACKETS BYTES"),
    ("check_counter c", "expected COUNTER(INDEX)"),
    ("check_counter c(1) packets = 3", "expected COUNTER(INDEX)"),
    ("meter_set_rates m 0 1", "expected RATE:BURST"),
    ("wait 3", "unexpected text '3'"),
    ("remove t", "only 'remove all'"),
    ("frobnicate 1 2", "unknown command 'frobnicate'"),
])
def test_direct_command_errors(line: str, message: str) -> None:
    [(number, text)] = errors(line)
    assert number == 1
    assert message in text, text


def test_every_error_is_reported_with_file_and_line() -> None:
    text = "packet 0 00\nbogus\nexpect 1 00\nadd t\n"
    with pytest.raises(StfError) as info:
        parse_stf(text, "dir/test.stf")
    report = str(info.value).splitlines()
    assert report[0] == "dir/test.stf(2): error: unknown command 'bogus'"
    assert report[1].startswith("dir/test.stf(4): error: add: ")
    assert len(report) == 2


def test_parse_stf_file_reads_and_reports_unreadable(tmp_path: Path) -> None:
    good = tmp_path / "a.stf"
    good.write_text("wait\n")
    assert parse_stf_file(good).commands == [S.Wait(1)]
    with pytest.raises(StfError) as info:
        parse_stf_file(tmp_path / "missing.stf")
    assert "missing.stf: error: cannot read" in str(info.value)


# ---------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(("text", "value", "care", "bits"), [
    ("0x0A", 0x0A, 0xFF, 8),
    ("0X**01", 0x0001, 0x00FF, 16),
    ("0b1*1", 0b101, 0b101, 3),
    ("0o7*", 0o70, 0o70, 6),
    ("0x1_0", 0x10, 0xFF, 8),
])
def test_number_with_wildcards(text: str, value: int, care: int, bits: int) -> None:
    n = parse_number(text, wildcards=True)
    assert (n.value, n.care, n.written_bits) == (value, care, bits)


def test_decimal_numbers_imply_no_width() -> None:
    n = parse_number("2573")
    assert (n.value, n.radix, n.care, n.written_bits) == (2573, 10, None, 0)
    assert not n.has_wildcards


def test_has_wildcards() -> None:
    assert parse_number("0x*1", wildcards=True).has_wildcards
    assert not parse_number("0x11", wildcards=True).has_wildcards


@pytest.mark.parametrize("text", ["", "0x", "-1", "1.5", "0xG", "0b2", "*"])
def test_bad_numbers(text: str) -> None:
    with pytest.raises(ValueError):
        parse_number(text)


def test_key_value_wildcard_needs_digits_in_decimal() -> None:
    with pytest.raises(ValueError):
        parse_key_value("1*")
