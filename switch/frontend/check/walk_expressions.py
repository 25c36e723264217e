"""Walks over a checked tree, for the passes that look through it (the loop and
target checks, P4Info): the direct subexpressions of an expression, and every syntax
node under a node."""

from __future__ import annotations

import dataclasses
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


# The fields of syntax nodes that are references the checker filled in (declarations,
# types, call targets), not syntax below the node.
_REFERENCE_FIELDS = frozenset({"pos", "type", "decl", "resolved", "target", "action",
                               "resolved_args", "fqn", "annotations"})
_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a syntax node class that hold the syntax below it."""
    names = _FIELD_CACHE.get(cls)
    if names is None:
        # a DeclStmt's decl is the local it declares (with its initializer)
        names = tuple(f.name for f in dataclasses.fields(cls)
                      if f.name not in _REFERENCE_FIELDS
                      or (cls is A.DeclStmt and f.name == "decl"))
        _FIELD_CACHE[cls] = names
    return names


def walk_syntax(node: object) -> Iterator[A.Node]:
    """Every syntax node under ``node`` (itself included; a list of nodes is walked in
    turn), in source order."""
    if isinstance(node, A.Node):
        yield node
        for name in child_fields(type(node)):
            yield from walk_syntax(getattr(node, name, None))
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from walk_syntax(item)


def calls_in(node: object) -> Iterator[A.Call]:
    for n in walk_syntax(node):
        if isinstance(n, A.Call):
            yield n
