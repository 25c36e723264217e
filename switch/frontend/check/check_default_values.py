"""Every ``...`` and ``{#}`` must have been given a type by its context.

``check_types`` gives a default value the type the context expects (a declaration, an
assignment, a parameter, an initializer's field). Where nothing does (both sides of a
comparison, an argument bound to a type parameter) the value stays untyped; this pass
reports it, with its position, instead of leaving it to the engine.
"""

from __future__ import annotations

import dataclasses

from switch.frontend import ast as A
from switch.frontend.check.context import Context, DefaultValueType

# fields that hold no syntax: types (and a name's resolved declaration, visited where
# it is declared)
_SKIPPED = frozenset({"type", "resolved"})


def check_default_values(ctx: Context) -> None:
    untyped: list[A.Dots | A.InvalidHeader] = []
    seen: set[int] = set()
    stack: list[object] = [ctx.tree]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, (A.Dots, A.InvalidHeader)):
            if isinstance(node.type, DefaultValueType):
                untyped.append(node)
            continue
        for f in dataclasses.fields(node):  # type: ignore[arg-type]
            if f.name in _SKIPPED or (f.name == "decl" and isinstance(node, A.Name)):
                continue
            _push(stack, getattr(node, f.name, None))
    for e in sorted(untyped, key=lambda e: (e.pos.line, e.pos.col)):
        text = "..." if isinstance(e, A.Dots) else "{#}"
        ctx.error(e.pos, f"{text}: cannot infer the type of this default value", len(text))


def _push(stack: list[object], value: object) -> None:
    if isinstance(value, A.Node):
        stack.append(value)
    elif isinstance(value, (list, tuple)):
        for x in value:
            _push(stack, x)
