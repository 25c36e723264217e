"""What p4c-bm2-ss's back end requires of the program as a whole, beyond its statements
and expressions (``check_bmv2_limits`` walks those, and collects what these rules need),
each with p4c's message and error class:

* the parser's metadata parameter is a struct, its headers parameter a struct of
  headers, header stacks and header unions (``expected``);
* a header type the program has storage of (a field of its headers or metadata, a
  local, a stack element) adds up to whole bytes (``target-error``); one it only
  declares may not;
* a direct meter is read (``m.read(x)``, always into the same place) and attached to
  one applied table with ``meters = m``, and a table it is attached to has an action
  that reads it (``invalid``).
"""

from __future__ import annotations

from collections.abc import Iterable

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.context import Context
from switch.frontend.check.print_expressions import expr_text, type_ref_text
from switch.frontend.program import Program, TableInstance


def parser_parameters(ctx: Context, program: Program) -> None:
    parser = program.pipeline.get("p")
    params = parser.decl.params if parser is not None else []
    if len(params) != 4:
        return
    meta, headers = params[2].type_ref, params[1].type_ref
    if not isinstance(meta.resolved, T.Struct):
        _type_error(ctx, meta, "expected the user metadata type to be a struct")
        return
    t = headers.resolved
    if not isinstance(t, T.Struct):
        _type_error(ctx, headers, "expected type to be a struct")
    elif not all(isinstance(f.type, (T.Header, T.Stack, T.HeaderUnion)) for f in t.fields):
        _type_error(ctx, headers, "the type should be a struct of headers, stacks, or unions")


def _type_error(ctx: Context, ref: A.TypeRef, message: str) -> None:
    text = type_ref_text(ref)
    ctx.error(ref.pos, f"{text}: {message}", len(text), "expected")


def header_widths(ctx: Context, storage: Iterable[T.Type]) -> None:
    """BMv2 holds a header in whole bytes: p4c-bm2-ss refuses a header type whose fields
    (a varbit at its maximum width) add up to something else, among the types it lays
    out, those of the program's storage."""
    seen: set[str] = set()
    todo = list(storage)
    while todo:
        t = todo.pop()
        while isinstance(t, T.NewType):
            t = t.underlying
        if isinstance(t, T.Stack):
            todo.append(t.element)
        if not isinstance(t, (T.Struct, T.Header, T.HeaderUnion)) or str(t) in seen:
            continue
        seen.add(str(t))
        todo += [f.type for f in t.fields]
        width = F.size_of_type(t, maximum=True)
        decl = t.decl
        if isinstance(t, T.Header) and width is not None and width % 8 and isinstance(
                decl, A.HeaderDecl):
            ctx.error(ctx.name_pos(decl), f"header {t}: Found header with fields totaling "
                      f"{width} bits.  BMv2 target only supports headers with fields "
                      "totaling a multiple of 8 bits.", len(decl.name), "target-error")


def direct_meters(ctx: Context, program: Program, reads: dict[str, list[A.Expr]],
                  applied: set[str]) -> None:
    """``reads``: the destinations of the ``read`` calls of each direct meter (by its
    P4Info name) in the code the program runs; ``applied``: the tables it applies."""
    attached: dict[str, list[TableInstance]] = {}
    for t in program.tables.values():
        if t.direct_meter is not None and t.fqn in applied:
            attached.setdefault(t.direct_meter, []).append(t)
    for meter, tables in attached.items():
        inst = program.externs.get(meter)
        if meter not in reads:
            related = (ctx.name_pos(inst.decl), len(inst.decl.name)) if inst else None
            for t in tables:
                ctx.error(ctx.name_pos(t.decl), f"{t.fqn}: table with direct meter {meter} "
                          "must have at least one action with a read method call",
                          len(t.decl.name), "invalid", related)
        elif len(tables) > 1 and inst is not None:
            ctx.error(ctx.name_pos(inst.decl), f"{meter}: Direct meters cannot be attached "
                      f"to multiple tables {tables[1].fqn} and {tables[0].fqn}",
                      len(inst.decl.name), "invalid")
    for meter, destinations in reads.items():
        inst = program.externs.get(meter)
        if meter not in attached and inst is not None:
            ctx.error(ctx.name_pos(inst.decl), f"{meter}: direct meter is not associated "
                      "with any table via 'meters' table property", len(inst.decl.name),
                      "invalid")
        first = destinations[0]
        for d in destinations[1:]:
            if expr_text(d) != expr_text(first):
                ctx.error(d.pos, "all meter operations must write to the same destination, "
                          f"however {expr_text(d)} and {expr_text(first)} are different",
                          len(expr_text(d)), "invalid")
                break
