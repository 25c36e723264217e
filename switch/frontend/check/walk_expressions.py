"""The direct subexpressions of an expression, for passes that look through a checked
tree (the loop and target checks)."""

from __future__ import annotations

from collections.abc import Iterator

from switch.frontend import ast as A


def subexpressions(e: A.Expr) -> list[A.Expr]:
    """The operands of ``e``, in evaluation order (a call's arguments as written)."""
    if isinstance(e, A.Binary):
        return [e.left, e.right]
    if isinstance(e, A.Unary | A.Cast | A.Member):
        return [e.expr]
    if isinstance(e, A.Slice):
        return [e.expr, e.hi, e.lo]
    if isinstance(e, A.Mux):
        return [e.cond, e.then, e.other]
    if isinstance(e, A.Index):
        return [e.expr, e.index]
    if isinstance(e, A.Call):
        return [e.callee, *(a.value for a in e.args if a.value is not None)]
    if isinstance(e, A.ListExpr):
        return list(e.elements)
    if isinstance(e, A.StructExpr):
        return [x for _, x in e.fields]
    return []


def walk_expression(e: A.Expr) -> Iterator[A.Expr]:
    """``e`` and every expression inside it, parents before their operands."""
    yield e
    for x in subexpressions(e):
        yield from walk_expression(x)
