"""Keysets, the sets of values select cases and table entries match: a constant, a
mask ``v &&& m``, a range ``lo .. hi``, ``default``/``_``, or (in a select) a value set.
Values are folded to literals of the key's type; masks and ranges stay ``Binary`` nodes
of literals, typed as sets of the key type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.check_expressions import is_unknown, to_underlying, unknown
from switch.frontend.check.context import SetType

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker


def keyset_element(
    chk: Checker, e: A.Expr, t: T.Type, what: str, allow_value_set: bool = False
) -> A.Expr:
    """Check one element of a keyset against the key type ``t``."""
    if isinstance(e, (A.DefaultExpr, A.DontCare)):
        out = A.DefaultExpr(e.pos)
        out.type = T.DontCareType()
        return out
    if isinstance(e, A.Binary) and e.op in ("&&&", ".."):
        return _set(chk, e, t, what)
    if isinstance(e, A.Name) and isinstance(e.decl, A.ValueSetDecl):
        v = chk.expr(e)
        if not allow_value_set:
            chk.error_at(e, f"{chk.text(e)}: a value_set can only be used in a select")
            return unknown(e)
        if not is_unknown(v.type, t) and isinstance(v.type, SetType) and v.type.element != t:
            elem = v.type.element
            # a struct of one field matches a key of that field's type, as in p4c
            if not (isinstance(elem, T.Struct) and [f.type for f in elem.fields] == [t]):
                chk.error_at(e, f"{chk.text(e)}: value_set of {elem} cannot match a key of "
                             f"type {t}")
                return unknown(e)
        return v
    v = chk.expr(e)
    if is_unknown(v.type, t):
        return v

    def message(x: A.Expr, src: T.Type, want: T.Type) -> str:
        return (f"'{what}' case label '{chk.text(x)}' has type '{src}' which does not match "
                f"the expected type '{want}'")

    v = chk.coerce(v, t, message)
    if not F.is_constant(v) and not is_unknown(v.type):
        chk.error_at(v, f"{chk.text(v)}: keyset values must be compile-time constants")
        return unknown(v)
    return v


def _set(chk: Checker, e: A.Binary, t: T.Type, what: str) -> A.Expr:
    left = chk.expr(e.left)
    right = chk.expr(e.right)
    e.left, e.right = left, right
    if is_unknown(left.type, right.type, t):
        return unknown(e)
    base = t.underlying if isinstance(t, T.SerEnum) else t
    if not isinstance(base, T.Bits):
        chk.error_at(e, f"{e.op}: cannot be applied to a key of type {t}")
        return unknown(e)

    def message(x: A.Expr, src: T.Type, want: T.Type) -> str:
        return (f"'{what}' case label '{chk.text(x)}' has type '{src}' which does not match "
                f"the expected type '{want}'")

    sides = []
    for side in (left, right):
        if isinstance(side.type, T.SerEnum):
            side = to_underlying(side)
        side = chk.coerce(side, base, message)
        if not F.is_constant(side) and not is_unknown(side.type):
            chk.error_at(side, f"{chk.text(side)}: keyset values must be compile-time "
                         "constants")
            return unknown(e)
        sides.append(side)
    e.left, e.right = sides
    e.type = SetType(t)
    return e


def keyset(
    chk: Checker,
    e: A.Expr,
    types: list[T.Type],
    what: str,
    allow_value_set: bool = False,
) -> A.Expr:
    """A whole keyset for ``len(types)`` keys: a single element when there is one key,
    otherwise a tuple of elements (or ``default``/``_`` for all of them, or a value
    set of tuples/structs)."""
    if isinstance(e, (A.DefaultExpr, A.DontCare)):
        return keyset_element(chk, e, T.DontCareType(), what)
    if len(types) == 1:
        if isinstance(e, A.ListExpr) and len(e.elements) == 1:
            e.elements = [keyset_element(chk, e.elements[0], types[0], what, allow_value_set)]
            e.type = T.Tuple((types[0],))
            return e
        return keyset_element(chk, e, types[0], what, allow_value_set)
    if isinstance(e, A.Name) and isinstance(e.decl, A.ValueSetDecl) and allow_value_set:
        v = chk.expr(e)
        if isinstance(v.type, SetType):
            elem = v.type.element
            fields = (
                [f.type for f in elem.fields] if isinstance(elem, T.Struct)
                else list(elem.elements) if isinstance(elem, T.Tuple) else None
            )
            if fields != types:
                chk.error_at(e, f"{chk.text(e)}: value_set of {elem} cannot match keys of "
                             f"types ({', '.join(map(str, types))})")
                return unknown(e)
        return v
    if not isinstance(e, A.ListExpr):
        v = chk.expr(e)
        if not is_unknown(v.type):
            chk.error_at(e, f"{chk.text(e)}: a keyset for {len(types)} keys must be a tuple")
        return unknown(v)
    if len(e.elements) != len(types):
        written = "(" + ", ".join(chk.text(x) for x in e.elements) + ")"
        chk.ctx.error(e.pos, f"{written}: Size of keyset ({len(e.elements)}) must match the "
                     f"number of keys ({len(types)})", len(written))
        return unknown(e)
    e.elements = [keyset_element(chk, x, t, what, allow_value_set)
                  for x, t in zip(e.elements, types, strict=False)]
    e.type = T.Tuple(tuple(types))
    return e
