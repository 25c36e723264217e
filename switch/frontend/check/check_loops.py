"""Loops: the three-clause ``for``, ``for (T x in collection)`` over a range or a header
stack, and ``break``/``continue``.

Loops are allowed where P4_16 1.2.5 allows them: in actions, functions and control
bodies, not in parser states. Two forms the spec allows are errors, as in p4c: a
condition with side effects (a call, other than ``isValid()``) and iteration over a
list expression."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check.check_expressions import is_unknown
from switch.frontend.check.context import UNKNOWN
from switch.frontend.check.walk_expressions import walk_expression

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker


def check_for(chk: Checker, s: A.For) -> A.Stmt:
    _not_in_parser(chk, s)
    s.init = [chk.stmt(x) for x in s.init]
    cond = chk.expr(s.cond)
    s.cond = cond
    if not is_unknown(cond.type) and not isinstance(cond.type, T.Bool):
        chk.error_at(cond, f"{chk.text(cond)}: condition must be a bool, not {cond.type}")
    elif _has_side_effects(cond):
        chk.error_at(cond, "Side effects in for condition not supported", kind="invalid")
    s.updates = [chk.stmt(x) for x in s.updates]
    with chk.inside(loops=chk.loops + 1):
        s.body = chk.stmt(s.body)
    return s


def check_for_in(chk: Checker, s: A.ForIn) -> A.Stmt:
    _not_in_parser(chk, s)
    coll = s.collection
    if isinstance(coll, A.Binary) and coll.op == "..":
        s.collection = _range(chk, coll, chk.resolve(s.var.type_ref))
    else:
        s.collection = _elements(chk, coll, chk.resolve(s.var.type_ref), s.var)
    chk.stmt(A.DeclStmt(s.var.pos, s.var))
    with chk.inside(loops=chk.loops + 1):
        s.body = chk.stmt(s.body)
    return s


def check_jump(chk: Checker, s: A.Break | A.Continue) -> A.Stmt:
    if chk.loops == 0:
        word = "break" if isinstance(s, A.Break) else "continue"
        chk.ctx.error(s.pos, f"{word}: only allowed inside a 'for' loop", len(word))
    return s


def _not_in_parser(chk: Checker, s: A.For | A.ForIn) -> None:
    if chk.in_parser:
        chk.ctx.error(s.pos, "for: loops are not allowed in a parser", 3)


def _range(chk: Checker, r: A.Binary, t: T.Type) -> A.Expr:
    """``lo .. hi``: both bounds take the type of the loop variable."""
    lo, hi = chk.expr(r.left), chk.expr(r.right)
    r.type = UNKNOWN
    if is_unknown(t, lo.type, hi.type):
        return r
    if not isinstance(t, T.Bits):
        chk.error_at(r, f"{chk.text(r)}: a range can only be iterated with a bit<W> or "
                     f"int<W> variable, not {t}")
        return r
    r.left, r.right = chk.coerce(lo, t), chk.coerce(hi, t)
    r.type = t
    return r


def _elements(chk: Checker, coll: A.Expr, t: T.Type, var: A.VarDecl) -> A.Expr:
    """A list expression (each element converted to the loop variable's type) or a
    header stack whose element type is the loop variable's type."""
    if isinstance(coll, A.ListExpr):
        elements = [chk.expr(x) for x in coll.elements]
        if is_unknown(t, *(x.type for x in elements)):
            coll.type = UNKNOWN
            return coll
        listed = T.Tuple(tuple(x.type or UNKNOWN for x in elements))
        chk.error_at(coll, "Typechecking does not support iteration over this collection of "
                     f"type {listed}", kind="unsupported")
        coll.elements = [chk.coerce(x, t) for x in elements]
        coll.type = T.Tuple(tuple(t for _ in elements))
        return coll
    c = chk.expr(coll)
    if is_unknown(c.type, t):
        return c
    if isinstance(c.type, T.Stack):
        if c.type.element != t:
            chk.error_at(c, f"{var.name}: the elements of {chk.text(c)} have type "
                         f"{c.type.element}, not {t}")
        return c
    chk.error_at(c, f"{chk.text(c)}: cannot iterate over a value of type {c.type}; use a "
                 "range (lo .. hi) or a header stack")
    return c



def _has_side_effects(e: A.Expr) -> bool:
    """Whether evaluating ``e`` calls anything but ``isValid()``."""
    return any(isinstance(x, A.Call) and not (isinstance(x.target, A.CallBuiltin)
                                              and x.target.method == "isValid")
               for x in walk_expression(e))
