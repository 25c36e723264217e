"""State shared by the checking passes of one compilation."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.diagnostics import Diagnostics

# The errors core.p4 declares, in the order that fixes their codes.
CORE_ERRORS = (
    "NoError",
    "PacketTooShort",
    "NoMatch",
    "StackOutOfBounds",
    "HeaderTooShort",
    "ParserTimeout",
    "ParserInvalidArgument",
)


@dataclass(eq=False)
class TypeParam:
    """A type parameter (``T`` in ``extern register<T>``) as a scope entry."""

    name: str
    owner: object
    pos: A.Pos = A.NOWHERE


@dataclass(frozen=True, eq=False, slots=True)
class TypeVar(T.Type):
    """A type parameter inside a generic signature; bound by inference at each use.
    Identity is the declaring ``TypeParam``."""

    param: TypeParam

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeVar) and other.param is self.param

    def __hash__(self) -> int:
        return id(self.param)

    def __str__(self) -> str:
        return self.param.name


@dataclass(frozen=True, slots=True)
class Unknown(T.Type):
    """The type of an expression that already has an error: compatible with every type,
    so that one mistake is reported once."""

    def __str__(self) -> str:
        return "<error>"


UNKNOWN = Unknown()


@dataclass(frozen=True, slots=True)
class DefaultValueType(T.Type):
    """The type of ``...`` (and of ``{#}``) before the context gives it one."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class UnknownStruct(T.Type):
    """The type of a named initializer ``{a = 1, b = x}`` before the context gives it
    a struct or header type."""

    fields: tuple[T.FieldType, ...]

    def __str__(self) -> str:
        return "{" + ", ".join(f"{f.name}: {f.type}" for f in self.fields) + "}"


@dataclass(frozen=True, slots=True)
class StateType(T.Type):
    """The type of a parser state name."""

    def __str__(self) -> str:
        return "state"


@dataclass(frozen=True, slots=True)
class TypeOfType(T.Type):
    """The type of a type name used in expression position (``HashAlgorithm`` in
    ``HashAlgorithm.crc16`` before the member is resolved)."""

    of: T.Type

    def __str__(self) -> str:
        return f"type {self.of}"


@dataclass(frozen=True, slots=True)
class SetType(T.Type):
    """The type of a keyset expression (``a &&& m``, ``lo .. hi``)."""

    element: T.Type

    def __str__(self) -> str:
        return f"set<{self.element}>"


@dataclass(frozen=True, slots=True)
class TableType(T.Type):
    name: str

    def __str__(self) -> str:
        return f"table {self.name}"


@dataclass(frozen=True, slots=True)
class ActionType(T.Type):
    name: str

    def __str__(self) -> str:
        return f"action {self.name}"


@dataclass(frozen=True, slots=True)
class FunctionType(T.Type):
    """The type given to a callee expression (a function, method or extern function)."""

    name: str

    def __str__(self) -> str:
        return f"function {self.name}"


@dataclass(eq=False)
class Context:
    """What the passes share: the diagnostics, the source text (for positions of
    things the syntax tree does not locate), the resolution side tables and the
    program-wide tables (errors, match kinds, declared types)."""

    diags: Diagnostics
    tree: A.SourceFile
    text: str = ""
    # resolve_names: NamedTypeRef -> the declaration (or TypeParam) it names
    type_decls: dict[int, object] = field(default_factory=dict)
    # resolve_names: Name -> every overload visible under that name (when more than one)
    overloads: dict[int, list[object]] = field(default_factory=dict)
    # resolve_names: the scope each parser's states live in (state name -> state)
    states: dict[int, dict[str, A.ParserState]] = field(default_factory=dict)
    # the declaration a Name, type or state refers to, keyed by id(decl): the type
    decl_types: dict[int, T.Type] = field(default_factory=dict)
    # the specializations of generic headers, structs and unions made so far, keyed by
    # id(decl) and the type arguments' text
    specializations: dict[tuple[int, tuple[str, ...]], T.Type] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    match_kinds: list[str] = field(default_factory=list)
    # every ConstDecl's folded value
    const_values: dict[int, A.Expr] = field(default_factory=dict)
    # types passed to digest<T>, in first-use order (the call sites are remembered
    # so that instantiation can keep only the ones in the instantiated blocks)
    digest_calls: list[tuple[A.Call, T.Type]] = field(default_factory=list)
    # the type arguments a call's own type parameters were bound to (by name)
    call_type_args: dict[int, dict[str, T.Type]] = field(default_factory=dict)
    # folded constructor arguments of instantiations (and of package block arguments),
    # in parameter order
    ctor_args: dict[int, list[A.Expr | None]] = field(default_factory=dict)
    # extern instances created by constructor calls in table properties
    inline_instances: dict[int, A.Instantiation] = field(default_factory=dict)
    # the enclosing declaration of every table, action, instantiation and value set
    owners: dict[int, object] = field(default_factory=dict)
    _line_starts: list[int] = field(default_factory=list)

    # ----------------------------------------------------------------- positions

    def offset(self, pos: A.Pos) -> int:
        """Character offset of ``pos`` in the preprocessed text."""
        if not self._line_starts:
            starts = [0]
            for m in re.finditer("\n", self.text):
                starts.append(m.end())
            self._line_starts = starts
        if pos.line < 1 or pos.line > len(self._line_starts):
            return -1
        return self._line_starts[pos.line - 1] + pos.col - 1

    def pos_at(self, offset: int) -> A.Pos:
        if not self._line_starts:
            self.offset(A.Pos(1, 1))
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return A.Pos(lo + 1, offset - self._line_starts[lo] + 1)

    def find_after(self, pos: A.Pos, pattern: str, group: int = 0) -> A.Pos:
        """Position of the first match of ``pattern`` at or after ``pos`` (``pos``
        itself when the text does not contain it)."""
        start = self.offset(pos)
        if start < 0 or not self.text:
            return pos
        m = re.compile(pattern).search(self.text, start)
        if m is None:
            return pos
        return self.pos_at(m.start(group))

    def name_pos(self, decl: A.Declaration | A.Field) -> A.Pos:
        """The position of a declaration's name (declarations are located at their
        first token, usually a keyword or a type)."""
        if not decl.name:
            return decl.pos
        return self.find_after(decl.pos, r"(?<![\w.])" + re.escape(decl.name) + r"(?!\w)")

    # ------------------------------------------------------------------ reports

    def error(self, pos: A.Pos | None, message: str, length: int = 1, kind: str = "",
              related: tuple[A.Pos, int] | None = None) -> None:
        self.diags.error(pos, message, length, kind, related)

    def warning(self, pos: A.Pos | None, message: str, length: int = 1,
                kind: str = "") -> None:
        self.diags.warning(pos, message, length, kind)

    def unsupported(self, pos: A.Pos | None, what: str, length: int = 1) -> None:
        self.diags.unsupported(pos, what, length)


def annotation(annotations: list[A.Annotation], name: str) -> A.Annotation | None:
    for a in annotations:
        if a.name == name:
            return a
    return None


def annotation_string(annotations: list[A.Annotation], name: str) -> str | None:
    """The string argument of ``@name("...")``-like annotations."""
    a = annotation(annotations, name)
    if a is None:
        return None
    if a.body and isinstance(a.body[0], A.StringLit):
        return a.body[0].value
    raw = a.raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return raw[1:-1]
    return None
