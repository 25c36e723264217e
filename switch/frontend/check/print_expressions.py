"""Expressions printed back as P4 source, the way p4c prints them in messages and in
P4Info match-field names (``hdr.ipv4.dstAddr``, ``meta.x[7:0]``, ``h.isValid()``)."""

from __future__ import annotations

from switch.frontend import ast as A
from switch.frontend import types as T

_PRECEDENCE = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 4,
    ">": 4,
    "<=": 4,
    ">=": 4,
    "|": 5,
    "^": 6,
    "&": 7,
    "<<": 8,
    ">>": 8,
    "++": 9,
    "+": 9,
    "-": 9,
    "|+|": 9,
    "|-|": 9,
    "*": 10,
    "/": 10,
    "%": 10,
    "&&&": 0,
    "..": 0,
}


def type_ref_text(ref: A.TypeRef) -> str:
    if ref.resolved is not None:
        return str(ref.resolved)
    if isinstance(ref, A.BitTypeRef):
        base = "int" if ref.signed else "bit"
        return base if ref.width is None else f"{base}<{expr_text(ref.width)}>"
    if isinstance(ref, A.VarbitTypeRef):
        return f"varbit<{expr_text(ref.width)}>"
    if isinstance(ref, A.NamedTypeRef):
        if ref.args:
            return f"{ref.name}<{', '.join(type_ref_text(a) for a in ref.args)}>"
        return ref.name
    if isinstance(ref, A.StackTypeRef):
        return f"{type_ref_text(ref.element)}[{expr_text(ref.size)}]"
    if isinstance(ref, A.TupleTypeRef):
        return f"tuple<{', '.join(type_ref_text(e) for e in ref.elements)}>"
    names = {
        A.BoolTypeRef: "bool",
        A.IntTypeRef: "int",
        A.ErrorTypeRef: "error",
        A.StringTypeRef: "string",
        A.VoidTypeRef: "void",
        A.DontCareTypeRef: "_",
    }
    return names.get(type(ref), "?")


def int_text(e: A.IntLit) -> str:
    if e.text:
        return e.text
    t = e.type
    if isinstance(t, T.Bits):
        return f"{t.width}{'s' if t.signed else 'w'}{e.value}"
    return str(e.value)


def expr_text(e: A.Expr | None, parent_prec: int = -1) -> str:
    if e is None:
        return "_"
    if isinstance(e, A.IntLit):
        return int_text(e)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.StringLit):
        return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(e, A.Name):
        return ("." if e.top_level else "") + e.name
    if isinstance(e, A.Member):
        return f"{expr_text(e.expr, 20)}.{e.name}"
    if isinstance(e, A.EnumValue):
        return f"{e.enum}.{e.member}"
    if isinstance(e, A.Index):
        return f"{expr_text(e.expr, 20)}[{expr_text(e.index)}]"
    if isinstance(e, A.Slice):
        return f"{expr_text(e.expr, 20)}[{expr_text(e.hi)}:{expr_text(e.lo)}]"
    if isinstance(e, A.Unary):
        return f"{e.op}{expr_text(e.expr, 15)}"
    if isinstance(e, A.Binary):
        prec = _PRECEDENCE.get(e.op, 0)
        text = f"{expr_text(e.left, prec)} {e.op} {expr_text(e.right, prec + 1)}"
        return f"({text})" if prec < parent_prec else text
    if isinstance(e, A.Mux):
        text = f"{expr_text(e.cond, 1)} ? {expr_text(e.then)} : {expr_text(e.other)}"
        return f"({text})" if parent_prec > 0 else text
    if isinstance(e, A.Cast):
        return f"({type_ref_text(e.to)}){expr_text(e.expr, 15)}"
    if isinstance(e, A.Call):
        targs = ""
        if e.type_args:
            targs = "<" + ", ".join(type_ref_text(t) for t in e.type_args) + ">"
        args = ", ".join(
            (f"{a.name} = " if a.name else "") + expr_text(a.value) for a in e.args
        )
        return f"{expr_text(e.callee, 20)}{targs}({args})"
    if isinstance(e, A.ListExpr):
        return "{ " + ", ".join(expr_text(x) for x in e.elements) + " }" if e.elements else "{ }"
    if isinstance(e, A.StructExpr):
        inner = ", ".join([f"{n} = {expr_text(x)}" for n, x in e.fields]
                          + (["..."] if e.rest else []))
        return "{ " + inner + " }" if inner else "{ }"
    if isinstance(e, A.Dots):
        return "..."
    if isinstance(e, A.InvalidHeader):
        return "{#}"
    if isinstance(e, A.DefaultExpr):
        return "default"
    if isinstance(e, A.DontCare):
        return "_"
    if isinstance(e, A.TypeExpr):
        return type_ref_text(e.ref)
    return "?"
