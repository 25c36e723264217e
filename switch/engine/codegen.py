"""The core of code generation: the line emitter, the module being built and the
per-function generator state (scopes, temporaries, the block instance being compiled).

Expressions (``codegen_expr``), statements/tables/actions (``codegen_stmt``) and parser
states (``codegen_parser``) are mixins of ``FuncGen``; ``compiler`` drives them.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.program import BlockInstance, Program

if TYPE_CHECKING:
    from switch.engine.layout import TypeGen


class UnsupportedError(Exception):
    """A construct the engine cannot run; ``pos`` locates it in the source."""

    def __init__(self, what: str, pos: A.Pos | None = None):
        super().__init__(what)
        self.what = what
        self.pos = pos


class Emitter:
    """Lines of Python at an indentation level; ``capture`` collects lines aside so
    they can be placed under a condition."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ind = 0

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    @contextmanager
    def indent(self) -> Iterator[None]:
        self.ind += 1
        start = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == start:
                self.lines.append("    " * self.ind + "pass")
            self.ind -= 1

    @contextmanager
    def capture(self) -> Iterator[list[str]]:
        saved = self.lines
        out: list[str] = []
        self.lines = out
        try:
            yield out
        finally:
            self.lines = saved

    def extend(self, lines: list[str], extra_indent: int = 0) -> None:
        pad = "    " * extra_indent
        self.lines.extend(pad + ln for ln in lines)


@dataclass
class StmtInfo:
    file: str
    line: int
    text: str


class ModuleBuilder:
    """The generated module: global bindings and source chunks."""

    def __init__(self, program: Program, types: TypeGen, trace: bool):
        self.program = program
        self.types = types
        self.trace = trace
        self.globals: dict[str, Any] = {}
        self._ids: dict[int, str] = {}
        self._names: set[str] = set()
        self.functions: list[str] = []
        self.stmts: list[StmtInfo] = []
        self.counter = itertools.count()
        self.function_names: dict[int, str] = {}  # id(FunctionDecl) -> python name
        self.pending_functions: list[A.FunctionDecl] = []
        # lane fusion (see codegen_lanes): on unless tracing or turned off; the runs of
        # each (block fqn, id(statement list))
        self.fuse_lanes = not trace
        self.lane_groups: dict[tuple[str, int], Any] = {}
        # (parser block fqn, out parameter) -> the global name of its partial constructor
        self.out_factories: dict[tuple[str, str], str] = {}
        # block fqn -> how many names in the block refer to each declaration (by id)
        self.lane_references: dict[str, Counter[int]] = {}

    def bind(self, obj: Any, hint: str) -> str:
        """A global name for ``obj`` in the generated module (one per object)."""
        key = id(obj)
        name = self._ids.get(key)
        if name is not None:
            return name
        from switch.engine.layout import ident

        base = "_g_" + ident(hint)
        name = base
        i = 1
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        self._ids[key] = name
        self.globals[name] = obj
        return name

    def stmt_id(self, pos: A.Pos) -> int:
        src = self.program.source
        file, line, text = "<unknown>", pos.line, ""
        try:
            o = src.origin(pos.line)  # type: ignore[attr-defined]
            file, line = o.file, o.line
            text = src.source_line(pos.line).strip()  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - positions outside the source are fine
            pass
        self.stmts.append(StmtInfo(str(file), int(line), text))
        return len(self.stmts) - 1

    def fresh(self, base: str) -> str:
        return f"{base}{next(self.counter)}"


class ArchHooks(Protocol):
    """What an architecture supplies to the code generator: code for its externs."""

    def extern_function(self, g: Any, call: A.Call, fn: A.ExternFunctionDecl) -> str | None:
        ...

    def extern_method(self, g: Any, call: A.Call, target: A.CallExternMethod,
                      instance: Any) -> str | None:
        ...


@dataclass
class Scope:
    names: dict[int, str] = field(default_factory=dict)


class ProgramLookups:
    """What a code generator of either engine (Python here, C in ``switch.native``)
    looks up in the checked program for the block it compiles: instance and action
    names, expression types, the actions a ``switch`` on ``action_run`` names."""

    program: Program
    block: BlockInstance | None

    def unsupported(self, what: str, node: Any = None) -> UnsupportedError:
        return UnsupportedError(what, getattr(node, "pos", None))

    def instance_fqn(self, decl: object) -> str | None:
        """The fqn of the table/action/extern instance that ``decl`` denotes in the
        block being compiled (or at top level)."""
        names = self.program.instance_names
        if self.block is not None:
            fqn = names.get((id(decl), self.block.fqn))
            if fqn is not None:
                return fqn
        for (did, _bf), fqn in names.items():
            if did == id(decl) and (self.block is None or _bf == ""):
                return fqn
        fqn = getattr(decl, "fqn", "")
        return fqn or None

    def action_fqn(self, decl: A.ActionDecl) -> str:
        fqn = self.instance_fqn(decl)
        if fqn and fqn in self.program.actions:
            return fqn
        for f, ai in self.program.actions.items():
            if ai.decl is decl:
                return f
        return decl.name

    def ty(self, e: A.Expr) -> T.Type:
        """The type of ``e`` (literals without one typed from their width)."""
        t = e.type
        if t is None:
            if isinstance(e, A.IntLit):
                return T.Bits(e.width, e.signed) if e.width else T.InfInt()
            if isinstance(e, A.BoolLit):
                return T.Bool()
            raise self.unsupported("expression without a type", e)
        return strip(t)

    def action_run_labels(self, s: A.Switch, table: A.TableDecl,
                          action_index: dict[str, int]) -> dict[int, str]:
        """The index in ``action_index`` of the action each non-default case of a
        ``switch (table.apply().action_run)`` names, by ``id`` of the case."""
        labels: dict[int, str] = {}
        for c in s.cases:
            if isinstance(c.label, A.DefaultExpr):
                continue
            ad = getattr(c.label, "decl", None)
            idx = None
            for ref in table.actions:
                act = ref.action
                if act is ad and isinstance(act, A.ActionDecl):
                    idx = action_index.get(self.action_fqn(act))
            if idx is None:
                raise self.unsupported("switch label that is not an action of the table", c)
            labels[id(c)] = str(idx)
        return labels


class FuncGenBase(ProgramLookups):
    """State shared by the code generation mixins for one generated function."""

    def __init__(self, mod: ModuleBuilder, hooks: ArchHooks, block: BlockInstance | None,
                 kind: str):
        self.mod = mod
        self.program = mod.program
        self.types = mod.types
        self.hooks = hooks
        self.block = block
        self.kind = kind  # "control", "parser", "function"
        self.em = Emitter()
        self.scopes: list[Scope] = [Scope()]
        # how ``return`` is compiled inside the innermost construct:
        # ("break",) inside an inlined action, ("loop", flag) inside a loop of one
        # (see codegen_loops), ("return", extra) in functions/controls
        self.return_stack: list[tuple[str, str]] = []
        self.direct_meter_var: dict[str, str] = {}  # direct_meter fqn -> local with the colour
        self.packet_out: str | None = None

    # --------------------------------------------------------------- names

    def tmp(self, base: str = "_t") -> str:
        return self.mod.fresh(base)

    def declare(self, decl: object, hint: str) -> str:
        from switch.engine.layout import ident

        name = self.mod.fresh(f"v_{ident(hint)}_")
        self.scopes[-1].names[id(decl)] = name
        return name

    def bind_name(self, decl: object, code: str) -> None:
        self.scopes[-1].names[id(decl)] = code

    def lookup(self, decl: object) -> str | None:
        for s in reversed(self.scopes):
            v = s.names.get(id(decl))
            if v is not None:
                return v
        return None

    @contextmanager
    def scope(self) -> Iterator[None]:
        self.scopes.append(Scope())
        try:
            yield
        finally:
            self.scopes.pop()
