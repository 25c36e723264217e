"""The runner's pass/fail rules and control-plane calls, against a fake switch."""

from __future__ import annotations

from typing import Any

import pytest
from stf_fakes import FakeAction, FakeExtern, FakeKey, FakeSwitch, FakeTable, echo, program

from switch.engine.runtime import Exact, Ternary
from switch.stf import StfResult, parse_stf, run_program
from switch.stf.run_stf import LATE_PATIENCE_S, Multicast

PROGRAM = program(
    [FakeTable("MyIngress.t", [FakeKey("hdr.h.a", "ternary", 8)],
               ["MyIngress.set_out", "NoAction"]),
     FakeTable("MyIngress.e", [FakeKey("hdr.h.b", "exact", 8)], ["MyIngress.set_out"])],
    [FakeAction("MyIngress.set_out", [("port", 9)]), FakeAction("NoAction", [])],
    [FakeExtern("MyIngress.m", "meter", [3, "packets"])],
)


def run(text: str, switch: Any = None, **kwargs: Any) -> StfResult:
    return run_program(PROGRAM, parse_stf(text, "t.stf"), switch=switch or FakeSwitch(),
                       **kwargs)


# ---------------------------------------------------------------------------- packets


def test_matching_packets_pass() -> None:
    result = run("packet 0 0A0B\nexpect 1 0A0B $\npacket 2 CC\nexpect 3 C*\n")
    assert result.passed, result.report
    assert (result.packets_in, result.packets_out) == (2, 2)
    assert result.report == "PASS t.stf: 2 packet(s) in, 2 out"


def test_expect_may_come_before_its_packet() -> None:
    assert run("expect 1 0A\npacket 0 0A\n").passed


def test_wrong_payload_names_line_port_and_marks_the_difference() -> None:
    result = run("packet 0 1000\nexpect 1 10 12 $\n")
    assert not result.passed
    lines = result.report.splitlines()
    assert lines[0] == ("t.stf(2): error: port 1: packet #1 (from the packet at line 1) "
                        "differs at byte 1 (nibble 2): expected 1, got 0")
    assert lines[1] == "    expected: 10 12 $"
    assert lines[2] == "    actual:   10 00"
    assert lines[3].index("^") == lines[2].index("00")
    assert lines[-1] == "FAIL t.stf: 1 error(s); 1 packet(s) in, 1 out"


def test_too_long_with_dollar_fails_but_passes_without() -> None:
    assert not run("packet 0 1000EE\nexpect 1 1000 $\n").passed
    assert run("packet 0 1000EE\nexpect 1 1000\n").passed


def test_missing_packet_fails() -> None:
    result = run("packet 0 10\nexpect 1 10\nexpect 1 11\n")
    assert not result.passed
    assert "t.stf(3): error: port 1: expected packet #2 did not come out (1 packet(s) on port 1)" \
        in result.report
    assert "expected: 11" in result.report


def test_packets_on_an_expected_port_must_all_be_expected() -> None:
    result = run("packet 0 10\npacket 0 11\nexpect 1 10\n")
    assert not result.passed
    assert "t.stf(2): error: port 1: unexpected packet #2 (expected 1 packet(s) on port 1)" \
        in result.report


def test_a_port_named_only_by_packet_lines_expects_nothing() -> None:
    # packets in on port 1 come out on port 2; port 1 is an interface with no expect
    result = run("packet 0 10\npacket 1 20\nexpect 1 10\n")
    assert result.passed, result.report
    result = run("packet 1 20\npacket 0 10\n")
    assert not result.passed
    assert "port 1: unexpected packet #1" in result.report


def test_wrong_port_fails() -> None:
    result = run("packet 0 1011\nexpect 2 1011 $\n")
    assert not result.passed
    assert "t.stf(2): error: port 2: expected packet #1 did not come out" in result.report


def test_ports_no_line_names_are_not_checked_but_noted() -> None:
    result = run("packet 0 1000\nwait\n")
    assert result.passed
    assert "note: not checked (no packet/expect line names the port): port 1: packet from " \
           "line 1: 10 00" in result.report


def test_strict_ports_checks_every_port() -> None:
    result = run("packet 0 1000\n", strict_ports=True)
    assert not result.passed
    assert "t.stf(1): error: unexpected packet on unchecked port 1" in result.report


def test_expect_without_data_accepts_anything() -> None:
    result = run("packet 0 10\npacket 0 11\nexpect 1\n")
    assert result.passed
    result = run("packet 0 10\nexpect 1 99\nexpect 1\n")
    assert result.passed
    assert "t.stf(3): warning: 'expect 1' without data accepts anything" in result.report


def test_dropped_packet_with_no_expectation_passes() -> None:
    switch = FakeSwitch(lambda sw, port, data: [])
    result = run("packet 0 10\n", switch)
    assert result.passed
    assert (result.packets_in, result.packets_out) == (1, 0)


def test_every_mismatch_is_reported() -> None:
    result = run("packet 0 10\npacket 0 11\nexpect 1 20\nexpect 1 21\n")
    assert result.report.count("error:") == 2


def test_multiple_outputs_are_matched_per_port_in_order() -> None:
    def fan_out(sw: Any, port: int, data: bytes) -> list[tuple[int, bytes]]:
        return [(2, data + b"\x02"), (3, data + b"\x03"), (2, data + b"\x22")]

    text = "packet 0 AA\nexpect 3 AA03\nexpect 2 AA02\nexpect 2 AA22\n"
    assert run(text, FakeSwitch(fan_out)).passed
    text = "packet 0 AA\nexpect 3 AA03\nexpect 2 AA22\nexpect 2 AA02\n"
    assert not run(text, FakeSwitch(fan_out)).passed


# ---------------------------------------------------------------------------- wait


def test_wait_checks_expectations_so_far() -> None:
    switch = FakeSwitch(lambda sw, port, data: [] if data == b"\x01" else [(1, data)])
    result = run("packet 0 01\nexpect 1 01\nwait\npacket 0 02\nexpect 1 02\n", switch)
    assert not result.passed
    assert "t.stf(3): error: wait: port 1: packet #1 expected at line 2 has not come out" \
        in result.report


def test_wait_does_not_fail_on_packets_whose_expect_comes_later() -> None:
    assert run("packet 0 01\nwait\nexpect 1 01\n").passed


def test_wait_reports_a_wrong_packet_once() -> None:
    result = run("packet 0 01\nexpect 1 02\nwait\nwait\n")
    assert result.report.count("error:") == 1
    assert "t.stf(2): error: port 1: packet #1" in result.report


# ---------------------------------------------------------------------------- tables


def test_add_and_setdefault_reach_the_switch() -> None:
    switch = FakeSwitch()
    text = ("add t 7 hdr.h.a:0x1* set_out(port:3)\n"
            "add e hdr.h.b:5 MyIngress.set_out(port:4)\n"
            "setdefault MyIngress.t NoAction()\n")
    assert run(text, switch).passed
    assert switch.entries == [
        ("MyIngress.t", {"hdr.h.a": Ternary(0x10, 0xF0)}, "MyIngress.set_out", (3,), 7),
        ("MyIngress.e", {"hdr.h.b": Exact(5)}, "MyIngress.set_out", (4,), None),
    ]
    assert switch.calls == [("set_default", "MyIngress.t", "NoAction", ())]


def test_a_bad_add_stops_the_test_with_its_line() -> None:
    switch = FakeSwitch()
    result = run("packet 0 10\nexpect 1 10\nadd t hdr.h.zz:1 NoAction()\npacket 0 11\n", switch)
    assert not result.passed
    assert result.report.splitlines()[0].startswith(
        "t.stf(3): error: add: no key named 'hdr.h.zz'")
    assert "stopped at the failing command" in result.report
    assert switch.injected == [(0, b"\x10")]


def test_switch_runtime_errors_are_reported_with_the_line() -> None:
    result = run("register_read nope 0 1\n")
    assert not result.passed
    assert result.report.startswith("t.stf(1): error: register_read: not found: no register nope")


def test_a_crashing_switch_is_reported_not_raised() -> None:
    def crash(sw: Any, port: int, data: bytes) -> list[tuple[int, bytes]]:
        raise ZeroDivisionError("boom")

    result = run("packet 0 10\n", FakeSwitch(crash))
    assert not result.passed
    assert "t.stf(1): error: packet: the switch failed: ZeroDivisionError: boom" in result.report


def test_unsupported_switch_methods_are_reported() -> None:
    result = run("counter_write c 0 1 2\n")
    assert "counter_write: not supported by this switch (no counter_write)" in result.report


# ---------------------------------------------------------------------------- registers, counters


def test_register_commands() -> None:
    switch = FakeSwitch()
    text = ("register_write MyIngress.r 2 0x11\nregister_read MyIngress.r 2 17\n"
            "register_read MyIngress.r 2\nregister_reset MyIngress.r\n"
            "register_read MyIngress.r 2 0\n")
    assert run(text, switch).passed


def test_register_read_mismatch_is_reported_and_the_test_goes_on() -> None:
    result = run("register_read MyIngress.r 0 0x11\npacket 0 10\nexpect 1 11\n")
    assert result.report.count("error:") == 2
    assert "t.stf(1): error: register_read MyIngress.r[0]: expected 0x11 (17), got 0x0 (0)" \
        in result.report
    assert result.packets_in == 1


@pytest.mark.parametrize(("check", "ok"), [
    ("check_counter c(1) packets == 3", True),
    ("check_counter c(1) bytes == 300", True),
    ("check_counter c(1) packets != 3", False),
    ("check_counter c(1) bytes > 299", True),
    ("check_counter c(1) bytes < 300", False),
    ("check_counter c(1) packets <= 3", True),
    ("check_counter c(1) packets >= 4", False),
    ("check_counter c(1)", False),
    ("check_counter c(2)", True),
])
def test_check_counter(check: str, ok: bool) -> None:
    switch = FakeSwitch()
    switch.counters[("c", 1)] = (3, 300)
    assert run(check + "\n", switch).passed is ok


def test_check_counter_by_unknown_handle() -> None:
    result = run("check_counter c($A) packets == 1\n")
    assert "no entry was added with handle 'A'" in result.report


def test_verbose_traces_commands_and_outputs() -> None:
    result = run("packet 0 0A\nexpect 1 0A\nregister_read MyIngress.r 0\n", verbose=True)
    assert "t.stf(1): packet 0 0A" in result.report
    assert "    -> port 1: 0A" in result.report
    assert "t.stf(3): register_read MyIngress.r[0] = 0x0" in result.report


# ---------------------------------------------------------------------------- multicast, mirroring


def test_multicast_nodes_get_bmv2_handles_and_groups_replicate_in_order() -> None:
    switch = FakeSwitch(echo())
    text = ("mc_mgrp_create 1\nmc_mgrp_create 2\nmc_node_create 10 3 2\n"
            "mc_node_create 20 4\nmc_node_associate 1 1\nmc_node_associate 1 0\n")
    assert run(text, switch).passed
    assert switch.groups == {1: [(4, 20), (2, 10), (3, 10)], 2: []}


def test_multicast_update_and_dissociate() -> None:
    switch = FakeSwitch()
    text = ("mc_mgrp_create 1\nmc_node_create 10 2\nmc_node_associate 1 0\n"
            "mc_node_update 0 5 6\n")
    assert run(text, switch).passed
    assert switch.groups[1] == [(5, 10), (6, 10)]
    text += "mc_node_dissociate 1 0\n"
    switch = FakeSwitch()
    assert run(text, switch).passed
    assert switch.groups[1] == []


def test_multicast_errors() -> None:
    assert "no multicast group 3" in run("mc_node_create 1 2\nmc_node_associate 3 0\n").report
    assert "no multicast node with handle 4" in run("mc_mgrp_create 3\n"
                                                    "mc_node_associate 3 4\n").report
    assert "already exists" in run("mc_mgrp_create 3\nmc_mgrp_create 3\n").report


def test_node_handles_reuse_the_lowest_free_one() -> None:
    mc = Multicast()
    assert [mc.create_node(0, [1]) for _ in range(3)] == [0, 1, 2]
    mc.destroy_node(1)
    assert mc.create_node(0, [1]) == 1
    assert mc.create_node(0, [1]) == 3


def test_mirroring() -> None:
    switch = FakeSwitch()
    text = ("mirroring_add 5 2\nmc_mgrp_create 1\nmc_node_create 7 3\n"
            "mirroring_add_mc 6 1\nmc_node_associate 1 0\nmirroring_get 5\n")
    assert run(text, switch).passed
    assert switch.sessions == {5: [(2, 0)], 6: [(3, 7)]}
    switch = FakeSwitch()
    assert run("mirroring_add 5 2\nmirroring_delete 5\n", switch).passed
    assert switch.sessions == {5: []}


# ---------------------------------------------------------------------------- the rest


def test_remove_all_clears_every_table() -> None:
    switch = FakeSwitch()
    assert run("remove all\n", switch).passed
    assert switch.calls == [("clear", "MyIngress.t"), ("clear", "MyIngress.e")]


def test_meter_rates() -> None:
    switch = FakeSwitch()
    assert run("meter_set_rates m 1 0.5:10 1:20\nmeter_array_set_rates MyIngress.m 2:3\n",
               switch).passed
    assert switch.calls == [("meter", "m", 1, [(0.5, 10), (1.0, 20)]),
                            ("meter", "MyIngress.m", 0, [(2.0, 3)]),
                            ("meter", "MyIngress.m", 1, [(2.0, 3)]),
                            ("meter", "MyIngress.m", 2, [(2.0, 3)])]
    assert "no meter named 'zz'" in run("meter_array_set_rates zz 1:1\n").report


def test_trace_shows_the_switch_trace_and_is_turned_off_after() -> None:
    switch = FakeSwitch()
    result = run("packet 0 0A\nexpect 1 0A\n", switch, trace=True)
    assert "      parse 0a" in result.report
    assert switch.tracer is None


def test_no_packet_is_accepted() -> None:
    assert run("no_packet\n").passed


# ---------------------------------------------------------------------------- asynchronous switches


class LateSwitch(FakeSwitch):
    """A switch that sends some outputs after ``inject`` has returned (as BMv2 could):
    ``late`` maps a packet number to the outputs that come only through ``drain``."""

    def __init__(self, late: dict[int, list[tuple[int, bytes]]],
                 only_with_patience: bool = False):
        super().__init__()
        self.late = late
        self.only_with_patience = only_with_patience
        self.drains: list[float] = []

    def inject(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        number = len(self.injected)
        outputs = super().inject(port, data)
        return [] if number in self.late else outputs

    def drain(self, patience: float = 0.0) -> list[tuple[int, int, bytes]]:
        self.drains.append(patience)
        if self.only_with_patience and not patience:
            return []
        out = [(n, port, data) for n, outs in sorted(self.late.items()) for port, data in outs]
        self.late = {}
        return out


def test_late_outputs_are_collected_and_attributed_to_their_packet() -> None:
    switch = LateSwitch({0: [(1, b"\x0a")]})
    result = run("packet 0 0A\nexpect 1 0A\npacket 0 0B\nexpect 1 0C\n", switch, verbose=True)
    assert not result.passed
    # the late output of the first packet comes after the second one's on port 1
    assert "t.stf(2): error: port 1: packet #1 (from the packet at line 3) differs" \
        in result.report
    assert "t.stf(4): error: port 1: packet #2 (from the packet at line 1) differs" \
        in result.report
    assert "    -> port 1 (late, from the packet at line 1): 0A" in result.report
    assert result.packets_out == 2


def test_missing_packets_get_time_to_come_out() -> None:
    switch = LateSwitch({0: [(1, b"\x0a")]}, only_with_patience=True)
    result = run("packet 0 0A\nexpect 1 0A\n", switch)
    assert result.passed, result.report
    assert switch.drains == [0.0, LATE_PATIENCE_S]


def test_no_patience_when_nothing_is_missing() -> None:
    switch = LateSwitch({})
    assert run("packet 0 0A\nexpect 1 0A\nwait\n", switch).passed
    assert switch.drains == [0.0, 0.0]
