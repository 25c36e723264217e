"""Constant folding: the value of every operator applied to literals, with the exact
semantics of the spec (wrapping, saturating and signed arithmetic on ``bit<W>`` and
``int<W>``; arbitrary precision on ``int``).

Representation: a ``bit<W>`` literal holds its value in [0, 2^W); an ``int<W>`` literal
a signed value in [-2^(W-1), 2^(W-1)); an ``int`` literal any Python int. These
functions never report diagnostics: the checker decides whether an operation is legal
before asking for its value, and gets None back for what cannot be folded (division by
zero, for instance)."""

from __future__ import annotations

import copy

from switch.frontend import ast as A
from switch.frontend import types as T


def wrap(value: int, t: T.Bits) -> int:
    """Reduce ``value`` into the range of ``t`` (two's complement for int<W>)."""
    if t.width <= 0:
        return 0
    value &= (1 << t.width) - 1
    if t.signed and value >> (t.width - 1):
        value -= 1 << t.width
    return value


def fits(value: int, t: T.Bits) -> bool:
    if t.signed:
        return -(1 << (t.width - 1)) <= value < (1 << (t.width - 1))
    return 0 <= value < (1 << t.width)


def unsigned(value: int, width: int) -> int:
    return value & ((1 << width) - 1)


def int_lit(value: int, t: T.Type, pos: A.Pos, text: str = "") -> A.IntLit:
    """A literal of type ``t`` (Bits or InfInt) with ``value`` reduced into range."""
    if isinstance(t, T.Bits):
        lit = A.IntLit(pos, wrap(value, t), t.width, t.signed, text)
    else:
        lit = A.IntLit(pos, value, None, False, text)
    lit.type = t
    return lit


def bool_lit(value: bool, pos: A.Pos) -> A.BoolLit:
    lit = A.BoolLit(pos, value)
    lit.type = T.Bool()
    return lit


def is_constant(e: A.Expr | None) -> bool:
    """A folded compile-time constant: a literal, an enum/error member, or a list or
    struct initializer made of constants."""
    if isinstance(e, (A.IntLit, A.BoolLit, A.StringLit, A.EnumValue, A.DefaultExpr)):
        return True
    if isinstance(e, A.ListExpr):
        return all(is_constant(x) for x in e.elements)
    if isinstance(e, A.StructExpr):
        return all(is_constant(x) for _, x in e.fields)
    if isinstance(e, A.Cast) and isinstance(e.type, (T.NewType, T.SerEnum)):
        # a constant given a new type, or a serializable-enum value with no member name
        return is_constant(e.expr)
    return False


def clone_constant(e: A.Expr, pos: A.Pos) -> A.Expr:
    """A copy of a folded constant, located at ``pos`` (where it is used)."""
    out = copy.copy(e)
    out.pos = pos
    if isinstance(out, A.ListExpr):
        out.elements = [clone_constant(x, pos) for x in out.elements]
    elif isinstance(out, A.StructExpr):
        out.fields = [(n, clone_constant(x, pos)) for n, x in out.fields]
    elif isinstance(out, A.Cast):
        out.expr = clone_constant(out.expr, pos)
    return out


def int_value(e: A.Expr) -> int | None:
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.Cast):
        return int_value(e.expr)
    if isinstance(e, A.BoolLit):
        return int(e.value)
    if isinstance(e, A.EnumValue):
        return e.value
    return None


# ------------------------------------------------------------------ operators


def arith(op: str, a: int, b: int, t: T.Type) -> int | None:
    """``a op b`` for the arithmetic and bitwise operators, in type ``t`` (Bits or
    InfInt); None when undefined (division by zero)."""
    if isinstance(t, T.Bits):
        if op == "|+|":
            r = a + b
            return _saturate(r, t)
        if op == "|-|":
            return _saturate(a - b, t)
        if op in ("&", "|", "^"):
            ua, ub = unsigned(a, t.width), unsigned(b, t.width)
            r = ua & ub if op == "&" else ua | ub if op == "|" else ua ^ ub
            return wrap(r, t)
    r2 = _exact(op, a, b)
    if r2 is None:
        return None
    return wrap(r2, t) if isinstance(t, T.Bits) else r2


def _exact(op: str, a: int, b: int) -> int | None:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "%"):
        if b == 0:
            return None
        # operands are non-negative here: the checker rejects the others
        return a // b if op == "/" else a % b
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    return None


def _saturate(value: int, t: T.Bits) -> int:
    if t.signed:
        lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    else:
        lo, hi = 0, (1 << t.width) - 1
    return max(lo, min(hi, value))


def shift(op: str, a: int, amount: int, t: T.Type) -> int:
    if op == "<<":
        if isinstance(t, T.Bits):
            return 0 if amount >= t.width else wrap(a << amount, t)
        return a << amount
    # >> : arithmetic for signed values (a Python int keeps its sign)
    if isinstance(t, T.Bits) and amount >= t.width:
        return -1 if (t.signed and a < 0) else 0
    return a >> amount


def compare(op: str, a: object, b: object) -> bool | None:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if not isinstance(a, int) or not isinstance(b, int):
        return None
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    if op == ">=":
        return a >= b
    return None


def constant_key(e: A.Expr) -> object:
    """A hashable value of a constant, for equality and duplicate detection."""
    if isinstance(e, A.IntLit):
        return ("int", e.value)
    if isinstance(e, A.BoolLit):
        return ("bool", e.value)
    if isinstance(e, A.StringLit):
        return ("str", e.value)
    if isinstance(e, A.EnumValue):
        return ("enum", e.enum, e.member)
    if isinstance(e, A.ListExpr):
        return ("list", tuple(constant_key(x) for x in e.elements))
    if isinstance(e, A.StructExpr):
        return ("struct", tuple((n, constant_key(x)) for n, x in e.fields))
    if isinstance(e, A.Binary):
        return ("set", e.op, constant_key(e.left), constant_key(e.right))
    if isinstance(e, A.DefaultExpr):
        return ("default",)
    if isinstance(e, A.Cast):
        return constant_key(e.expr)
    return ("?", id(e))


def unary(op: str, a: int, t: T.Type) -> int:
    if op == "-":
        return wrap(-a, t) if isinstance(t, T.Bits) else -a
    if op == "~":
        assert isinstance(t, T.Bits)
        return wrap(~a, t)
    return a  # "+"


def concat(a: int, ta: T.Bits, b: int, tb: T.Bits) -> tuple[int, T.Bits]:
    t = T.Bits(ta.width + tb.width, ta.signed)
    value = (unsigned(a, ta.width) << tb.width) | unsigned(b, tb.width)
    return wrap(value, t), t


def slice_bits(a: int, width: int, hi: int, lo: int) -> int:
    return (unsigned(a, width) >> lo) & ((1 << (hi - lo + 1)) - 1)


def cast_int(value: int, to: T.Bits) -> int:
    """Value of a constant cast to bit<W>/int<W>: truncation or extension as the spec
    defines them (the signed reading of ``value`` is kept, then wrapped)."""
    return wrap(value, to)


def size_of_type(t: T.Type, maximum: bool = False) -> int | None:
    """Width in bits for ``minSizeInBits``/``maxSizeInBits``; None when the type has
    no fixed size."""
    if isinstance(t, T.Bits):
        return t.width
    if isinstance(t, T.Bool):
        return 1
    if isinstance(t, T.Varbit):
        return t.max_width if maximum else 0
    if isinstance(t, T.SerEnum):
        return t.underlying.width
    if isinstance(t, T.NewType):
        return size_of_type(t.underlying, maximum)
    if isinstance(t, (T.Header, T.Struct)):
        total = 0
        for f in t.fields:
            w = size_of_type(f.type, maximum)
            if w is None:
                return None
            total += w
        return total
    if isinstance(t, T.HeaderUnion):
        sizes = [size_of_type(f.type, maximum) for f in t.fields]
        if any(s is None for s in sizes):
            return None
        return max((s for s in sizes if s is not None), default=0) if maximum else min(
            (s for s in sizes if s is not None), default=0
        )
    if isinstance(t, T.Stack):
        w = size_of_type(t.element, maximum)
        return None if w is None else w * t.size
    if isinstance(t, T.Tuple):
        total = 0
        for e in t.elements:
            w = size_of_type(e, maximum)
            if w is None:
                return None
            total += w
        return total
    return None
