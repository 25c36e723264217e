"""The P4Runtime differential test: one scripted sequence of requests (``p4rt_script``)
sent to the built-in switch (``ina switch``) and to BMv2's ``simple_switch_grpc``, each
started without ports; every answer must be the same on both, or be one of the known
differences below, each of which the README lists with the P4Runtime spec's reason.

A known difference pins both answers' status codes, and says how the data differ; so
when either switch changes its answer, the test fails until the list (and the README)
follows. Skipped when ``simple_switch_grpc`` or ``p4c-bm2-ss`` is not on PATH."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from p4rt_script import STEPS, Answer, run_script
from p4rt_targets import REPO, bmv2_missing, running

PROGRAM = Path(__file__).with_name("p4rt_diff.p4")
CPU_PORT = 255

DataCheck = Callable[[Answer, Answer], bool]


def codes(answer: Answer) -> str:
    return answer.code + (f" {list(answer.updates)}" if answer.updates else "")


def same_data(ours: Answer, bmv2: Answer) -> bool:
    return ours.data == bmv2.data


def ours_only(ours: Answer, bmv2: Answer) -> bool:
    """We answer with data where BMv2 refuses."""
    return bool(ours.data) and not bmv2.data


def more_on_bmv2(ours: Answer, bmv2: Answer) -> bool:
    """BMv2 ignores a filter: it returns what we return and more."""
    return set(ours.data) < set(bmv2.data)


def lines(ours: tuple[str, ...], bmv2: tuple[str, ...]) -> DataCheck:
    return lambda o, b: (o.data, b.data) == (ours, bmv2)


def replaced(pattern: str, new: str) -> DataCheck:
    """Our data, with the regular expression ``pattern`` replaced by ``new`` in exactly
    one line, are BMv2's."""
    def check(ours: Answer, bmv2: Answer) -> bool:
        for i, line in enumerate(ours.data):
            changed = re.sub(pattern, new, line)
            if changed != line and ours.data[:i] + (changed,) + ours.data[i + 1:] == bmv2.data:
                return True
        return False
    return check


def every_cell_written(ours: Answer, bmv2: Answer) -> bool:
    return len(ours.data) == 8 and all("byte_count: 2 packet_count: 1" in line
                                       for line in ours.data)


@dataclass(frozen=True)
class Difference:
    """A step whose answers differ on purpose: the README entry that says why, both
    answers' codes, and how their data compare."""

    readme: str
    ours: str
    bmv2: str
    data: DataCheck = same_data


DEVICE = "**Device ids and roles.**"
PIPELINE = "**Pipeline config.**"
ARBITRATION = "**Arbitration.**"
CODES = "**Error codes.**"
READS = "**Reads.**"
BYTES = "**Byte strings.**"
PACKET_OUT = "**Packet-out.**"
MORE = "**More than BMv2 implements.**"
SIGNED = "A value read from a `register<int<W>>` keeps its sign"

NOT_FOUND_1 = "UNKNOWN ['NOT_FOUND']"
INVALID_1 = "UNKNOWN ['INVALID_ARGUMENT']"
UNKNOWN_1 = "UNKNOWN ['UNKNOWN']"
UNIMPLEMENTED_1 = "UNKNOWN ['UNIMPLEMENTED']"

KNOWN_DIFFERENCES: dict[str, Difference] = {
    "set_pipeline_wrong_device": Difference(DEVICE, "NOT_FOUND", "PERMISSION_DENIED"),
    "get_pipeline_wrong_device": Difference(DEVICE, "NOT_FOUND", "FAILED_PRECONDITION"),
    "write_wrong_device": Difference(DEVICE, "NOT_FOUND", "PERMISSION_DENIED"),
    "read_wrong_device": Difference(DEVICE, "NOT_FOUND", "FAILED_PRECONDITION"),
    "arbitration_wrong_device": Difference(DEVICE, "OK", "OK", lines(
        ("stream ended NOT_FOUND",), ("election_id 0,30 OK",))),
    "write_with_role": Difference(DEVICE, "NOT_FOUND", "OK"),
    "get_pipeline_before_any": Difference(PIPELINE, "OK", "FAILED_PRECONDITION"),
    "set_pipeline_garbage_config": Difference(PIPELINE, "INVALID_ARGUMENT", "OK"),
    "set_pipeline_commit_nothing_saved": Difference(PIPELINE, "NOT_FOUND", "UNKNOWN"),
    "set_pipeline_reconcile_and_commit": Difference(PIPELINE, "OK", "UNKNOWN"),
    "arbitration_primary_steps_down": Difference(ARBITRATION, "OK", "OK", lines(
        ("election_id 0,25 OK", "old primary: election_id 0,25 ALREADY_EXISTS",
         "election_id 0,25 NOT_FOUND", "old primary: election_id 0,25 NOT_FOUND",
         "election_id 0,25 OK"),
        ("election_id 0,25 OK", "old primary: election_id 0,25 ALREADY_EXISTS",
         "election_id 0,20 ALREADY_EXISTS", "old primary: election_id 0,20 OK",
         "election_id 0,25 OK"))),
    "primary_leaves": Difference(ARBITRATION, "OK", "OK", lines(
        ("backup: election_id 0,25 NOT_FOUND",), ("backup: election_id 0,20 ALREADY_EXISTS",))),
    "insert_table_full": Difference(CODES, "UNKNOWN ['OK', 'RESOURCE_EXHAUSTED']",
                                    "UNKNOWN ['OK', 'UNKNOWN']"),
    "insert_const_table": Difference(CODES, "UNKNOWN ['PERMISSION_DENIED']", UNKNOWN_1),
    "delete_const_entry": Difference(CODES, "UNKNOWN ['PERMISSION_DENIED']", NOT_FOUND_1),
    "insert_keyless_table": Difference(CODES, INVALID_1, UNKNOWN_1),
    "modify_counter_index_out_of_range": Difference(CODES, "UNKNOWN ['OUT_OF_RANGE']",
                                                    UNKNOWN_1),
    "modify_meter_index_out_of_range": Difference(CODES, "UNKNOWN ['OUT_OF_RANGE']",
                                                  UNKNOWN_1),
    "modify_meter_cir_above_pir": Difference(CODES, INVALID_1, UNKNOWN_1),
    "modify_direct_meter_cir_above_pir": Difference(CODES, INVALID_1, UNKNOWN_1),
    "delete_member_in_group": Difference(CODES, "UNKNOWN ['FAILED_PRECONDITION']", UNKNOWN_1),
    "delete_member_used_by_entry": Difference(CODES, "UNKNOWN ['FAILED_PRECONDITION']",
                                              UNKNOWN_1),
    "delete_group_used_by_entry": Difference(CODES, "UNKNOWN ['FAILED_PRECONDITION']",
                                             UNKNOWN_1),
    "modify_direct_counter_missing_entry": Difference(CODES, NOT_FOUND_1, INVALID_1),
    "modify_direct_meter_missing_entry": Difference(CODES, NOT_FOUND_1, INVALID_1),
    "insert_entry_with_missing_group": Difference(CODES, NOT_FOUND_1, INVALID_1),
    "insert_entry_with_missing_member": Difference(CODES, NOT_FOUND_1, INVALID_1),
    "read_unknown_table": Difference(READS, INVALID_1, "INVALID_ARGUMENT"),
    "read_direct_counter_unknown_table": Difference(READS, INVALID_1, "INVALID_ARGUMENT"),
    "read_direct_counter_missing_entry": Difference(READS, NOT_FOUND_1, "INVALID_ARGUMENT"),
    "read_counter_index_out_of_range": Difference(READS, "UNKNOWN ['OUT_OF_RANGE']",
                                                  "UNKNOWN"),
    "read_missing_multicast_group": Difference(READS, NOT_FOUND_1, "NOT_FOUND"),
    "read_missing_clone_session": Difference(READS, NOT_FOUND_1, "NOT_FOUND"),
    "read_digest_config_unset": Difference(READS, NOT_FOUND_1, "NOT_FOUND"),
    "read_unknown_digest": Difference(READS, NOT_FOUND_1, "NOT_FOUND"),
    "read_ternary_by_priority": Difference(READS, "OK", "OK", more_on_bmv2),
    "read_with_action_set": Difference(READS, "OK", "OK", more_on_bmv2),
    "read_const_entries": Difference(READS, "OK", "OK", replaced(" is_const: true", "")),
    "read_default_of_all_tables": Difference(READS, "OK", "OK", replaced(
        r" action \{ action \{ action_id: \d+ \} \}(?= is_default_action)", "")),
    "read_direct_counters_of_all_tables": Difference(READS, "OK", "INVALID_ARGUMENT",
                                                     ours_only),
    "read_all_digest_configs_unset": Difference(READS, "OK", "UNIMPLEMENTED"),
    "read_all_digests": Difference(READS, "OK", "UNIMPLEMENTED", ours_only),
    "insert_exact_empty_value": Difference(BYTES, INVALID_1, "OK"),
    "insert_param_empty": Difference(BYTES, INVALID_1, "OK"),
    "packet_out_without_metadata": Difference(PACKET_OUT, "OK", "OK", lines(
        ("stream error INVALID_ARGUMENT",),
        ("packet_in [1=255 2=0 3=0 4=1] 00000000000a0000000000aa12347061796c6f6164",))),
    "packet_out_metadata_too_wide": Difference(PACKET_OUT, "OK", "OK", lines(
        ("stream error INVALID_ARGUMENT",), ())),
    "packet_out_unknown_metadata": Difference(PACKET_OUT, "OK", "OK", lines(
        ("stream error INVALID_ARGUMENT",), ())),
    "packet_out_from_backup": Difference(PACKET_OUT, "OK", "OK", lines(
        ("stream error PERMISSION_DENIED",), ())),
    "read_register": Difference(MORE, "OK", "UNIMPLEMENTED", ours_only),
    "read_unknown_register": Difference(MORE, INVALID_1, "UNIMPLEMENTED"),
    "modify_register": Difference(MORE, "OK", UNIMPLEMENTED_1),
    "modify_value_set": Difference(MORE, "OK", UNIMPLEMENTED_1),
    "read_value_set": Difference(MORE, "OK", "UNIMPLEMENTED", ours_only),
    "modify_value_set_too_many": Difference(MORE, "UNKNOWN ['RESOURCE_EXHAUSTED']",
                                            UNIMPLEMENTED_1),
    "modify_value_set_repeated_member": Difference(MORE, "UNKNOWN ['ALREADY_EXISTS']",
                                                   UNIMPLEMENTED_1),
    "modify_value_set_value_too_wide": Difference(MORE, INVALID_1, UNIMPLEMENTED_1),
    "modify_unknown_value_set": Difference(MORE, INVALID_1, UNIMPLEMENTED_1),
    "insert_value_set": Difference(MORE, INVALID_1, UNIMPLEMENTED_1),
    "restore_value_set": Difference(MORE, "OK", UNIMPLEMENTED_1, ours_only),
    "packet_value_set": Difference(MORE, "OK", "OK", replaced(" 2=1 ", " 2=0 ")),
    "modify_counter_all_cells": Difference(MORE, "OK", UNIMPLEMENTED_1, every_cell_written),
    "insert_clone_session_truncated": Difference(MORE, "OK", UNKNOWN_1),
    "insert_clone_session_class_of_service": Difference(MORE, "OK", UNIMPLEMENTED_1),
    "packet_signed_register_negative": Difference(SIGNED, "OK", "OK",
                                                  replaced(" 3=1 ", " 3=0 ")),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Answer]]:
    reason = bmv2_missing()
    if reason:
        pytest.skip(f"BMv2 not installed: {reason}")
    work = tmp_path_factory.mktemp("p4rt-vs-bmv2")
    out = {}
    for target in ("ina", "bmv2"):
        with running(target, PROGRAM, work / target, CPU_PORT) as t:
            out[target] = run_script(t)
    return out


@pytest.mark.parametrize("name", list(STEPS))
def test_same_answer(answers: dict[str, dict[str, Answer]], name: str) -> None:
    ours, bmv2 = answers["ina"][name], answers["bmv2"][name]
    known = KNOWN_DIFFERENCES.get(name)
    if known is None:
        assert ours == bmv2, f"{name}:\n  ours: {ours}\n  BMv2: {bmv2}"
    else:
        assert (codes(ours), codes(bmv2)) == (known.ours, known.bmv2) and known.data(
            ours, bmv2), f"{name}, a known difference, changed:\n  ours: {ours}\n  BMv2: {bmv2}"


def test_known_differences_are_steps_and_documented() -> None:
    readme = (REPO / "README.md").read_text()
    for name, known in KNOWN_DIFFERENCES.items():
        assert name in STEPS, name
        assert known.readme in readme, f"{name}: README lacks {known.readme!r}"
