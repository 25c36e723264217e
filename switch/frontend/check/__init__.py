"""The checking passes of the front end: syntax tree -> checked IR ``Program``.

0. ``specialize_blocks``: a copy of each generic parser or control per list of type
   arguments it is instantiated with.
1. ``resolve_names``: what every name refers to (scopes, duplicates, undeclared names).
2. ``check_types`` (with ``check_expressions``, ``check_calls``, ``check_statements``,
   ``check_tables``, ``check_parsers``, ``check_declarations``): types of every
   expression, implicit conversions, call resolution and constant folding
   (``fold_constants``), with the tree rewritten in place.
   ``check_default_values``: every ``...`` and ``{#}`` got a type from its context.
3. ``instantiate``: the ``main`` package instantiated into a ``Program`` with p4c's
   control-plane names.

``check_bmv2_limits`` (what p4c-bm2-ss rejects because BMv2 cannot run it: shift
amounts, division, the statements of the parser, checksum controls and deparser, the
externs BMv2 lacks) runs on the instantiated program once its P4Info ids are assigned,
as p4c's back end runs after its P4Info is written.

Like p4c, checking stops after a pass that reported errors; the caller turns the
collected diagnostics into a ``CompileError``.
"""

from __future__ import annotations

from switch.frontend import ast as A
from switch.frontend.check.check_bmv2_limits import check_bmv2_limits
from switch.frontend.check.check_default_values import check_default_values
from switch.frontend.check.check_types import Checker
from switch.frontend.check.context import Context
from switch.frontend.check.instantiate import instantiate
from switch.frontend.check.resolve_names import resolve_names
from switch.frontend.check.specialize_blocks import specialize_blocks
from switch.frontend.diagnostics import Diagnostics
from switch.frontend.program import Program

__all__ = ["check", "check_target_limits"]


def check(source_file: A.SourceFile, preprocessed: object, diags: Diagnostics) -> Program:
    """Check a parsed program; errors go to ``diags`` (the returned Program is only
    meaningful when there are none)."""
    specialize_blocks(source_file)
    ctx = Context(diags, source_file, text=str(getattr(preprocessed, "text", "") or ""))
    filename = diags.filename
    empty = Program(source=preprocessed, filename=filename, decls=list(source_file.decls),
                    arch="", pipeline={})
    errors = len(diags.errors)
    resolve_names(ctx)
    if len(diags.errors) > errors:
        return empty
    Checker(ctx).run()
    if len(diags.errors) > errors:
        return empty
    check_default_values(ctx)
    if len(diags.errors) > errors:
        return empty
    return instantiate(ctx, preprocessed, filename)


def check_target_limits(program: Program, diags: Diagnostics) -> None:
    """Report what BMv2 cannot run in a checked program (see ``check_bmv2_limits``)."""
    check_bmv2_limits(program, diags)
