"""Comparing an output packet with an STF ``expect`` pattern, the way p4c's BMv2 runner
does: nibble by nibble, ``*`` matches any nibble, the packet may be longer than the
pattern unless the pattern ended with ``$``, and may never be shorter."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mismatch:
    reason: str  # "differs", "too short" or "too long"
    position: int  # nibble index where the comparison failed


def packet_hex(data: bytes) -> str:
    return data.hex().upper()


def compare_packet(pattern: str, exact_length: bool, actual: bytes) -> Mismatch | None:
    """None if ``actual`` matches ``pattern`` (upper-case nibbles and ``*``)."""
    received = packet_hex(actual)
    for i, want in enumerate(pattern):
        if i >= len(received):
            return Mismatch("too short", len(received))
        if want != "*" and want != received[i]:
            return Mismatch("differs", i)
    if exact_length and len(received) > len(pattern):
        return Mismatch("too long", len(pattern))
    return None


def group_nibbles(nibbles: str) -> str:
    """``AABBC`` -> ``AA BB C``: byte groups, so that long packets stay readable."""
    return " ".join(nibbles[i:i + 2] for i in range(0, len(nibbles), 2))


def _column(position: int) -> int:
    """The column of nibble ``position`` in ``group_nibbles`` output."""
    return position + position // 2


def describe_mismatch(pattern: str, exact_length: bool, actual: bytes,
                      mismatch: Mismatch) -> tuple[str, list[str]]:
    """A one-line summary, and lines showing the expected and actual packet with a
    marker under the first difference."""
    received = packet_hex(actual)
    n_expected = len(pattern)
    if mismatch.reason == "differs":
        i = mismatch.position
        head = (f"differs at byte {i // 2} (nibble {i}): expected {pattern[i]}, "
                f"got {received[i]}")
    elif mismatch.reason == "too short":
        head = f"too short: {len(received)} nibbles, expected at least {n_expected}"
    else:
        head = f"too long: {len(received)} nibbles, expected exactly {n_expected}"
    shown = pattern + ("$" if exact_length else "")
    marker = " " * _column(mismatch.position) + "^"
    return head, [
        f"expected: {group_nibbles(shown)}",
        f"actual:   {group_nibbles(received)}",
        f"          {marker}",
    ]
