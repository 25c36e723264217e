"""Which aggregate arguments of a call must really be copied in and out.

P4_16 passes arguments by copy-in/copy-out: an ``in`` or ``inout`` argument is copied
into the parameter when the call starts, and ``out`` and ``inout`` parameters are copied
back, left to right, when it ends; a write the callee makes to the same storage through
another path is overwritten by the copy-out (as BMv2 does it too).

Scalars are always copied. A header, struct, union or stack is passed by reference
when no one can tell the difference, and copied otherwise: when the callee can reach
the argument's storage in another way (an action reaches the parameters and locals of
its control; a function, parser or control only its own parameters), or when another
argument of the same call overlaps it and one of the two is written (``out``/``inout``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from switch.frontend import ast as A

# one step of an l-value path: a member name, a constant index, or None (unknown)
Step = str | int | None

_SKIPPED = frozenset({"annotations"})


def storage(e: A.Expr) -> list[tuple[int, list[Step]]]:
    """The storage ``e`` may denote or read, as (id of the root declaration, path):
    one entry for an l-value (``hdr.s[1].a`` is (hdr, ['s', 1, 'a'])), and for any
    other expression one entry per variable or parameter it mentions (path [None]:
    anything under that root)."""
    path: list[Step] = []
    x: A.Expr = e
    while True:
        if isinstance(x, A.Member):
            path.append(x.name)
            x = x.expr
        elif isinstance(x, A.Index):
            path.append(x.index.value if isinstance(x.index, A.IntLit) else None)
            x = x.expr
        elif isinstance(x, A.Slice):
            x = x.expr
        else:
            break
    if isinstance(x, A.Name) and _is_storage(x.decl):
        return [(id(x.decl), path[::-1])]
    return [(id(n.decl), [None]) for n in names_in(e) if _is_storage(n.decl)]


def _is_storage(decl: object) -> bool:
    return isinstance(decl, (A.Param, A.VarDecl))


def _paths_overlap(a: list[Step], b: list[Step]) -> bool:
    """Whether two paths from the same root may share storage: one is a prefix of the
    other, up to unknown steps."""
    for x, y in zip(a, b, strict=False):
        if x is None or y is None:
            return True
        if x != y:
            return False
    return True


def may_overlap(a: A.Expr, b: A.Expr) -> bool:
    return any(ra == rb and _paths_overlap(pa, pb)
               for ra, pa in storage(a) for rb, pb in storage(b))


def copied_arguments(params: Sequence[A.Param], args: Sequence[A.Expr | None],
                     aggregate: Sequence[bool], reach: set[int]) -> set[int]:
    """The indices of the aggregate parameters whose arguments must be copied.
    ``aggregate[i]`` says whether parameter i is passed by reference at all; ``reach``
    holds the ids of the declarations whose storage the callee's body can reach by
    itself."""
    out: set[int] = set()
    for i, (p, a) in enumerate(zip(params, args, strict=False)):
        if a is None or not aggregate[i]:
            continue
        if any(root in reach for root, _ in storage(a)):
            out.add(i)
            continue
        for j, (q, b) in enumerate(zip(params, args, strict=False)):
            written = p.direction in ("out", "inout") or q.direction in ("out", "inout")
            if j != i and b is not None and written and may_overlap(a, b):
                out.add(i)
                break
    return out


def action_reach(decl: A.ActionDecl) -> set[int]:
    """The declarations outside ``decl`` (its control's parameters and locals) whose
    storage the action's body reads or writes, also through the actions it calls."""
    return _reach(decl, set())


def _reach(decl: A.ActionDecl, seen: set[int]) -> set[int]:
    seen.add(id(decl))
    own = {id(p) for p in decl.params} | {
        id(n) for n in nodes(decl.body) if isinstance(n, A.VarDecl)}
    out: set[int] = set()
    for n in nodes(decl.body):
        if isinstance(n, A.Name) and _is_storage(n.decl) and id(n.decl) not in own:
            out.add(id(n.decl))
        elif isinstance(n, A.Call) and isinstance(n.target, A.CallAction) \
                and id(n.target.action) not in seen:
            out |= _reach(n.target.action, seen)
    return out


def names_in(node: object) -> Iterator[A.Name]:
    return (n for n in nodes(node) if isinstance(n, A.Name))


def nodes(node: object) -> Iterator[object]:
    """Every syntax-tree node under ``node`` (not into declarations through references,
    nor into the callee of a call: a called action's body is not part of the caller)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (list, tuple)):
            stack.extend(n)
            continue
        if not isinstance(n, A.Node):
            continue
        yield n
        if isinstance(n, (A.Name, A.TypeRef)):
            continue
        for f in dataclasses.fields(n):
            if f.name in _SKIPPED or (f.name == "target" and isinstance(n, A.Call)):
                continue
            stack.append(getattr(n, f.name))
