"""Expected-vs-actual packet comparison: wildcards, the trailing ``$``, diff markers."""

from __future__ import annotations

from switch.stf.compare import Mismatch, compare_packet, describe_mismatch, group_nibbles


def test_exact_match() -> None:
    assert compare_packet("0A0B", False, b"\x0a\x0b") is None


def test_wildcard_nibbles_match_anything() -> None:
    assert compare_packet("*A*B", False, b"\xfa\x1b") is None
    assert compare_packet("****", True, b"\x12\x34") is None


def test_longer_packet_matches_without_dollar() -> None:
    assert compare_packet("0A", False, b"\x0a\xff\xee") is None


def test_longer_packet_fails_with_dollar() -> None:
    assert compare_packet("0A", True, b"\x0a\xff") == Mismatch("too long", 2)


def test_shorter_packet_always_fails_even_against_wildcards() -> None:
    assert compare_packet("0A**", False, b"\x0a") == Mismatch("too short", 2)


def test_odd_length_pattern_compares_nibbles() -> None:
    assert compare_packet("0A1", False, b"\x0a\x1f") is None
    assert compare_packet("0A1", True, b"\x0a\x1f") == Mismatch("too long", 3)


def test_first_difference_is_reported() -> None:
    assert compare_packet("0A0B0C", False, b"\x0a\x0b\x1c") == Mismatch("differs", 4)


def test_lower_case_actual_is_normalised() -> None:
    assert compare_packet("AB", True, b"\xab") is None


def test_group_nibbles() -> None:
    assert group_nibbles("AABBC") == "AA BB C"
    assert group_nibbles("") == ""


def test_describe_places_the_marker_under_the_difference() -> None:
    head, lines = describe_mismatch("0A0B0C", False, b"\x0a\x0b\x1c", Mismatch("differs", 4))
    assert head == "differs at byte 2 (nibble 4): expected 0, got 1"
    expected, actual, marker = lines
    assert expected == "expected: 0A 0B 0C"
    assert actual == "actual:   0A 0B 1C"
    assert marker.index("^") == actual.index("1C")


def test_describe_too_long_marks_the_first_extra_nibble() -> None:
    head, lines = describe_mismatch("0A", True, b"\x0a\xff", Mismatch("too long", 2))
    assert head == "too long: 4 nibbles, expected exactly 2"
    assert lines[0] == "expected: 0A $"
    assert lines[2].index("^") == lines[1].index("FF")


def test_describe_too_short() -> None:
    head, lines = describe_mismatch("0A0B", False, b"\x0a", Mismatch("too short", 2))
    assert head == "too short: 2 nibbles, expected at least 4"
    assert lines[1] == "actual:   0A"
