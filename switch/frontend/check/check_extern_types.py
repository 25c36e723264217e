"""BMv2's limits on the types the v1model externs are used with.

p4c-bm2-ss lowers typedefs, new types (``type bit<8> T``), serializable enums and the
program's own enums (to ``bit<32>``) before it converts the externs, and then takes
only a ``bit<W>`` or ``int<W>`` register element (W > 0) and registers of a nonzero
size. Indices and the values ``random``, ``hash`` and the meters write are fields of
BMv2's JSON, so they are scalars too. Anything else is rejected here, at the type
argument or the argument, as unsupported: never when the pipeline is built or a packet
runs. A register of ``int<W>`` compiles, with a warning: BMv2 reads its values back as
unsigned, where the spec (and this switch) keeps their sign."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check.check_expressions import is_unknown
from switch.frontend.check.print_expressions import type_ref_text

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker

# the type parameter of each extern that indexes its array (v1model.p4 >= 20200408)
INDEX_PARAMS = {"register": 1, "counter": 0, "meter": 0}
# the arguments of extern functions ("") and methods that BMv2 takes as one field
SCALAR_ARGS = {("", "random"): (0,), ("", "hash"): (0, 2, 4), ("meter", "execute_meter"): (1,)}


def lowered(t: T.Type) -> T.Type:
    """``t`` as p4c-bm2-ss's mid end leaves it: new types, serializable enums and enums
    become the bit<W> they are represented by."""
    while isinstance(t, T.NewType):
        t = t.underlying
    if isinstance(t, T.SerEnum):
        return t.underlying
    if isinstance(t, T.Enum):
        return T.Bits(32)
    return t


def is_bits(t: T.Type) -> bool:
    """A register element BMv2 takes: bit<W> or int<W>, W > 0, once lowered."""
    low = lowered(t)
    return isinstance(low, T.Bits) and low.width > 0


def is_scalar(t: T.Type) -> bool:
    """A value that fits one field of BMv2's JSON: bit<W>, int<W>, bool or error."""
    return is_bits(t) or isinstance(lowered(t), (T.Bool, T.Error))


def check_extern_instance(chk: Checker, ref: A.TypeRef, t: T.Extern,
                          args: list[A.Expr | None]) -> None:
    """The type arguments and size of an instance ``ref`` of the extern type ``t``."""
    type_refs = ref.args if isinstance(ref, A.NamedTypeRef) else []
    if len(type_refs) != len(t.type_args):
        return

    def refuse(i: int, what: str) -> None:
        chk.ctx.unsupported(type_refs[i].pos, what, len(type_ref_text(type_refs[i])))

    arg_types = t.type_args
    if t.name == "register" and arg_types:
        if not is_unknown(arg_types[0]) and not is_bits(arg_types[0]):
            refuse(0, f"a register of {arg_types[0]} (BMv2 registers hold bit<W> or "
                   "int<W> values)")
        element = lowered(arg_types[0])
        if isinstance(element, T.Bits) and element.signed:
            chk.ctx.warning(type_refs[0].pos,
                            f"a register of {arg_types[0]}: BMv2 reads its values back as "
                            f"unsigned (bit<{element.width}>), this switch as signed, as "
                            "the P4 spec says; compare and shift them as unsigned, or keep "
                            "them offset, where both must agree", _written_length(type_refs[0]))
        size = args[0] if args else None
        if isinstance(size, A.IntLit) and size.value == 0:
            chk.ctx.unsupported(size.pos, "a register of size 0 (a direct register; BMv2 "
                                "registers are arrays)", len(chk.text(size)))
    if t.name == "direct_meter" and arg_types:
        if not is_unknown(arg_types[0]) and not is_scalar(arg_types[0]):
            refuse(0, f"a direct_meter writing a {arg_types[0]} (BMv2 writes a meter's "
                   "colour into a bit<W> field)")
    index = INDEX_PARAMS.get(t.name)
    if index is not None and index < len(arg_types):
        it = arg_types[index]
        if not is_unknown(it) and not is_scalar(it):
            refuse(index, f"a {t.name} indexed by {it} (BMv2 indexes its arrays with "
                   "bit<W>)")


def _written_length(ref: A.TypeRef) -> int:
    """How long ``ref`` is in the source (a type name, not the type it names)."""
    if isinstance(ref, A.NamedTypeRef) and not ref.args:
        return len(ref.name)
    return len(type_ref_text(ref))


def check_extern_call(chk: Checker, call: A.Call, extern: str, name: str,
                      params: list[A.Param]) -> None:
    """A call, its arguments bound to ``params``, of the method ``name`` of ``extern``
    (of the extern function ``name`` when ``extern`` is "")."""
    for i in SCALAR_ARGS.get((extern, name), ()):
        arg = call.resolved_args[i] if i < len(call.resolved_args) else None
        if arg is None or arg.type is None or is_unknown(arg.type) or is_scalar(arg.type):
            continue
        chk.ctx.unsupported(arg.pos, f"{name} with a {params[i].name} of type {arg.type} "
                            "(BMv2 takes a bit<W>, int<W> or bool field there)",
                            len(chk.text(arg)))
