"""Loops: ``for (init; cond; updates)`` and ``for (T x in collection)`` as Python
loops, with ``break`` and ``continue``.

P4 ``break``/``continue`` become Python's: the P4 loop is always the innermost Python
loop around them (an inlined action's ``while True`` wrapper only ever encloses the
action's own body). A ``return`` inside a loop of an inlined action has to leave the
action's wrapper too: it sets a flag and breaks, and each loop it crosses breaks again
when the flag is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.engine.codegen_expr import ExprMixin, is_aggregate
from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T


def _jumps(s: A.Stmt | None, kind: type) -> bool:
    """Whether ``s`` contains a ``break``/``continue`` (``kind``) of the loop around it
    (nested loops have their own)."""
    if s is None:
        return False
    if isinstance(s, kind):
        return True
    if isinstance(s, A.Block):
        return any(_jumps(x, kind) for x in s.stmts)
    if isinstance(s, A.If):
        return _jumps(s.then, kind) or _jumps(s.other, kind)
    if isinstance(s, A.Switch):
        return any(_jumps(c.body, kind) for c in s.cases)
    return False


def _returns(s: A.Stmt | None) -> bool:
    if s is None:
        return False
    if isinstance(s, A.Return):
        return True
    if isinstance(s, A.Block):
        return any(_returns(x) for x in s.stmts)
    if isinstance(s, A.If):
        return _returns(s.then) or _returns(s.other)
    if isinstance(s, A.Switch):
        return any(_returns(c.body) for c in s.cases)
    if isinstance(s, (A.For, A.ForIn)):
        return _returns(s.body)
    return False


class LoopMixin(ExprMixin):
    if TYPE_CHECKING:
        def stmt(self, s: A.Stmt) -> None: ...

        def local_decl(self, d: A.Declaration) -> None: ...

    def _s_For(self, s: A.For) -> None:
        with self.scope():
            for x in s.init:
                self.stmt(x)
            with self.em.capture() as prelude:
                cond = self.cond(s.cond)
            first = None
            if s.updates and _jumps(s.body, A.Continue):
                # `continue` must still run the updates: run them at the top of every
                # iteration but the first
                first = self.tmp("_first")
                self.em(f"{first} = True")
            with self._loop(s.body):
                if prelude or first:
                    self.em("while True:")
                else:
                    self.em(f"while {cond}:")
                with self.em.indent():
                    if first:
                        self.em(f"if {first}:")
                        self.em(f"    {first} = False")
                        self.em("else:")
                        with self.em.indent():
                            for x in s.updates:
                                self.stmt(x)
                    if prelude or first:
                        self.em.extend(prelude, 1)  # captured outside the loop
                        self.em(f"if not {cond}:")
                        self.em("    break")
                    self.stmt(s.body)
                    if not first:
                        for x in s.updates:
                            self.stmt(x)

    def _s_ForIn(self, s: A.ForIn) -> None:
        coll = s.collection
        t = strip(s.var.type_ref.resolved)  # type: ignore[arg-type]
        with self.scope():
            if isinstance(coll, A.Binary) and coll.op == "..":
                lo = self.expr(coll.left)
                with self.em.capture() as lines:
                    hi = self.expr(coll.right)
                if lines:  # the bounds are evaluated in order, once
                    t_lo = self.tmp("_lo")
                    self.em(f"{t_lo} = {lo}")
                    lo = t_lo
                    self.em.extend(lines)
                source = f"range({lo}, ({hi}) + 1)"
            elif isinstance(coll, A.ListExpr):
                source = "(" + "".join(self.expr(x) + ", " for x in coll.elements) + ")"
            elif isinstance(self.ty(coll), T.Stack):
                source = f"{self.expr(coll)}.elems"
            else:
                raise self.unsupported(f"iteration over a {self.ty(coll)}", coll)
            if is_aggregate(t):
                # the loop variable is a copy of each element
                name = self.declare(s.var, s.var.name)
                self.em(f"{name} = {self.types.default(t)}")
                item = self.tmp("_el")
            else:
                name = item = self.declare(s.var, s.var.name)
            with self._loop(s.body):
                self.em(f"for {item} in {source}:")
                with self.em.indent():
                    if item != name:
                        self.em(f"{name}.assign({item})")
                    self.stmt(s.body)

    def _s_Break(self, s: A.Break) -> None:
        self.em("break")

    def _s_Continue(self, s: A.Continue) -> None:
        self.em("continue")

    def _loop(self, body: A.Stmt) -> _LoopFrame:
        return _LoopFrame(self, body)


class _LoopFrame:
    """Around the code of one loop: sets up the flag by which a ``return`` inside
    leaves an inlined action (see the module docstring)."""

    def __init__(self, g: LoopMixin, body: A.Stmt) -> None:
        self.g = g
        self.flag: str | None = None
        stack = g.return_stack
        if stack and stack[-1][0] in ("break", "loop") and _returns(body):
            mode, flag = stack[-1]
            if mode == "loop":
                self.flag = flag
            else:
                self.flag = g.tmp("_ret")
                g.em(f"{self.flag} = False")

    def __enter__(self) -> None:
        if self.flag is not None:
            self.g.return_stack.append(("loop", self.flag))

    def __exit__(self, *exc: object) -> None:
        if self.flag is not None:
            self.g.return_stack.pop()
            self.g.em(f"if {self.flag}:")
            self.g.em("    break")
