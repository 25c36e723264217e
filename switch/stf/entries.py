"""Turning STF ``add``/``setdefault`` commands into runtime table operations.

Names are looked up the way p4c's BMv2 runner looks them up: the exact name first,
then a unique suffix. Key names may be written as in the P4 key (``hdr.ipv4.dstAddr``,
or the key's ``@name``), as a unique suffix (``dstAddr``), with ``$N`` for a stack
index (``extra$0.h`` is ``extra[0].h``), and validity keys as ``h.$valid$``,
``h$valid$``, ``h.$valid``, ``h.valid`` or ``h.isValid()`` (whether the program's key
is named ``h.isValid()`` or, as in p4c's P4Info, ``h.$valid$``).

Key values follow BMv2's STF conventions:

* exact: a number.
* lpm: ``VALUE/LEN``; a hex, octal or binary number without ``/`` has a prefix as long
  as its non-``*`` digits (``0x0A01****`` is ``0x0A010000/16``); a decimal number is a
  full-width prefix.
* ternary: ``VALUE&&&MASK``; a hex, octal or binary number masks the bits of its
  non-``*`` digits (``0x**01`` is ``0x0001&&&0x00FF``: as in BMv2's runner, a number
  written with fewer digits than the key leaves the high bits unmasked); a decimal
  number is an exact match (all-ones mask).
* range: ``LO->HI``; a plain number is a one-value range.
* optional: a number; ``*`` (or a mask of 0) is the wildcard.

A key the command leaves out gets BMv2's default: 0 for exact, ``0/0`` for lpm,
``0&&&0`` for ternary, the full range, or the optional wildcard.

Priorities: in an STF file a larger priority wins; p4c's runner hands BMv2 ``10000 -
PRIO`` because BMv2's CLI lets the smaller number win. The engine follows P4Runtime
(larger wins), so the STF priority goes to the engine unchanged. It is dropped for
tables that BMv2 matches without priorities (no ternary, range or optional key and at
most one lpm key), as p4c's runner drops it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from switch.engine.runtime import Exact, Lpm, MatchValue, Optional, Range, Ternary
from switch.stf.parse_stf import (
    ActionCall,
    KeyLpm,
    KeyNumber,
    KeyRange,
    KeyTernary,
    KeyValue,
    KeyWildcard,
    SetDefault,
    StfNumber,
    TableAdd,
)

PRIORITY_KINDS = frozenset({"ternary", "range", "optional"})


class EntryError(Exception):
    """An STF table command that does not fit the program."""


def resolve_name(written: str, candidates: Iterable[str], what: str) -> str:
    """The candidate named ``written``: an exact match, else the one candidate ending
    in ``.written``, else the one ending in ``written`` (p4c's runner's rule)."""
    names = list(candidates)
    if written in names:
        return written
    for test in (lambda n: n.endswith("." + written), lambda n: n.endswith(written)):
        found = [n for n in names if test(n)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise EntryError(f"{what} name '{written}' is ambiguous: {', '.join(sorted(found))}")
    raise EntryError(f"no {what} named '{written}'")


# ---------------------------------------------------------------------------- keys

_VALID_SUFFIXES = (".$valid$", "$valid$", ".$valid", ".valid", ".isValid()")


def _squash(name: str) -> str:
    return "".join(name.split())


def stf_key_spellings(written: str) -> list[str]:
    """The names ``written`` may stand for, most literal first."""
    name = re.sub(r"\$(\d+)", r"[\1]", _squash(written))
    spellings = [name]
    if name in ("valid", "$valid$", "$valid", "isValid()"):
        spellings += ["isValid()", "$valid$"]
    for suffix in _VALID_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            base = name[: -len(suffix)].rstrip(".")
            spellings += [base + ".isValid()", base + ".$valid$"]
            break
    return spellings


def resolve_key(written: str, key_names: Sequence[str]) -> int:
    """The index of the table key element the STF key name ``written`` designates."""
    squashed = [_squash(n) for n in key_names]
    for spelling in stf_key_spellings(written):
        exact = [i for i, n in enumerate(squashed) if n == spelling]
        if len(exact) == 1:
            return exact[0]
        suffix = [i for i, n in enumerate(squashed) if n.endswith("." + spelling)]
        if not exact and len(suffix) == 1:
            return suffix[0]
        longer = [i for i, n in enumerate(squashed) if spelling.endswith("." + n)]
        if not exact and not suffix and len(longer) == 1:
            return longer[0]
        if len(exact) > 1 or len(suffix) > 1:
            raise EntryError(f"key name '{written}' is ambiguous")
    listed = ", ".join(key_names) or "none"
    raise EntryError(f"no key named '{written}' (the keys are: {listed})")


def _all_ones(width: int) -> int:
    return (1 << width) - 1


def _prefix_mask(prefix_len: int, width: int) -> int:
    return _all_ones(width) ^ _all_ones(width - prefix_len)


def _prefix_len_of_mask(mask: int, width: int) -> int | None:
    for length in range(width + 1):
        if _prefix_mask(length, width) == mask:
            return length
    return None


def _plain(number: StfNumber, kind: str) -> int:
    if number.has_wildcards:
        raise EntryError(f"'*' digits are not allowed in a value of a {kind} key "
                         f"('{number.text}')")
    return number.value


def _check_prefix(prefix_len: int, width: int) -> int:
    if prefix_len > width:
        raise EntryError(f"prefix length {prefix_len} is longer than the key ({width} bits)")
    return prefix_len


def _exact(value: KeyValue, width: int) -> MatchValue:
    if isinstance(value, KeyNumber):
        return Exact(_plain(value.number, "exact"))
    raise EntryError(f"an exact key takes a plain number, not {_describe(value)}")


def _lpm(value: KeyValue, width: int) -> MatchValue:
    if isinstance(value, KeyWildcard):
        return Lpm(0, 0)
    if isinstance(value, KeyLpm):
        return Lpm(value.value.value, _check_prefix(value.prefix_len, width))
    if isinstance(value, KeyNumber):
        n = value.number
        if n.care is None:
            return Lpm(n.value, width)
        return Lpm(n.value, min(bin(n.care).count("1"), width))
    if isinstance(value, KeyTernary):
        length = _prefix_len_of_mask(value.mask.value, width)
        if length is None:
            raise EntryError(f"mask {value.mask.text} is not a prefix mask for an lpm key")
        return Lpm(value.value.value, length)
    raise EntryError(f"an lpm key takes VALUE/LEN, not {_describe(value)}")


def _ternary(value: KeyValue, width: int) -> MatchValue:
    if isinstance(value, KeyWildcard):
        return Ternary(0, 0)
    if isinstance(value, KeyTernary):
        care = value.value.care
        mask = value.mask.value if care is None else value.mask.value & care
        return Ternary(value.value.value, mask)
    if isinstance(value, KeyNumber):
        n = value.number
        mask = _all_ones(width) if n.care is None else n.care & _all_ones(width)
        return Ternary(n.value, mask)
    if isinstance(value, KeyLpm):
        return Ternary(value.value.value, _prefix_mask(_check_prefix(value.prefix_len, width),
                                                       width))
    raise EntryError(f"a ternary key takes VALUE&&&MASK, not {_describe(value)}")


def _range(value: KeyValue, width: int) -> MatchValue:
    if isinstance(value, KeyWildcard):
        return Range(0, _all_ones(width))
    if isinstance(value, KeyRange):
        return Range(_plain(value.low, "range"), _plain(value.high, "range"))
    if isinstance(value, KeyNumber):
        v = _plain(value.number, "range")
        return Range(v, v)
    raise EntryError(f"a range key takes LO->HI, not {_describe(value)}")


def _optional(value: KeyValue, width: int) -> MatchValue:
    if isinstance(value, KeyWildcard):
        return Optional(None)
    if isinstance(value, KeyNumber):
        n = value.number
        if n.care == 0:
            return Optional(None)
        return Optional(_plain(n, "optional"))
    if isinstance(value, KeyTernary):
        mask = value.mask.value & _all_ones(width)
        if mask == 0:
            return Optional(None)
        if mask == _all_ones(width):
            return Optional(_plain(value.value, "optional"))
        raise EntryError("an optional key takes a value or '*', not a partial mask")
    raise EntryError(f"an optional key takes a value or '*', not {_describe(value)}")


_CONVERTERS = {
    "exact": _exact,
    "lpm": _lpm,
    "ternary": _ternary,
    "range": _range,
    "optional": _optional,
}


def _describe(value: KeyValue) -> str:
    if isinstance(value, KeyLpm):
        return "a prefix (VALUE/LEN)"
    if isinstance(value, KeyTernary):
        return "a masked value (VALUE&&&MASK)"
    if isinstance(value, KeyRange):
        return "a range (LO->HI)"
    if isinstance(value, KeyWildcard):
        return "'*'"
    return "a number"


def match_value(kind: str, width: int, value: KeyValue) -> MatchValue:
    """The runtime match value for an STF key value on a key of ``kind``/``width``."""
    convert = _CONVERTERS.get(kind)
    if convert is None:
        raise EntryError(f"match kind '{kind}' cannot be set from an STF file")
    return convert(value, width)


def default_match_value(kind: str, width: int) -> MatchValue:
    """What BMv2's STF runner puts in a key the ``add`` command leaves out."""
    if kind == "lpm":
        return Lpm(0, 0)
    if kind == "ternary":
        return Ternary(0, 0)
    if kind == "range":
        return Range(0, _all_ones(width))
    if kind == "optional":
        return Optional(None)
    return Exact(0)


# ---------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class Entry:
    table: str  # fqn
    key_names: tuple[str, ...]  # the match keys (selector keys left out), in key order
    key_values: tuple[MatchValue, ...]
    action: str  # fqn
    args: tuple[int, ...]
    priority: int | None

    def keys(self) -> dict[str, MatchValue] | tuple[MatchValue, ...]:
        """By name, unless two key elements share a name: then in key order."""
        if len(set(self.key_names)) == len(self.key_names):
            return dict(zip(self.key_names, self.key_values, strict=True))
        return self.key_values


@dataclass(frozen=True)
class DefaultAction:
    table: str
    action: str
    args: tuple[int, ...]


def resolve_table(program: Any, written: str) -> str:
    return resolve_name(written, program.tables, "table")


def _match_keys(table: Any) -> list[Any]:
    return [k for k in table.keys if k.match_kind != "selector"]


def _action_args(program: Any, action_fqn: str, call: ActionCall) -> tuple[int, ...]:
    params = list(program.actions[action_fqn].params)
    names = [name for name, _ in params]
    given: dict[str, int] = {}
    for name, value in call.args:
        if name not in names:
            listed = ", ".join(names) or "none"
            raise EntryError(f"action {action_fqn} has no parameter '{name}' "
                             f"(its parameters: {listed})")
        if name in given:
            raise EntryError(f"parameter '{name}' of {action_fqn} is given twice")
        given[name] = value
    missing = [n for n in names if n not in given]
    if missing:
        raise EntryError(f"action {action_fqn}: missing argument(s) {', '.join(missing)}")
    return tuple(given[n] for n in names)


def _table_action(program: Any, table_fqn: str, call: ActionCall) -> tuple[str, tuple[int, ...]]:
    table = program.tables[table_fqn]
    try:
        action = resolve_name(call.name, table.actions, "action")
    except EntryError as e:
        listed = ", ".join(table.actions) or "none"
        raise EntryError(f"table {table_fqn}: {e} (its actions: {listed})") from None
    return action, _action_args(program, action, call)


def engine_priority(stf_priority: int) -> int:
    """STF priorities and the engine's share the rule "larger wins"."""
    return stf_priority


def build_entry(program: Any, cmd: TableAdd) -> Entry:
    table_fqn = resolve_table(program, cmd.table)
    table = program.tables[table_fqn]
    keys = _match_keys(table)
    key_names = [k.name for k in keys]
    values: list[MatchValue | None] = [None] * len(keys)
    for km in cmd.keys:
        i = resolve_key(km.name, key_names)
        if values[i] is not None:
            raise EntryError(f"key {key_names[i]} is given twice")
        try:
            values[i] = match_value(keys[i].match_kind, keys[i].width, km.value)
        except EntryError as e:
            raise EntryError(f"key {key_names[i]}: {e}") from None
    matches = tuple(
        v if v is not None else default_match_value(k.match_kind, k.width)
        for k, v in zip(keys, values, strict=True)
    )
    action, args = _table_action(program, table_fqn, cmd.action)
    needs_priority = (any(k.match_kind in PRIORITY_KINDS for k in keys)
                      or sum(k.match_kind == "lpm" for k in keys) > 1)
    priority = None
    if needs_priority and cmd.priority is not None:
        priority = engine_priority(cmd.priority)
    return Entry(table_fqn, tuple(key_names), matches, action, args, priority)


def build_default(program: Any, cmd: SetDefault) -> DefaultAction:
    table_fqn = resolve_table(program, cmd.table)
    action, args = _table_action(program, table_fqn, cmd.action)
    return DefaultAction(table_fqn, action, args)
