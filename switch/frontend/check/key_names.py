"""The control-plane names of table keys, as p4c's front end derives them.

A key without ``@name`` is named after its expression when the expression is simple: a
name (``meta.x``), a field (``hdr.ipv4.dst_addr``; a field's own ``@name`` replaces its
name), a stack element (``hdr.s[0]``), a slice (``meta.x[7:0]``), a constant, ``&`` of
two such expressions, and ``h.isValid()``, which P4Runtime spells ``h.$valid$``.
Constants are printed without their width, in the base they were written in (``0xf0``,
``0b1010``, ``0o17``, decimal for folded values). Any other key needs a ``@name``.
"""

from __future__ import annotations

import re

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check.context import annotation_string

_BASE_PREFIX = re.compile(r"0([xXbBoOdD])")
_BASES = {"x": (16, "0x"), "b": (2, "0b"), "o": (8, "0o"), "d": (10, "")}


def key_name(k: A.KeyElement) -> str | None:
    """The P4Info name of a (checked) table key, or None when its expression is too
    complex to name and it has no ``@name``."""
    given = annotation_string(k.annotations, "name")
    if given is not None:
        return given
    return expression_name(k.expr)


def expression_name(e: A.Expr) -> str | None:
    if isinstance(e, A.Name):
        return ("." if e.top_level else "") + e.name
    if isinstance(e, A.Member):
        field = _field_name(e)
        if field.startswith("."):
            return field[1:]
        base = expression_name(e.expr)
        return f"{base}.{field}" if base is not None else None
    if isinstance(e, A.Index):
        base, index = expression_name(e.expr), expression_name(e.index)
        return f"{base}[{index}]" if base is not None and index is not None else None
    if isinstance(e, A.Slice):
        parts = [expression_name(x) for x in (e.expr, e.hi, e.lo)]
        if None in parts:
            return None
        return f"{parts[0]}[{parts[1]}:{parts[2]}]"
    if isinstance(e, A.IntLit):
        return constant_text(e)
    if isinstance(e, A.Binary) and e.op == "&":
        left, right = expression_name(e.left), expression_name(e.right)
        return f"{left} & {right}" if left is not None and right is not None else None
    if (isinstance(e, A.Call) and not e.args and isinstance(e.target, A.CallBuiltin)
            and e.target.method == "isValid"):
        base = expression_name(e.target.receiver)
        return f"{base}.$valid$" if base is not None else None
    return None


def constant_text(e: A.IntLit) -> str:
    """An integer constant as p4c prints it in key names: no width, its written base."""
    digits = re.sub(r"^[0-9]+[ws]", "", e.text.replace("_", ""))
    m = _BASE_PREFIX.match(digits)
    base, prefix = _BASES[m.group(1).lower()] if m else (10, "")
    value = e.value
    sign = "-" if value < 0 else ""
    value = abs(value)
    if base == 10:
        return f"{sign}{value}"
    body = {16: f"{value:x}", 2: f"{value:b}", 8: f"{value:o}"}[base]
    return f"{sign}{prefix}{body}"


def _field_name(e: A.Member) -> str:
    """A field's control-plane name: its ``@name`` when it has one."""
    t = e.expr.type
    if isinstance(t, (T.Header, T.Struct, T.HeaderUnion)):
        decl = getattr(t, "decl", None)
        for f in getattr(decl, "fields", []):
            if f.name == e.name:
                given = annotation_string(f.annotations, "name")
                if given is not None:
                    return given
    return e.name
