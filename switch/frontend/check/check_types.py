"""Pass 2: type checking with constant folding, declaration by declaration.

The ``Checker`` walks the top-level declarations in order. The rules live in sibling
modules, one per kind of construct (``check_expressions``, ``check_calls``,
``check_statements``, ``check_tables``, ``check_parsers``, ``check_declarations``); the
checker holds what they share: the context, where in the program the walk is, and the
entry points they call on each other.

Expressions are rewritten as they are checked (an untyped constant becomes a typed
literal, ``E.member`` an ``EnumValue``, a constant expression its value), so every
checking function returns the expression that replaces its argument."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import (
    check_calls,
    check_declarations,
    check_expressions,
    check_statements,
)
from switch.frontend.check.context import Context, Unknown
from switch.frontend.check.fold_constants import is_constant
from switch.frontend.check.print_expressions import expr_text
from switch.frontend.check.resolve_types import resolve_type


class Checker:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # where the walk is
        self.block: A.ParserDecl | A.ControlDecl | None = None
        self.action: A.ActionDecl | None = None
        self.function: A.FunctionDecl | None = None
        self.table: A.TableDecl | None = None
        self.in_state = False
        self.allow_action_run = False
        self.loops = 0  # how many `for` loops enclose the statement being checked
        # while a generic type is specialized: its type parameters' arguments, keyed by
        # (id of the generic declaration, parameter name)
        self.type_args: dict[tuple[int, str], T.Type] = {}

    # ---------------------------------------------------------------- walking

    def run(self) -> None:
        for d in self.ctx.tree.decls:
            check_declarations.check_top_level(self, d)

    @contextmanager
    def inside(self, **where: object) -> Iterator[None]:
        """Temporarily set attributes describing the enclosing construct."""
        saved = {k: getattr(self, k) for k in where}
        for k, v in where.items():
            setattr(self, k, v)
        try:
            yield
        finally:
            for k, v in saved.items():
                setattr(self, k, v)

    @property
    def in_parser(self) -> bool:
        return isinstance(self.block, A.ParserDecl)

    # ----------------------------------------------------------- entry points

    def expr(self, e: A.Expr) -> A.Expr:
        return check_expressions.check_expr(self, e)

    def coerce(
        self,
        e: A.Expr,
        target: T.Type,
        message: Callable[[A.Expr, T.Type, T.Type], str] | None = None,
        assigned: bool = False,
    ) -> A.Expr:
        return check_expressions.coerce(self, e, target, message, assigned)

    def call(self, c: A.Call) -> A.Expr:
        return check_calls.check_call(self, c)

    def stmt(self, s: A.Stmt) -> A.Stmt:
        return check_statements.check_stmt(self, s)

    def resolve(self, ref: A.TypeRef | None) -> T.Type:
        return resolve_type(self, ref)

    def const_expr(self, e: A.Expr) -> A.Expr:
        """Check ``e`` and require it to fold to a constant; reports otherwise."""
        out = self.expr(e)
        if not is_constant(out) and not isinstance(out.type, Unknown):
            self.ctx.error(out.pos, f"{self.text(out)}: expression must be a compile-time "
                           "constant", len(self.text(out)))
        return out

    def const_int(self, e: A.Expr, target: T.Type | None = None) -> int | None:
        """The integer value of a compile-time constant (``target`` converts it first)."""
        out = self.const_expr(e)
        if target is not None:
            out = self.coerce(out, target)
        if isinstance(out, A.IntLit):
            return out.value
        if not isinstance(out.type, Unknown) and is_constant(out):
            self.ctx.error(out.pos, f"{self.text(out)}: expected an integer constant",
                           len(self.text(out)))
        return None

    def text(self, e: A.Expr | None) -> str:
        return expr_text(e)

    def decl_error(self, decl: A.Declaration, message: str, kind: str = "") -> None:
        """Report ``message`` at the name of ``decl``."""
        self.ctx.error(self.ctx.name_pos(decl), message, max(1, len(decl.name)), kind)

    def error_at(self, e: A.Expr, message: str, kind: str = "") -> None:
        """Report ``message`` with a caret under the whole of ``e`` (``kind``: p4c's error
        class, for the errors p4c classifies)."""
        self.ctx.error(e.pos, message, max(1, len(self.text(e))), kind)
