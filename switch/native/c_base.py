"""The core of C generation: the line emitter, the C types of P4 types and the
per-function state (scopes of local names, temporaries, the block being compiled).

Scalars are held in 64-bit integers: ``bit<W>``, ``bool``, enums and errors as
``u64`` in [0, 2^W), ``int<W>`` as ``i64`` sign-extended, so that an operation masks
(or sign-extends) only where it can leave the range, as the Python engine does.
Headers and structs are C structs (a header's first member is ``valid``); a varbit
field is its bytes and its current width in bits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from switch.engine.codegen import ProgramLookups, UnsupportedError
from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.program import BlockInstance, Program

SCALARS = (T.Bits, T.Bool, T.Error, T.Enum, T.SerEnum)


class CEmitter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ind = 1

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    @contextmanager
    def block(self, head: str) -> Iterator[None]:
        self(head + " {")
        self.ind += 1
        try:
            yield
        finally:
            self.ind -= 1
            self("}")

    @contextmanager
    def capture(self) -> Iterator[list[str]]:
        saved = self.lines
        out: list[str] = []
        self.lines = out
        try:
            yield out
        finally:
            self.lines = saved

    def extend(self, lines: list[str]) -> None:
        self.lines.extend(lines)


def cname(text: str) -> str:
    return re.sub(r"\W", "_", text)


def signed(t: T.Type) -> bool:
    t = strip(t)
    if isinstance(t, T.Bits):
        return t.signed
    if isinstance(t, T.SerEnum):
        return t.underlying.signed
    return False


def width(t: T.Type, node: A.Node | None = None) -> int:
    """The width of a scalar in bits (errors and enums count 32, as serialised)."""
    t = strip(t)
    if isinstance(t, T.Bits):
        w = t.width
    elif isinstance(t, T.Bool):
        w = 1
    elif isinstance(t, T.SerEnum):
        w = t.underlying.width
    elif isinstance(t, (T.Error, T.Enum)):
        w = 32
    else:
        raise UnsupportedError(f"a value of type {t} in the native engine",
                               node.pos if node else None)
    if w > 64:
        raise UnsupportedError(f"{t}: wider than 64 bits", node.pos if node else None)
    return w


def scalar_ctype(t: T.Type, node: A.Node | None = None) -> str:
    width(t, node)
    return "i64" if signed(t) else "u64"


class TypeTable:
    """The C struct declarations of the program's headers and structs."""

    def __init__(self) -> None:
        self.decls: list[str] = []
        self.names: dict[tuple[str, str], str] = {}

    def ctype(self, t: T.Type, node: A.Node | None = None) -> str:
        t = strip(t)
        if isinstance(t, SCALARS):
            return scalar_ctype(t, node)
        if isinstance(t, (T.Header, T.Struct)):
            kind = "header" if isinstance(t, T.Header) else "struct"
            key = (kind, t.name)
            name = self.names.get(key)
            if name is None:
                name = f"{'H' if kind == 'header' else 'St'}_{cname(t.name)}"
                self.names[key] = name
                self._declare(t, name, node)
            return name
        raise UnsupportedError(f"values of type {t} in the native engine",
                               node.pos if node else None)

    def _declare(self, t: T.Header | T.Struct, name: str, node: A.Node | None) -> None:
        members = ["uint8_t valid;"] if isinstance(t, T.Header) else ["uint8_t _pad;"]
        for f in t.fields:
            ft = strip(f.type)
            if isinstance(ft, T.Varbit):
                if not isinstance(t, T.Header):
                    raise UnsupportedError("a varbit outside a header", node.pos if node else None)
                members.append(f"uint8_t f_{f.name}[{(ft.max_width + 7) // 8}];")
                members.append(f"u64 w_{f.name};")
                continue
            if isinstance(t, T.Header) and not isinstance(ft, SCALARS):
                raise UnsupportedError(f"header {t.name}: field {f.name} of type {ft}",
                                       node.pos if node else None)
            members.append(f"{self.ctype(ft, node)} f_{f.name};")
        self.decls.append(f"typedef struct {{ {' '.join(members)} }} {name};")


class FuncState(ProgramLookups):
    """Names and temporaries of one generated C function."""

    def __init__(self, program: Program, types: TypeTable, block: BlockInstance | None,
                 counter: Iterator[int]):
        self.program = program
        self.types = types
        self.block = block
        self.em = CEmitter()
        self.scopes: list[dict[int, str]] = [{}]
        self.counter = counter
        # innermost first: how `return` leaves an inlined action ("goto", label), and
        # what `exit` must copy out before it leaves the block
        self.return_stack: list[str] = []
        self.exit_copyouts: list[list[tuple[A.Expr, str]]] = []

    def tmp(self, base: str = "t") -> str:
        return f"_{base}{next(self.counter)}"

    def declare(self, decl: object, hint: str) -> str:
        name = f"v_{cname(hint)}_{next(self.counter)}"
        self.scopes[-1][id(decl)] = name
        return name

    def bind_name(self, decl: object, code: str) -> None:
        self.scopes[-1][id(decl)] = code

    def lookup(self, decl: object) -> str | None:
        for s in reversed(self.scopes):
            v = s.get(id(decl))
            if v is not None:
                return v
        return None

    @contextmanager
    def scope(self) -> Iterator[None]:
        self.scopes.append({})
        try:
            yield
        finally:
            self.scopes.pop()




__all__ = ["CEmitter", "FuncState", "TypeTable", "UnsupportedError", "cname", "scalar_ctype",
           "signed", "width"]
