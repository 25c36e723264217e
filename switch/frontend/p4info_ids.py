"""P4Runtime ids and aliases, computed the way p4c's P4Runtime serializer computes them.

A P4Info id is 32 bits: an 8-bit resource-type prefix (``P4Ids`` in p4info.proto) and
24 bits taken from the Jenkins one-at-a-time hash of the object's fully-qualified
control-plane name. Ids are assigned per resource type, visiting the names in sorted
(byte-wise) order, so that the linear probing used on a collision gives every compiler
run the same answer. ``@id(N)`` annotations are honoured first: ``N`` without a prefix
gets the type's prefix added, ``N`` with another type's prefix is an error.

The alias of an object is the shortest suffix of its dot-separated name that no other
control-plane symbol (of any resource type) shares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# Resource-type prefixes (p4.config.v1.P4Ids.Prefix).
ACTION = 0x01
TABLE = 0x02
VALUE_SET = 0x03
CONTROLLER_HEADER = 0x04
ACTION_PROFILE = 0x11
COUNTER = 0x12
DIRECT_COUNTER = 0x13
METER = 0x14
DIRECT_METER = 0x15
REGISTER = 0x16
DIGEST = 0x17

_PREFIX_MASK = 0xFF << 24
_HASH_MASK = 0xFFFFFF
_U32 = 0xFFFFFFFF


def jenkins_hash(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash of the UTF-8 bytes of ``name`` (32 bits)."""
    h = 0
    for byte in name.encode("utf-8"):
        h = (h + byte) & _U32
        h = (h + (h << 10)) & _U32
        h ^= h >> 6
    h = (h + (h << 3)) & _U32
    h ^= h >> 11
    h = (h + (h << 15)) & _U32
    return h


def hashed_id(kind: int, name: str) -> int:
    """The id p4c gives ``name`` when nothing else of that resource type collides."""
    return (kind << 24) | (jenkins_hash(name) & _HASH_MASK)


class IdError(ValueError):
    """An ``@id`` value that P4Runtime cannot use; ``str()`` is the message."""


def explicit_id(kind: int, value: int) -> int:
    """Turn an ``@id(value)`` annotation into a full id for resource type ``kind``."""
    if not 0 <= value <= _U32:
        raise IdError("@id should be an unsigned integer")
    prefix = kind << 24
    if value & _PREFIX_MASK and value & _PREFIX_MASK != prefix:
        raise IdError("@id has the wrong 8-bit prefix")
    return value | prefix


class SuffixSet:
    """Dot-separated names, organised to answer "shortest unique suffix" queries."""

    @dataclass
    class _Node:
        count: int = 0
        edges: dict[str, SuffixSet._Node] = field(default_factory=dict)

    def __init__(self) -> None:
        self._names: set[str] = set()
        self._root = SuffixSet._Node()

    def add(self, name: str) -> None:
        if name in self._names:
            return
        self._names.add(name)
        node = self._root
        for part in reversed(name.split(".")):
            node = node.edges.setdefault(part, SuffixSet._Node())
            node.count += 1

    def shortest_unique_suffix(self, name: str) -> str:
        parts = name.split(".")
        node = self._root
        needed = 0
        for part in reversed(parts):
            child = node.edges.get(part)
            if child is None:  # not a known symbol: the whole name is the best we have
                return name
            node = child
            needed += 1
            if node.count < 2:
                break
        return ".".join(parts[len(parts) - needed :])


@dataclass
class _Entry:
    id: int = 0  # 0 until assigned


class SymbolTable:
    """Collects control-plane symbols, then assigns every one an id.

    ``add`` records a symbol (duplicates of the same kind and name are merged, as p4c
    merges e.g. NoAction localised into several controls). ``assign`` then gives each
    symbol without an ``@id`` a hashed id, probing linearly past ids already taken.
    """

    def __init__(self) -> None:
        self._tables: dict[int, dict[str, _Entry]] = {}
        self._taken: set[int] = set()
        self._suffixes = SuffixSet()

    def add(
        self,
        kind: int,
        name: str,
        wanted: int | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        """Record ``name`` of resource type ``kind``; ``wanted`` is its ``@id`` value
        (already validated by ``explicit_id``). A duplicate ``@id`` is reported through
        ``on_error`` and the symbol then gets a hashed id."""
        table = self._tables.setdefault(kind, {})
        if name in table:
            return
        entry = _Entry()
        if wanted is not None:
            if wanted in self._taken:
                if on_error is not None:
                    on_error(f"@id {wanted} is assigned to multiple declarations")
            else:
                self._taken.add(wanted)
                entry.id = wanted
        table[name] = entry
        self._suffixes.add(name)

    def assign(self, on_error: Callable[[str], None] | None = None) -> None:
        """Give every symbol without an id its hashed id. Symbols added after a first
        ``assign`` get theirs in a second call, without moving any id already given."""
        for kind in sorted(self._tables):
            table = self._tables[kind]
            for name in sorted(table, key=lambda n: n.encode("utf-8")):
                entry = table[name]
                if entry.id:
                    continue
                start = jenkins_hash(name)
                value = start
                while True:
                    candidate = (kind << 24) | (value & _HASH_MASK)
                    if candidate not in self._taken:
                        break
                    value = (value + 1) & _U32
                    if value == start:
                        if on_error is not None:
                            on_error(f"No available id to represent {name} in P4Runtime")
                        return
                self._taken.add(candidate)
                entry.id = candidate

    def contains(self, kind: int, name: str) -> bool:
        return name in self._tables.get(kind, {})

    def id(self, kind: int, name: str) -> int:
        """The id of a symbol (``assign`` must have run); 0 for an unknown symbol."""
        entry = self._tables.get(kind, {}).get(name)
        return entry.id if entry is not None else 0

    def alias(self, name: str) -> str:
        return self._suffixes.shortest_unique_suffix(name)

    def names(self, kind: int) -> list[str]:
        return list(self._tables.get(kind, {}))
