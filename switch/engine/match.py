"""Match keys: checking and normalising control-plane match values, and the lookup
structures a table uses for them.

Three structures cover every table:

* ``ExactIndex``: all keys exact: one dict from the key value (a scalar for one key,
  otherwise a tuple) to the entry.
* ``LpmIndex``: one lpm key plus exact keys: a dict per prefix length, tried longest
  first; the lpm component of the key is masked before the lookup.
* ``OrderedIndex``: anything with ternary, range or optional keys (or two lpm keys):
  entries in priority order (highest first, then oldest first), each a list of
  masked and range comparisons.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from switch.engine.runtime import (
    ErrorCode,
    Exact,
    Lpm,
    MatchValue,
    Optional,
    Range,
    SwitchRuntimeError,
    Ternary,
)


@dataclass(frozen=True)
class KeySpec:
    name: str
    kind: str  # exact, lpm, ternary, range, optional
    width: int


PRIORITY_KINDS = frozenset({"ternary", "range", "optional"})


def needs_priority(keys: list[KeySpec]) -> bool:
    return any(k.kind in PRIORITY_KINDS for k in keys) or sum(k.kind == "lpm" for k in keys) > 1


def _bad(msg: str) -> SwitchRuntimeError:
    return SwitchRuntimeError(ErrorCode.BAD_MATCH_KEY, msg)


def normalize(key: KeySpec, value: Any) -> MatchValue:
    """Check ``value`` against the key and return its canonical MatchValue (masked
    values, ``Exact`` for exact keys). Plain ints are taken as ``Exact``."""
    if isinstance(value, bool):
        value = Exact(int(value))
    elif isinstance(value, int):
        value = Exact(value)
    w = key.width
    full = (1 << w) - 1

    def check(v: int, what: str = "value") -> int:
        if not isinstance(v, int) or v < 0 or v > full:
            raise _bad(f"key {key.name}: {what} {v!r} does not fit in {w} bits")
        return v

    kind = key.kind
    if kind == "exact":
        if isinstance(value, Exact):
            return Exact(check(value.value))
        if isinstance(value, Optional) and value.value is not None:
            return Exact(check(value.value))
        if isinstance(value, Ternary) and (value.mask & full) == full:
            return Exact(check(value.value))
        if isinstance(value, Lpm) and value.prefix_len == w:
            return Exact(check(value.value))
    elif kind == "lpm":
        if isinstance(value, Exact):
            return Lpm(check(value.value), w)
        if isinstance(value, Lpm):
            plen = value.prefix_len
            if not isinstance(plen, int) or plen < 0 or plen > w:
                raise _bad(f"key {key.name}: prefix length {plen} not in [0, {w}]")
            mask = full ^ ((1 << (w - plen)) - 1)
            return Lpm(check(value.value) & mask, plen)
        if isinstance(value, Ternary):
            m = check(value.mask, "mask")
            plen = bin(m).count("1")
            if m != full ^ ((1 << (w - plen)) - 1):
                raise _bad(f"key {key.name}: mask {m:#x} is not a prefix")
            return Lpm(check(value.value) & m, plen)
    elif kind == "ternary":
        if isinstance(value, Exact):
            return Ternary(check(value.value), full)
        if isinstance(value, Ternary):
            m = check(value.mask, "mask")
            return Ternary(check(value.value) & m, m)
        if isinstance(value, Lpm):
            plen = value.prefix_len
            if plen < 0 or plen > w:
                raise _bad(f"key {key.name}: prefix length {plen} not in [0, {w}]")
            m = full ^ ((1 << (w - plen)) - 1)
            return Ternary(check(value.value) & m, m)
    elif kind == "range":
        if isinstance(value, Exact):
            v = check(value.value)
            return Range(v, v)
        if isinstance(value, Range):
            lo, hi = check(value.low, "low"), check(value.high, "high")
            if lo > hi:
                raise _bad(f"key {key.name}: empty range {lo}..{hi}")
            return Range(lo, hi)
        if isinstance(value, Ternary) and value.mask == 0:
            return Range(0, full)
    elif kind == "optional":
        if isinstance(value, Exact):
            return Optional(check(value.value))
        if isinstance(value, Optional):
            return Optional(None if value.value is None else check(value.value))
        if isinstance(value, Ternary):
            if value.mask == 0:
                return Optional(None)
            if value.mask & full == full:
                return Optional(check(value.value))
    else:
        raise SwitchRuntimeError(ErrorCode.UNSUPPORTED, f"key {key.name}: match kind {kind}")
    raise _bad(f"key {key.name} ({kind}): {type(value).__name__} value not accepted")


def is_wildcard(value: MatchValue, width: int) -> bool:
    if isinstance(value, Lpm):
        return value.prefix_len == 0
    if isinstance(value, Ternary):
        return value.mask == 0
    if isinstance(value, Optional):
        return value.value is None
    if isinstance(value, Range):
        return value.low == 0 and value.high == (1 << width) - 1
    return False


# ------------------------------------------------------------------ lookup structures


class ExactIndex:
    """All keys exact."""

    def __init__(self, single: bool):
        self.single = single
        self.map: dict[Any, Any] = {}
        self.lookup = self.map.get

    def ident(self, keys: tuple[MatchValue, ...], priority: int | None) -> Any:
        vals = tuple(k.value for k in keys)  # type: ignore[union-attr]
        return vals[0] if self.single else vals

    def add(self, entry: Any) -> None:
        self.map[entry.ident] = entry

    def remove(self, entry: Any) -> None:
        del self.map[entry.ident]

    def find(self, ident: Any) -> Any:
        return self.map.get(ident)

    def clear(self) -> None:
        self.map.clear()


class LpmIndex:
    """One lpm key (at ``pos``) plus exact keys."""

    def __init__(self, keys: list[KeySpec], pos: int):
        self.single = len(keys) == 1
        self.pos = pos
        self.width = keys[pos].width
        self.full = (1 << self.width) - 1
        # (prefix_len, mask, dict), longest prefix first; rebuilt in place
        self.levels: list[tuple[int, int, dict[Any, Any]]] = []
        self._by_len: dict[int, dict[Any, Any]] = {}
        self.lookup = self._lookup_single if self.single else self._lookup_multi

    def _mask(self, plen: int) -> int:
        return self.full ^ ((1 << (self.width - plen)) - 1)

    def ident(self, keys: tuple[MatchValue, ...], priority: int | None) -> Any:
        lpm = keys[self.pos]
        assert isinstance(lpm, Lpm)
        if self.single:
            return (lpm.prefix_len, lpm.value)
        vals = tuple(k.value for k in keys)  # type: ignore[union-attr]
        return (lpm.prefix_len, vals)

    def add(self, entry: Any) -> None:
        plen, k = entry.ident
        d = self._by_len.get(plen)
        if d is None:
            d = self._by_len[plen] = {}
            self._rebuild()
        d[k] = entry

    def remove(self, entry: Any) -> None:
        plen, k = entry.ident
        d = self._by_len[plen]
        del d[k]
        if not d:
            del self._by_len[plen]
            self._rebuild()

    def find(self, ident: Any) -> Any:
        plen, k = ident
        d = self._by_len.get(plen)
        return None if d is None else d.get(k)

    def clear(self) -> None:
        self._by_len.clear()
        self._rebuild()

    def _rebuild(self) -> None:
        self.levels[:] = [
            (plen, self._mask(plen), self._by_len[plen])
            for plen in sorted(self._by_len, reverse=True)
        ]

    def _lookup_single(self, k: int) -> Any:
        for _plen, mask, d in self.levels:
            e = d.get(k & mask)
            if e is not None:
                return e
        return None

    def _lookup_multi(self, k: tuple[Any, ...]) -> Any:
        pos = self.pos
        kl = list(k)
        v = k[pos]
        for _plen, mask, d in self.levels:
            kl[pos] = v & mask
            e = d.get(tuple(kl))
            if e is not None:
                return e
        return None


class OrderedIndex:
    """Priority-ordered list of entries with masked and range comparisons."""

    def __init__(self, keys: list[KeySpec]):
        self.keys = keys
        self.single = len(keys) == 1
        self.entries: list[Any] = []
        self._order: list[tuple[int, int]] = []  # (-priority, seq) parallel to entries
        self._ids: dict[Any, Any] = {}
        self.lookup = self._lookup_single if self.single else self._lookup_multi

    def ident(self, keys: tuple[MatchValue, ...], priority: int | None) -> Any:
        return (tuple(keys), priority)

    def checks(self, keys: tuple[MatchValue, ...]) -> tuple[tuple, tuple]:
        masked: list[tuple[int, int, int]] = []
        ranges: list[tuple[int, int, int]] = []
        for i, (spec, v) in enumerate(zip(self.keys, keys, strict=True)):
            if is_wildcard(v, spec.width):
                continue
            if isinstance(v, Exact):
                masked.append((i, (1 << spec.width) - 1, v.value))
            elif isinstance(v, Ternary):
                masked.append((i, v.mask, v.value))
            elif isinstance(v, Lpm):
                m = ((1 << spec.width) - 1) ^ ((1 << (spec.width - v.prefix_len)) - 1)
                masked.append((i, m, v.value))
            elif isinstance(v, Optional) and v.value is not None:
                masked.append((i, (1 << spec.width) - 1, v.value))
            elif isinstance(v, Range):
                ranges.append((i, v.low, v.high))
        return tuple(masked), tuple(ranges)

    def add(self, entry: Any) -> None:
        entry.masked, entry.ranges = self.checks(entry.keys)
        key = (-(entry.priority or 0), entry.seq)
        i = bisect.bisect(self._order, key)
        self._order.insert(i, key)
        self.entries.insert(i, entry)
        self._ids[entry.ident] = entry

    def remove(self, entry: Any) -> None:
        i = self.entries.index(entry)
        del self.entries[i]
        del self._order[i]
        del self._ids[entry.ident]

    def find(self, ident: Any) -> Any:
        return self._ids.get(ident)

    def clear(self) -> None:
        self.entries.clear()
        self._order.clear()
        self._ids.clear()

    def _lookup_single(self, k: Any) -> Any:
        return self._lookup_multi((k,))

    def _lookup_multi(self, k: tuple[Any, ...]) -> Any:
        for e in self.entries:
            for i, m, v in e.masked:
                if k[i] & m != v:
                    break
            else:
                for i, lo, hi in e.ranges:
                    if not lo <= k[i] <= hi:
                        break
                else:
                    return e
        return None


def make_index(keys: list[KeySpec]) -> ExactIndex | LpmIndex | OrderedIndex:
    kinds = [k.kind for k in keys]
    if all(k == "exact" for k in kinds):
        return ExactIndex(len(keys) == 1)
    if kinds.count("lpm") == 1 and all(k in ("exact", "lpm") for k in kinds):
        return LpmIndex(keys, kinds.index("lpm"))
    return OrderedIndex(keys)


class ValueSet:
    """A parser value set: ``members`` are tuples of MatchValues (one per component of
    the select key); a key matches when it matches any member."""

    def __init__(self, name: str, keys: list[KeySpec], size: int):
        self.name = name
        self.keys = keys
        self.size = size
        self.members: list[tuple[MatchValue, ...]] = []
        self._index = OrderedIndex(keys)

    def set(self, members: list[Any]) -> None:
        if len(members) > self.size:
            raise SwitchRuntimeError(ErrorCode.TABLE_FULL,
                                     f"value set {self.name} holds at most {self.size} members")
        norm = []
        for m in members:
            if not isinstance(m, (list, tuple)):
                m = (m,)
            if len(m) != len(self.keys):
                raise SwitchRuntimeError(
                    ErrorCode.BAD_MATCH_KEY,
                    f"value set {self.name}: members have {len(self.keys)} components")
            norm.append(tuple(normalize(k, v) for k, v in zip(self.keys, m, strict=True)))
        self.members = norm
        self._index.clear()
        for i, mv in enumerate(norm):
            e = _Member(mv, i)
            self._index.add(e)

    def match(self, key: Any) -> bool:
        if not isinstance(key, tuple):
            key = (key,)
        return self._index._lookup_multi(key) is not None


class _Member:
    __slots__ = ("keys", "priority", "seq", "ident", "masked", "ranges")

    def __init__(self, keys: tuple[MatchValue, ...], seq: int):
        self.keys = keys
        self.priority = 0
        self.seq = seq
        self.ident = (keys, seq)
