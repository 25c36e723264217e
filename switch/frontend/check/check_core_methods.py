"""The core library's rules for ``packet_in``, ``packet_out`` and ``verify`` that the
signatures in core.p4 cannot say (p4c's CheckCoreMethods, with its messages):
``extract`` takes a header, with a varbit field exactly when a size is given;
``lookahead`` a fixed-width type; ``emit`` headers, stacks, unions and structs or
tuples of them; ``verify`` is called in parsers only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check.check_expressions import is_unknown
from switch.frontend.check.print_expressions import type_ref_text

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker


def has_varbit_or_union(t: T.Type) -> bool:
    while isinstance(t, T.NewType):
        t = t.underlying
    if isinstance(t, (T.Varbit, T.HeaderUnion)):
        return True
    if isinstance(t, (T.Header, T.Struct)):
        return any(has_varbit_or_union(f.type) for f in t.fields)
    if isinstance(t, T.Stack):
        return has_varbit_or_union(t.element)
    if isinstance(t, T.Tuple):
        return any(has_varbit_or_union(e) for e in t.elements)
    return False


def _emittable(t: T.Type) -> bool:
    return T.every_leaf(t, lambda leaf: isinstance(leaf, (T.Header, T.Stack, T.HeaderUnion)))


def check_core_method(chk: Checker, call: A.Call, extern: str, method: str) -> None:
    """A call, its arguments bound, of ``method`` of the extern ``extern``."""
    args = call.resolved_args
    if extern == "packet_in" and method == "extract" and args:
        target = args[0]
        if target is None and call.type_args:  # extract<T>(_)
            ref = call.type_args[0]
            t = ref.resolved
            if t is not None and not is_unknown(t) and not isinstance(t, T.Header):
                text = type_ref_text(ref)
                chk.ctx.error(ref.pos, f"extract<{text}>(_): the type argument must be a "
                              "header", len(text))
            return
        if target is None or target.type is None or is_unknown(target.type):
            return
        if not isinstance(target.type, T.Header):
            chk.error_at(target, f"{chk.text(target)}: argument must be a header")
        elif len(args) == 1 and has_varbit_or_union(target.type):
            chk.error_at(target, f"{chk.text(target)}: argument cannot contain varbit fields")
        elif len(args) == 2 and not has_varbit_or_union(target.type):
            chk.error_at(target, f"{chk.text(target)}: argument should contain a varbit field")
    elif extern == "packet_in" and method == "lookahead" and call.type_args:
        ref = call.type_args[0]
        t = ref.resolved
        if t is not None and not is_unknown(t) and has_varbit_or_union(t):
            text = type_ref_text(ref)
            chk.ctx.error(ref.pos, f"{text}: type argument must be a fixed-width type",
                          len(text))
    elif extern == "packet_out" and method == "emit" and args:
        value = args[0]
        if value is None or value.type is None or is_unknown(value.type):
            return
        if not _emittable(value.type):
            chk.error_at(call, f"{chk.text(call)}: argument must be a header, stack or union, "
                         "or a struct or tuple of such types")


def check_core_function(chk: Checker, call: A.Call, name: str) -> None:
    """A call of the extern function ``name``, its arguments bound."""
    if name == "verify" and not chk.in_parser:
        chk.error_at(call, f"{chk.text(call)}: may only be invoked in parsers")
