"""Canonical P4 types, as the checker computes them (typedefs resolved away).

These are values: two ``Bits(8)`` are equal. Declared aggregate types keep a reference
to their declaration and list their fields with resolved types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


class Type:
    """Base class of every canonical type."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Bits(Type):
    """``bit<W>`` (signed=False) or ``int<W>`` (signed=True)."""

    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True, slots=True)
class InfInt(Type):
    """The type of an untyped integer constant (arbitrary precision ``int``)."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True, slots=True)
class Varbit(Type):
    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True, slots=True)
class Bool(Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class String(Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True, slots=True)
class Void(Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True, slots=True)
class DontCareType(Type):
    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class Error(Type):
    """The single ``error`` type (all error declarations merged)."""

    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True, slots=True)
class MatchKind(Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True, slots=True)
class FieldType:
    name: str
    type: Type


@dataclass(frozen=True, eq=False, slots=True)
class Header(Type):
    """A header type. ``fields`` in declaration order; ``decl`` the HeaderDecl.
    Equality is by name (declared types are nominal)."""

    name: str
    fields: tuple[FieldType, ...] = field(compare=False)
    decl: object = field(compare=False, repr=False, default=None)

    def __eq__(self, other: object) -> bool:
        return type(other) is Header and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("header", self.name))

    def __str__(self) -> str:
        return self.name

    @property
    def width(self) -> int:
        """Width in bits of the fixed-size fields (a varbit counts as 0)."""
        return sum(f.type.width for f in self.fields if isinstance(f.type, Bits))


@dataclass(frozen=True, eq=False, slots=True)
class Struct(Type):
    name: str
    fields: tuple[FieldType, ...] = field(compare=False)
    decl: object = field(compare=False, repr=False, default=None)

    def __eq__(self, other: object) -> bool:
        return type(other) is Struct and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("struct", self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False, slots=True)
class HeaderUnion(Type):
    name: str
    fields: tuple[FieldType, ...] = field(compare=False)
    decl: object = field(compare=False, repr=False, default=None)

    def __eq__(self, other: object) -> bool:
        return type(other) is HeaderUnion and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("union", self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Stack(Type):
    """``H[n]``: a header stack (or a stack of header unions)."""

    element: Type
    size: int

    def __str__(self) -> str:
        return f"{self.element}[{self.size}]"


@dataclass(frozen=True, slots=True)
class Tuple(Type):
    elements: tuple[Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(map(str, self.elements)) + ">"


@dataclass(frozen=True, eq=False, slots=True)
class Enum(Type):
    """A plain enum; members are numbered 0.. in declaration order."""

    name: str
    members: tuple[str, ...] = field(compare=False)
    decl: object = field(compare=False, repr=False, default=None)

    def __eq__(self, other: object) -> bool:
        return type(other) is Enum and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("enum", self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False, slots=True)
class SerEnum(Type):
    """A serializable enum ``enum bit<8> E { A = 1 }``: values are ``underlying`` bits."""

    name: str
    underlying: Bits = field(compare=False)
    members: tuple[tuple[str, int], ...] = field(compare=False)
    decl: object = field(compare=False, repr=False, default=None)

    def __eq__(self, other: object) -> bool:
        return type(other) is SerEnum and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("serenum", self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False, slots=True)
class NewType(Type):
    """``type bit<32> T;``: a distinct type represented as ``underlying``."""

    name: str
    underlying: Type = field(compare=False)

    def __eq__(self, other: object) -> bool:
        return type(other) is NewType and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("newtype", self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False, slots=True)
class Extern(Type):
    """An extern object type with its type arguments, e.g. ``register<bit<32>, bit<8>>``."""

    name: str
    type_args: tuple[Type, ...] = ()
    decl: object = field(compare=False, repr=False, default=None)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Extern
            and other.name == self.name  # type: ignore[attr-defined]
            and other.type_args == self.type_args  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash(("extern", self.name, self.type_args))

    def __str__(self) -> str:
        if not self.type_args:
            return self.name
        return f"{self.name}<{', '.join(map(str, self.type_args))}>"


@dataclass(frozen=True, eq=False, slots=True)
class ParserOrControl(Type):
    """The type of a parser/control declaration or instance (kind 'parser'/'control'),
    or of a package ('package')."""

    kind: str
    name: str
    decl: object = field(compare=False, repr=False, default=None)

    def __eq__(self, other: object) -> bool:
        return type(other) is ParserOrControl and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.kind, self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class TableApplyResult(Type):
    """The result of ``t.apply()``: has ``hit``, ``miss`` and ``action_run``."""

    table: str

    def __str__(self) -> str:
        return f"apply_result<{self.table}>"


@dataclass(frozen=True, slots=True)
class ActionEnum(Type):
    """The type of ``t.apply().action_run``; switch labels are action names."""

    table: str

    def __str__(self) -> str:
        return f"action_list({self.table})"


def every_leaf(t: Type, leaf: Callable[[Type], bool]) -> bool:
    """``leaf`` holds for ``t``, or, for a struct or tuple, for each of its members in
    turn (headers, stacks and unions are leaves)."""
    if isinstance(t, Struct):
        return all(every_leaf(f.type, leaf) for f in t.fields)
    if isinstance(t, Tuple):
        return all(every_leaf(e, leaf) for e in t.elements)
    return leaf(t)


def width_of(t: Type) -> int:
    """Bit width of a fixed-width serializable type (bits, bool, ser-enum, header,
    struct of those), as used by lookahead, emit and hashing."""
    if isinstance(t, Bits):
        return t.width
    if isinstance(t, Bool):
        return 1
    if isinstance(t, SerEnum):
        return t.underlying.width
    if isinstance(t, NewType):
        return width_of(t.underlying)
    if isinstance(t, (Header, Struct)):
        return sum(width_of(f.type) for f in t.fields if not isinstance(f.type, Varbit))
    if isinstance(t, Stack):
        return width_of(t.element) * t.size
    raise TypeError(f"type {t} has no fixed width")
