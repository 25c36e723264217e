"""Typing, implicit conversion and folding of expressions.

Every function takes the checker and an expression and returns the expression that
replaces it, typed. Untyped integer constants (type ``int``) take the type of the other
operand or of the context; operations on constants are folded as soon as their
operands are constants, so that an ``int`` expression is always a literal."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.context import (
    UNKNOWN,
    ActionType,
    DefaultValueType,
    FunctionType,
    SetType,
    StateType,
    TableType,
    TypeOfType,
    TypeParam,
    TypeVar,
    Unknown,
    UnknownStruct,
)

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker

ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}
RELATIONS = {"<", "<=", ">", ">="}
EQUALITY = {"==", "!="}
SHIFTS = {"<<", ">>"}
LOGICAL = {"&&", "||"}
SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")


def check_expr(chk: Checker, e: A.Expr | A.Node) -> A.Expr:
    if isinstance(e, A.Unsupported):
        chk.ctx.unsupported(e.pos, e.what)
        out = A.DontCare(e.pos)
        out.type = UNKNOWN
        return out
    if isinstance(e, A.Expr) and e.type is not None and F.is_constant(e):
        return e  # an already checked constant (a folded value used again)
    handler = _HANDLERS.get(type(e))
    if handler is None or not isinstance(e, A.Expr):
        chk.ctx.unsupported(e.pos, f"expression {type(e).__name__}")
        out = A.DontCare(e.pos)
        out.type = UNKNOWN
        return out
    result = handler(chk, e)
    if result.type is None:
        result.type = UNKNOWN
    return result


def unknown(e: A.Expr) -> A.Expr:
    e.type = UNKNOWN
    return e


def is_unknown(*types: T.Type | None) -> bool:
    return any(t is None or isinstance(t, Unknown) for t in types)


# ------------------------------------------------------------------- literals


def _int(chk: Checker, e: A.IntLit) -> A.Expr:
    if e.width is None:
        e.type = T.InfInt()
        return e
    t = T.Bits(e.width, e.signed)
    if e.signed and e.width < 1:
        chk.error_at(e, f"{chk.text(e)}: int<{e.width}> is not a valid type")
        return unknown(e)
    if not F.fits(e.value, t):
        chk.ctx.warning(e.pos, f"{chk.text(e)}: value does not fit in {e.width} bits",
                        len(chk.text(e)))
    e.value = F.wrap(e.value, t)
    e.type = t
    return e


def _bool(chk: Checker, e: A.BoolLit) -> A.Expr:
    e.type = T.Bool()
    return e


def _string(chk: Checker, e: A.StringLit) -> A.Expr:
    e.type = T.String()
    return e


def _dontcare(chk: Checker, e: A.Expr) -> A.Expr:
    e.type = T.DontCareType()
    return e


def _enum_value(chk: Checker, e: A.EnumValue) -> A.Expr:
    return e if e.type is not None else unknown(e)


def _type_expr(chk: Checker, e: A.TypeExpr) -> A.Expr:
    t = chk.resolve(e.ref)
    e.type = UNKNOWN if isinstance(t, Unknown) else TypeOfType(t)
    return e


# ---------------------------------------------------------------------- names


def _name(chk: Checker, e: A.Name) -> A.Expr:
    decl = e.decl
    ctx = chk.ctx
    if decl is None:
        return unknown(e)
    if isinstance(decl, A.ConstDecl):
        value = ctx.const_values.get(id(decl))
        if value is None:
            return unknown(e)
        return F.clone_constant(value, e.pos)
    if isinstance(decl, A.VarDecl):
        e.type = decl.type_ref.resolved or UNKNOWN
    elif isinstance(decl, A.Param):
        e.type = chk.resolve(decl.type_ref)
    elif isinstance(decl, A.Instantiation):
        e.type = decl.type or UNKNOWN
    elif isinstance(decl, A.ActionDecl):
        e.type = ActionType(decl.name)
    elif isinstance(decl, A.TableDecl):
        e.type = TableType(decl.name)
    elif isinstance(decl, (A.FunctionDecl, A.ExternFunctionDecl)):
        e.type = FunctionType(decl.name)
    elif isinstance(decl, A.ValueSetDecl):
        e.type = SetType(chk.resolve(decl.element))
    elif isinstance(decl, A.ParserState):
        e.type = StateType()
    elif isinstance(decl, A.ParserDecl):
        e.type = TypeOfType(T.ParserOrControl("parser", decl.name, decl))
    elif isinstance(decl, A.ControlDecl):
        e.type = TypeOfType(T.ParserOrControl("control", decl.name, decl))
    elif isinstance(decl, (A.ParserTypeDecl, A.ControlTypeDecl, A.PackageDecl)):
        kind = {A.ParserTypeDecl: "parser", A.ControlTypeDecl: "control"}.get(
            type(decl), "package")
        e.type = TypeOfType(T.ParserOrControl(kind, decl.name, decl))
    elif isinstance(decl, A.ExternDecl):
        e.type = TypeOfType(T.Extern(decl.name, (), decl))
    elif isinstance(decl, A.ErrorDecl):
        e.type = TypeOfType(T.Error())
    elif isinstance(decl, TypeParam):
        e.type = TypeOfType(TypeVar(decl))
    elif isinstance(decl, (A.HeaderDecl, A.StructDecl, A.HeaderUnionDecl, A.EnumDecl,
                           A.TypedefDecl)):
        t = ctx.decl_types.get(id(decl))
        e.type = UNKNOWN if t is None else TypeOfType(t)
    else:
        ctx.unsupported(e.pos, f"reference to {type(decl).__name__}", len(e.name))
        e.type = UNKNOWN
    return e


# -------------------------------------------------------------------- members


def _member(chk: Checker, e: A.Member) -> A.Expr:
    base = chk.expr(e.expr)
    e.expr = base
    bt = base.type
    if is_unknown(bt):
        return unknown(e)
    assert bt is not None
    name = e.name
    if isinstance(bt, TypeOfType):
        return _type_member(chk, e, bt.of)
    if isinstance(bt, (T.Header, T.Struct, T.HeaderUnion)):
        for i, f in enumerate(bt.fields):
            if f.name == name:
                if F.is_constant(base) and isinstance(base, (A.ListExpr, A.StructExpr)):
                    # a field of a constant struct is itself a constant
                    values = (base.elements if isinstance(base, A.ListExpr)
                              else [x for _, x in base.fields])
                    if i < len(values):
                        return F.clone_constant(values[i], e.pos)
                e.type = f.type
                return e
        kind = "structure " if isinstance(bt, T.Struct) else ""
        chk.ctx.error(_member_pos(chk, e), f"Field {name} is not a member of {kind}{bt}",
                      len(name))
        return unknown(e)
    if isinstance(bt, T.Stack):
        if name in ("next", "last"):
            if not chk.in_parser:
                chk.error_at(e, f"{chk.text(e)}: 'last', and 'next' for stacks can only be "
                             "used in a parser")
                return unknown(e)
            e.type = bt.element
            return e
        if name == "lastIndex":
            if not chk.in_parser:
                chk.error_at(e, f"{chk.text(e)}: 'lastIndex' for stacks can only be used in "
                             "a parser")
                return unknown(e)
            e.type = T.Bits(32)
            return e
        if name == "size":
            return F.int_lit(bt.size, T.Bits(32), e.pos)
    if isinstance(bt, T.TableApplyResult):
        if name in ("hit", "miss"):
            e.type = T.Bool()
            return e
        if name == "action_run":
            if not chk.allow_action_run:
                chk.error_at(e, f"{chk.text(e)}: only allowed in switch statements")
                return unknown(e)
            e.type = T.ActionEnum(bt.table)
            return e
    chk.ctx.error(_member_pos(chk, e),
                  f"Cannot extract field {name} from {chk.text(base)} which has type {bt}",
                  len(name))
    return unknown(e)


def _member_pos(chk: Checker, e: A.Member) -> A.Pos:
    """The position of the member name in ``expr.name``."""
    return chk.ctx.find_after(e.expr.pos, r"\.\s*(" + e.name + r")\b", 1)


def _type_member(chk: Checker, e: A.Member, t: T.Type) -> A.Expr:
    name = e.name
    if isinstance(t, T.Error):
        code = chk.ctx.errors.get(name)
        if code is None:
            chk.error_at(e, f"{chk.text(e)}: Invalid enum tag")
            return unknown(e)
        out = A.EnumValue(e.pos, "error", name, code)
        out.type = t
        return out
    if isinstance(t, T.Enum):
        if name not in t.members:
            chk.error_at(e, f"{chk.text(e)}: Invalid enum tag")
            return unknown(e)
        out = A.EnumValue(e.pos, t.name, name, t.members.index(name))
        out.type = t
        return out
    if isinstance(t, T.SerEnum):
        for m, value in t.members:
            if m == name:
                out = A.EnumValue(e.pos, t.name, name, value)
                out.type = t
                return out
        chk.error_at(e, f"{chk.text(e)}: Invalid enum tag")
        return unknown(e)
    chk.ctx.error(_member_pos(chk, e), f"Cannot extract field {name} from type {t}", len(name))
    return unknown(e)


# ----------------------------------------------------------- indexing, slices


def _index(chk: Checker, e: A.Index) -> A.Expr:
    base = chk.expr(e.expr)
    idx = chk.expr(e.index)
    e.expr, e.index = base, idx
    if is_unknown(base.type, idx.type):
        return unknown(e)
    bt, it = base.type, idx.type
    if isinstance(it, T.SerEnum):
        idx = to_underlying(idx)
        e.index = idx
        it = idx.type
    if isinstance(bt, T.Stack):
        if isinstance(idx, A.IntLit):
            if idx.value < 0:
                chk.error_at(e, f"{chk.text(e)}: Negative array index {idx.value}")
                return unknown(e)
            if idx.value >= bt.size:
                chk.error_at(idx, f"Array index {chk.text(idx)} larger or equal to array size "
                             f"{bt.size}")
                return unknown(e)
            if isinstance(it, T.Bits):
                e.index = F.int_lit(idx.value, T.InfInt(), idx.pos, idx.text)
        elif not isinstance(it, T.Bits):
            chk.error_at(idx, f"Array index {chk.text(idx)} must be an integer, but it has "
                         f"type {it}")
            return unknown(e)
        e.type = bt.element
        return e
    if isinstance(bt, T.Tuple):
        if not isinstance(idx, A.IntLit):
            chk.error_at(idx, f"Tuple index {chk.text(idx)} must be constant")
            return unknown(e)
        if not 0 <= idx.value < len(bt.elements):
            chk.error_at(idx, f"Tuple index {chk.text(idx)} larger than tuple size "
                         f"{len(bt.elements)}")
            return unknown(e)
        if isinstance(base, A.ListExpr):
            return base.elements[idx.value]
        e.type = bt.elements[idx.value]
        return e
    chk.error_at(e, f"Indexing {chk.text(e)} applied to non-array and non-tuple type {bt}")
    return unknown(e)


def _slice(chk: Checker, e: A.Slice) -> A.Expr:
    base = chk.expr(e.expr)
    hi = chk.expr(e.hi)
    lo = chk.expr(e.lo)
    e.expr, e.hi, e.lo = base, hi, lo
    if is_unknown(base.type, hi.type, lo.type):
        return unknown(e)
    bt = base.type
    if isinstance(bt, T.SerEnum):
        base = to_underlying(base)
        e.expr = base
        bt = base.type
    if not isinstance(bt, T.Bits):
        chk.error_at(e, f"{chk.text(e)}: bit extraction only defined for bit<> types")
        return unknown(e)
    for bound in (hi, lo):
        if not isinstance(bound, A.IntLit):
            chk.error_at(bound, f"{chk.text(bound)}: slice bit index values must be constants")
            return unknown(e)
    assert isinstance(hi, A.IntLit) and isinstance(lo, A.IntLit)
    m, ln = hi.value, lo.value
    for bound, v in ((hi, m), (lo, ln)):
        if v < 0:
            chk.error_at(e, f"{chk.text(e)}: negative bit index {v}")
            return unknown(e)
        if v >= bt.width:
            chk.error_at(bound, f"Bit index {v} greater than width {bt.width}")
            return unknown(e)
    if ln > m:
        chk.error_at(lo, f"LSB index {ln} greater than MSB index {m}")
        return unknown(e)
    e.hi = F.int_lit(m, T.InfInt(), hi.pos, hi.text)
    e.lo = F.int_lit(ln, T.InfInt(), lo.pos, lo.text)
    t = T.Bits(m - ln + 1)
    if isinstance(base, A.IntLit):
        return F.int_lit(F.slice_bits(base.value, bt.width, m, ln), t, e.pos)
    e.type = t
    return e


# ------------------------------------------------------------------ operators


def to_underlying(e: A.Expr) -> A.Expr:
    """A serializable-enum value read as its underlying bit type."""
    t = e.type
    if not isinstance(t, T.SerEnum):
        return e
    if isinstance(e, A.EnumValue):
        return F.int_lit(e.value, t.underlying, e.pos)
    ref = A.BitTypeRef(e.pos, None, t.underlying.signed)
    ref.resolved = t.underlying
    cast = A.Cast(e.pos, ref, e)
    cast.type = t.underlying
    return cast


def _unary(chk: Checker, e: A.Unary) -> A.Expr:
    inner = chk.expr(e.expr)
    e.expr = inner
    t = inner.type
    if is_unknown(t):
        return unknown(e)
    op = e.op
    if op == "!":
        if not isinstance(t, T.Bool):
            chk.error_at(e, f"Cannot apply {op} to value {chk.text(inner)} of type {t}")
            return unknown(e)
        if isinstance(inner, A.BoolLit):
            return F.bool_lit(not inner.value, e.pos)
        e.type = t
        return e
    if isinstance(t, T.SerEnum):
        inner = to_underlying(inner)
        e.expr = inner
        t = inner.type
    if op == "~" and isinstance(t, T.InfInt):
        chk.error_at(e, f"{chk.text(e)}: '~' cannot be applied to an operand with an unknown "
                     "width")
        return unknown(e)
    if not isinstance(t, (T.Bits, T.InfInt)):
        chk.error_at(e, f"Cannot apply {op} to value {chk.text(inner)} of type {t}")
        return unknown(e)
    if isinstance(inner, A.IntLit):
        assert t is not None
        return F.int_lit(F.unary(op, inner.value, t), t, e.pos)
    e.type = t
    return e


def _binary(chk: Checker, e: A.Binary) -> A.Expr:
    op = e.op
    if op in ("&&&", ".."):
        chk.error_at(e, f"{chk.text(e)}: '{op}' can only be used in a keyset")
        return unknown(e)
    left = chk.expr(e.left)
    right = chk.expr(e.right)
    e.left, e.right = left, right
    if is_unknown(left.type, right.type):
        return unknown(e)
    if op in LOGICAL:
        return _logical(chk, e)
    if op in EQUALITY:
        return _equality(chk, e)
    if op in SHIFTS:
        return _shift(chk, e)
    if op == "++":
        return _concat(chk, e)
    if op in RELATIONS:
        return _relation(chk, e)
    if op in ARITH:
        return _arith(chk, e)
    chk.ctx.unsupported(e.pos, f"operator {op}")
    return unknown(e)


def _logical(chk: Checker, e: A.Binary) -> A.Expr:
    lt, rt = e.left.type, e.right.type
    if not isinstance(lt, T.Bool) or not isinstance(rt, T.Bool):
        chk.error_at(e, f"{chk.text(e)}: not defined on {lt} and {rt}")
        return unknown(e)
    left, right = e.left, e.right
    if isinstance(left, A.BoolLit):
        decisive = left.value if e.op == "||" else not left.value
        if decisive:
            return F.bool_lit(left.value, e.pos)
        if isinstance(right, A.BoolLit):
            return F.bool_lit(right.value, e.pos)
    e.type = T.Bool()
    return e


def _balance(chk: Checker, e: A.Binary) -> None:
    """Give an untyped constant operand the type of the other operand, and read
    serializable enums as their underlying type (except when both have the same enum
    type, which equality allows)."""
    lt, rt = e.left.type, e.right.type
    if isinstance(lt, T.SerEnum) and not (e.op in EQUALITY and lt == rt):
        e.left = to_underlying(e.left)
        lt = e.left.type
    if isinstance(rt, T.SerEnum) and not (e.op in EQUALITY and lt == rt):
        e.right = to_underlying(e.right)
        rt = e.right.type
    if isinstance(lt, T.InfInt) and isinstance(rt, T.Bits):
        e.left = coerce(chk, e.left, rt)
    elif isinstance(rt, T.InfInt) and isinstance(lt, T.Bits):
        e.right = coerce(chk, e.right, lt)


def _equality(chk: Checker, e: A.Binary) -> A.Expr:
    _balance(chk, e)
    left, right = e.left, e.right
    lt, rt = left.type, right.type
    assert lt is not None and rt is not None
    for t in (lt, rt):
        bad = None
        if isinstance(t, (TableType, T.TableApplyResult, T.ActionEnum)):
            bad = "tables"
        elif isinstance(t, (T.Extern, T.ParserOrControl)):
            bad = "externs"
        elif isinstance(t, (ActionType, FunctionType, TypeOfType, StateType, SetType)):
            bad = "these values"
        elif isinstance(t, TypeVar):
            bad = "values of a type variable"
        if bad:
            chk.error_at(left, f"{chk.text(left)} and {chk.text(right)}: {bad} cannot be "
                         "compared")
            return unknown(e)
    if isinstance(left, (A.ListExpr, A.StructExpr)) and not isinstance(
        rt, (T.Tuple, UnknownStruct)
    ):
        e.left = left = coerce(chk, left, rt)
        lt = left.type
    elif isinstance(right, (A.ListExpr, A.StructExpr)) and not isinstance(
        lt, (T.Tuple, UnknownStruct)
    ):
        e.right = right = coerce(chk, right, lt)
        rt = right.type
    if is_unknown(lt, rt):
        return unknown(e)
    if lt != rt or isinstance(lt, T.Void):
        if not (isinstance(lt, T.InfInt) and isinstance(rt, T.InfInt)):
            chk.error_at(e, f"'{chk.text(left)}' with type '{lt}' cannot be compared to "
                         f"'{chk.text(right)}' with type '{rt}'")
            return unknown(e)
    if F.is_constant(left) and F.is_constant(right):
        same = F.constant_key(left) == F.constant_key(right)
        return F.bool_lit(same if e.op == "==" else not same, e.pos)
    e.type = T.Bool()
    return e


def _relation(chk: Checker, e: A.Binary) -> A.Expr:
    _balance(chk, e)
    lt, rt = e.left.type, e.right.type
    if isinstance(lt, T.InfInt) and isinstance(rt, T.InfInt):
        assert isinstance(e.left, A.IntLit) and isinstance(e.right, A.IntLit)
        return F.bool_lit(bool(F.compare(e.op, e.left.value, e.right.value)), e.pos)
    if not isinstance(lt, T.Bits) or not isinstance(rt, T.Bits) or lt != rt:
        chk.error_at(e, f"{chk.text(e)}: not defined on {lt} and {rt}")
        return unknown(e)
    if isinstance(e.left, A.IntLit) and isinstance(e.right, A.IntLit):
        return F.bool_lit(bool(F.compare(e.op, e.left.value, e.right.value)), e.pos)
    e.type = T.Bool()
    return e


def _arith(chk: Checker, e: A.Binary) -> A.Expr:
    op = e.op
    for side in (e.left, e.right):
        t = side.type
        if not isinstance(t, (T.Bits, T.InfInt, T.SerEnum)):
            chk.error_at(side, f"{op}: cannot be applied to expression '{chk.text(side)}' "
                         f"with type '{t}'")
            return unknown(e)
    _balance(chk, e)
    left, right = e.left, e.right
    lt, rt = left.type, right.type
    if is_unknown(lt, rt):
        return unknown(e)
    if op in ("/", "%"):
        for t in (lt, rt):
            if isinstance(t, T.Bits) and t.signed:
                chk.error_at(e, f"{chk.text(e)}: Cannot operate on signed values")
                return unknown(e)
        for side in (left, right):
            if isinstance(side, A.IntLit) and side.value < 0:
                chk.error_at(e, f"{chk.text(e)}: not defined on negative numbers")
                return unknown(e)
        if isinstance(right, A.IntLit) and right.value == 0:
            chk.error_at(e, f"{chk.text(e)}: division by zero")
            return unknown(e)
    if isinstance(lt, T.Bits) and isinstance(rt, T.Bits):
        if lt.width != rt.width:
            chk.error_at(e, f"{chk.text(e)}: Cannot operate on values with different widths "
                         f"{lt.width} and {rt.width}")
            return unknown(e)
        if lt.signed != rt.signed:
            chk.error_at(e, f"{chk.text(e)}: Cannot operate on values with different signs")
            return unknown(e)
    elif op in ("|+|", "|-|"):
        chk.error_at(e, f"{chk.text(e)}: saturating arithmetic needs operands with a width")
        return unknown(e)
    assert lt is not None
    if isinstance(left, A.IntLit) and isinstance(right, A.IntLit):
        value = F.arith(op, left.value, right.value, lt)
        if value is None:
            chk.error_at(e, f"{chk.text(e)}: cannot be evaluated")
            return unknown(e)
        return F.int_lit(value, lt, e.pos)
    e.type = lt
    return e


def _shift(chk: Checker, e: A.Binary) -> A.Expr:
    left, right = e.left, e.right
    if isinstance(left.type, T.SerEnum):
        left = e.left = to_underlying(left)
    if isinstance(right.type, T.SerEnum):
        right = e.right = to_underlying(right)
    lt, rt = left.type, right.type
    if isinstance(right, A.IntLit):
        if right.value < 0:
            chk.error_at(e, f"{chk.text(e)}: Negative shift amount {chk.text(right)}")
            return unknown(e)
        if isinstance(lt, T.Bits) and right.value >= lt.width:
            chk.ctx.warning(e.pos, f"{chk.text(e)}: shifting value with {lt.width} bits by "
                            f"{right.value}", len(chk.text(e)))
        if isinstance(rt, T.Bits) and rt.signed:
            right = e.right = F.int_lit(right.value, T.Bits(rt.width), right.pos, right.text)
            rt = right.type
    if isinstance(rt, T.Bits) and rt.signed:
        chk.error_at(right, f"{chk.text(right)}: Shift amount must be an unsigned number")
        return unknown(e)
    if not isinstance(rt, (T.Bits, T.InfInt)):
        chk.error_at(right, f"{chk.text(right)}: shift amount must be a number, not {rt}")
        return unknown(e)
    if not isinstance(lt, (T.Bits, T.InfInt)):
        chk.error_at(e, f"{chk.text(e)} left operand of shift must be a numeric type, not {lt}")
        return unknown(e)
    if isinstance(lt, T.InfInt) and not isinstance(right, A.IntLit):
        chk.error_at(e, f"{chk.text(e)}: shift result type is arbitrary-precision int, but "
                     "right operand is not constant; width of left operand of shift needs to "
                     "be specified or both operands need to be constant")
        return unknown(e)
    if isinstance(left, A.IntLit) and isinstance(right, A.IntLit):
        return F.int_lit(F.shift(e.op, left.value, right.value, lt), lt, e.pos)
    e.type = lt
    return e


def _concat(chk: Checker, e: A.Binary) -> A.Expr:
    left, right = to_underlying(e.left), to_underlying(e.right)
    e.left, e.right = left, right
    lt, rt = left.type, right.type
    if isinstance(lt, T.String) and isinstance(rt, T.String):
        if isinstance(left, A.StringLit) and isinstance(right, A.StringLit):
            out = A.StringLit(e.pos, left.value + right.value)
            out.type = lt
            return out
        e.type = lt
        return e
    if not isinstance(lt, T.Bits) or not isinstance(rt, T.Bits):
        chk.error_at(e, f"{chk.text(e)}: Concatenation not defined on {lt} and {rt}")
        for side, t in ((left, lt), (right, rt)):
            if isinstance(t, T.InfInt):
                chk.error_at(side, f"Please specify a width for the operand {chk.text(side)} "
                             "of a concatenation")
                break
        return unknown(e)
    if isinstance(left, A.IntLit) and isinstance(right, A.IntLit):
        value, t = F.concat(left.value, lt, right.value, rt)
        return F.int_lit(value, t, e.pos)
    e.type = T.Bits(lt.width + rt.width, lt.signed)
    return e


def _mux(chk: Checker, e: A.Mux) -> A.Expr:
    cond = chk.expr(e.cond)
    then = chk.expr(e.then)
    other = chk.expr(e.other)
    e.cond, e.then, e.other = cond, then, other
    if is_unknown(cond.type, then.type, other.type):
        return unknown(e)
    if not isinstance(cond.type, T.Bool):
        chk.error_at(cond, f"Selector of ?: must be bool, not {cond.type}")
        return unknown(e)
    tt, ot = then.type, other.type
    if isinstance(tt, T.InfInt) and isinstance(ot, T.InfInt):
        chk.error_at(e, f"Width must be specified for at least one of {chk.text(then)} or "
                     f"{chk.text(other)}")
        return unknown(e)
    assert tt is not None and ot is not None
    if isinstance(tt, T.InfInt):
        then = e.then = coerce(chk, then, ot)
    elif isinstance(ot, T.InfInt):
        other = e.other = coerce(chk, other, tt)
    if is_unknown(then.type, other.type):
        return unknown(e)
    if then.type != other.type:
        chk.error_at(e, f"The expressions in a ?: conditional have different types "
                     f"'{then.type}' and '{other.type}'")
        return unknown(e)
    if isinstance(cond, A.BoolLit):
        return then if cond.value else other
    e.type = then.type
    return e


# ---------------------------------------------------------------------- casts


def can_cast(src: T.Type, to: T.Type) -> bool:
    """Explicit casts the spec allows."""
    if src == to:
        return True
    if isinstance(to, T.NewType):
        return can_cast(src, to.underlying) or src == to.underlying
    if isinstance(src, T.NewType):
        return can_cast(src.underlying, to)
    if isinstance(src, T.Bits) and isinstance(to, T.Bits):
        return src.width == to.width or src.signed == to.signed
    if isinstance(src, T.Bool) and isinstance(to, T.Bits):
        return to.width == 1 and not to.signed
    if isinstance(src, T.Bits) and isinstance(to, T.Bool):
        return src.width == 1 and not src.signed
    if isinstance(src, T.InfInt):
        return isinstance(to, (T.Bits, T.Bool, T.SerEnum, T.InfInt))
    if isinstance(src, T.SerEnum):
        return can_cast(src.underlying, to)
    if isinstance(to, T.SerEnum):
        return can_cast(src, to.underlying)
    return False


def _cast(chk: Checker, e: A.Cast) -> A.Expr:
    to = chk.resolve(e.to)
    inner = chk.expr(e.expr)
    e.expr = inner
    if is_unknown(to, inner.type):
        return unknown(e)
    src = inner.type
    assert src is not None
    if isinstance(to, (T.Struct, T.Header, T.HeaderUnion, T.Tuple, T.Stack)):
        if isinstance(inner, (A.ListExpr, A.StructExpr)):
            return coerce(chk, inner, to)
        if src == to:
            return inner
        chk.error_at(e, f"{chk.text(e)}: cast not supported")
        return unknown(e)
    if not isinstance(to, (T.Bits, T.Bool, T.NewType, T.SerEnum, T.InfInt)):
        chk.error_at(e, f"{chk.text(e)}: cast not supported")
        return unknown(e)
    if not can_cast(src, to):
        chk.error_at(e, f"{chk.text(e)}: cannot cast from {src} to {to}")
        return unknown(e)
    return fold_cast(chk, e, inner, to)


def fold_cast(chk: Checker, e: A.Cast, inner: A.Expr, to: T.Type) -> A.Expr:
    src = inner.type
    if src == to:
        return inner
    if isinstance(inner, A.EnumValue) and isinstance(src, T.SerEnum):
        inner = F.int_lit(inner.value, src.underlying, inner.pos)
        src = inner.type
    if isinstance(to, T.Bits):
        if isinstance(inner, A.IntLit):
            return F.int_lit(F.cast_int(inner.value, to), to, e.pos)
        if isinstance(inner, A.BoolLit):
            return F.int_lit(int(inner.value), to, e.pos)
    if isinstance(to, T.Bool):
        if isinstance(inner, A.IntLit):
            if isinstance(src, T.InfInt) and inner.value not in (0, 1):
                chk.error_at(e, f"{chk.text(e)}: only 0 and 1 can be cast to bool")
                return unknown(e)
            return F.bool_lit(bool(inner.value), e.pos)
    if isinstance(to, T.InfInt) and isinstance(inner, A.IntLit):
        return F.int_lit(inner.value, to, e.pos)
    if isinstance(to, T.SerEnum) and isinstance(inner, A.IntLit):
        value = F.cast_int(inner.value, to.underlying)
        for m, v in to.members:
            if v == value:
                out = A.EnumValue(e.pos, to.name, m, v)
                out.type = to
                return out
        e.expr = F.int_lit(value, to.underlying, inner.pos)
    elif isinstance(to, T.NewType) and isinstance(inner, A.IntLit):
        base = to.underlying
        if isinstance(base, T.Bits):
            e.expr = F.int_lit(F.cast_int(inner.value, base), base, inner.pos)
    e.type = to
    return e


# ------------------------------------------------------- lists and structures


def _list(chk: Checker, e: A.ListExpr) -> A.Expr:
    e.elements = [chk.expr(x) for x in e.elements]
    for x in e.elements[:-1]:
        if isinstance(x, A.Dots):
            chk.error_at(x, "...: must be the last element of an initializer")
            return unknown(e)
    if any(is_unknown(x.type) for x in e.elements):
        return unknown(e)
    e.type = T.Tuple(tuple(x.type for x in e.elements if x.type is not None))
    return e


def _struct(chk: Checker, e: A.StructExpr) -> A.Expr:
    e.fields = [(n, chk.expr(x)) for n, x in e.fields]
    if any(is_unknown(x.type) for _, x in e.fields):
        return unknown(e)
    e.type = UnknownStruct(tuple(T.FieldType(n, x.type) for n, x in e.fields
                                 if x.type is not None))
    return e


def _dots(chk: Checker, e: A.Dots) -> A.Expr:
    e.type = DefaultValueType("...")
    return e


def _invalid_header(chk: Checker, e: A.InvalidHeader) -> A.Expr:
    e.type = DefaultValueType("{#}")
    return e


def _call(chk: Checker, e: A.Call) -> A.Expr:
    return chk.call(e)


_HANDLERS: dict[type, Callable[..., A.Expr]] = {
    A.IntLit: _int,
    A.BoolLit: _bool,
    A.StringLit: _string,
    A.Name: _name,
    A.Member: _member,
    A.EnumValue: _enum_value,
    A.Index: _index,
    A.Slice: _slice,
    A.Unary: _unary,
    A.Binary: _binary,
    A.Mux: _mux,
    A.Cast: _cast,
    A.Call: _call,
    A.ListExpr: _list,
    A.StructExpr: _struct,
    A.Dots: _dots,
    A.InvalidHeader: _invalid_header,
    A.DefaultExpr: _dontcare,
    A.DontCare: _dontcare,
    A.TypeExpr: _type_expr,
}


# --------------------------------------------------------- implicit conversion


def default_mismatch(chk: Checker) -> Callable[[A.Expr, T.Type, T.Type], str]:
    def message(e: A.Expr, src: T.Type, target: T.Type) -> str:
        return f"{chk.text(e)}: cannot implicitly cast type '{src}' to type '{target}'"

    return message


def literal_to(chk: Checker, e: A.IntLit, t: T.Bits) -> A.IntLit:
    """An untyped constant given the type ``t``; warns, as p4c does, when the value
    does not fit and is wrapped."""
    v = e.value
    if not F.fits(v, t) and not (not t.signed and -(1 << t.width) <= v < 0):
        chk.ctx.warning(e.pos, f"{chk.text(e)}: value does not fit in {t.width} bits",
                        len(chk.text(e)))
    return F.int_lit(v, t, e.pos, e.text)


def coerce(
    chk: Checker,
    e: A.Expr,
    target: T.Type,
    message: Callable[[A.Expr, T.Type, T.Type], str] | None = None,
    assigned: bool = False,
) -> A.Expr:
    """``e`` converted implicitly to ``target``: untyped constants get the type,
    initializer lists and named initializers become struct/header/tuple values,
    serializable enums are read as their underlying type. Anything else must already
    have the target type. ``assigned``: ``e`` is assigned, initializes or is returned
    (not an argument), where p4c also gives an untyped constant a type made with
    ``type`` (``port_t p = 0;``)."""
    src = e.type
    if is_unknown(src, target) or isinstance(target, TypeVar):
        return e
    assert src is not None
    if src == target and not isinstance(e, (A.ListExpr, A.StructExpr)):
        return e
    if isinstance(src, T.InfInt) and isinstance(e, A.IntLit):
        if isinstance(target, T.Bits):
            return literal_to(chk, e, target)
        if isinstance(target, T.InfInt):
            return e
        if assigned and isinstance(target, T.NewType) and isinstance(target.underlying,
                                                                      T.Bits):
            typed = literal_to(chk, e, target.underlying)
            ref = A.NamedTypeRef(e.pos, target.name)
            ref.resolved = target
            return fold_cast(chk, A.Cast(e.pos, ref, typed), typed, target)
    if isinstance(src, T.SerEnum) and target == src.underlying:
        return to_underlying(e)
    if isinstance(e, A.Dots):
        return _dots_to(chk, e, target)
    if isinstance(e, A.InvalidHeader):
        if not isinstance(target, (T.Header, T.HeaderUnion)):
            chk.error_at(e, f"{{#}}: an invalid header cannot have type '{target}'")
            return unknown(e)
        e.type = target
        return e
    if isinstance(e, A.ListExpr):
        out = _list_to(chk, e, target, message)
        if out is not None:
            return out
    if isinstance(e, A.StructExpr):
        out = _struct_to(chk, e, target, message)
        if out is not None:
            return out
    if src == target:
        return e
    if isinstance(target, T.DontCareType):
        return e
    msg = (message or default_mismatch(chk))(e, src, target)
    chk.error_at(e, msg)
    return unknown(e)


def has_default(t: T.Type) -> bool:
    """Whether values of ``t`` have a default value (what ``...`` stands for). A type
    introduced by ``type`` has none, as in p4c."""

    def leaf(x: T.Type) -> bool:
        return isinstance(x, (T.Bits, T.InfInt, T.Varbit, T.Bool, T.String, T.Error,
                              T.Enum, T.SerEnum, T.Header, T.HeaderUnion, T.Stack))

    return T.every_leaf(t, leaf)


def default_value(chk: Checker, pos: A.Pos, t: T.Type) -> A.Expr:
    """The default value of ``t`` (which ``has_default``), as a folded constant where
    the type has constants; headers, stacks, unions and varbits stay a typed ``...``
    (the engine makes a fresh, invalid or empty, value)."""
    out: A.Expr
    if isinstance(t, (T.Bits, T.InfInt)):
        return F.int_lit(0, t, pos)
    if isinstance(t, T.Bool):
        return F.bool_lit(False, pos)
    if isinstance(t, T.String):
        out = A.StringLit(pos, "")
    elif isinstance(t, T.Error):
        out = A.EnumValue(pos, "error", "NoError", chk.ctx.errors.get("NoError", 0))
    elif isinstance(t, T.Enum):
        out = A.EnumValue(pos, t.name, t.members[0], 0)
    elif isinstance(t, T.SerEnum):
        named = [m for m, v in t.members if v == 0]
        if named:
            out = A.EnumValue(pos, t.name, named[0], 0)
        else:
            out = A.Cast(pos, _type_ref(pos, t), F.int_lit(0, t.underlying, pos))
    elif isinstance(t, T.Struct):
        out = A.StructExpr(pos, [(f.name, default_value(chk, pos, f.type)) for f in t.fields])
    elif isinstance(t, T.Tuple):
        out = A.ListExpr(pos, [default_value(chk, pos, x) for x in t.elements])
    else:
        out = A.Dots(pos)
    out.type = t
    return out


def _type_ref(pos: A.Pos, t: T.SerEnum) -> A.TypeRef:
    return A.NamedTypeRef(pos, t.name, resolved=t)


def _dots_to(chk: Checker, e: A.Dots, target: T.Type) -> A.Expr:
    if not has_default(target):
        chk.error_at(e, f"...: type '{target}' has no default value")
        return unknown(e)
    return default_value(chk, e.pos, target)


def _rest_of(
    chk: Checker, e: A.Expr, given: int, types: list[T.Type]
) -> list[A.Expr] | None:
    """The ``...`` ending a list initializer, expanded to the defaults of the elements
    (``types``) after the first ``given``; None (reported) for a type with no default."""
    out = []
    for t in types[given:]:
        if not has_default(t):
            chk.error_at(e, f"{chk.text(e)}: type '{t}' has no default value")
            return None
        out.append(default_value(chk, e.pos, t))
    return out


def _fields_of(t: T.Type) -> tuple[T.FieldType, ...] | None:
    if isinstance(t, (T.Struct, T.Header, T.HeaderUnion)):
        return t.fields
    return None


def _list_to(
    chk: Checker,
    e: A.ListExpr,
    target: T.Type,
    message: Callable[[A.Expr, T.Type, T.Type], str] | None,
) -> A.Expr | None:
    rest = bool(e.elements) and isinstance(e.elements[-1], A.Dots)
    if rest and isinstance(target, (T.Struct, T.Header, T.Tuple, T.Stack)):
        given = e.elements[:-1]
        types = ([f.type for f in target.fields] if isinstance(target, (T.Struct, T.Header))
                 else list(target.elements) if isinstance(target, T.Tuple)
                 else [target.element] * target.size)
        if len(given) > len(types):
            chk.error_at(e, f"{chk.text(e)}: {len(given)} initializers where {target} "
                         f"has {len(types)}")
            return unknown(e)
        rest_values = _rest_of(chk, e, len(given), types)
        if rest_values is None:
            return unknown(e)
        e.elements = given + rest_values
    fields = _fields_of(target)
    if fields is not None:
        if isinstance(target, T.HeaderUnion):
            return None
        if len(e.elements) != len(fields):
            chk.error_at(e, f"{chk.text(e)}: {len(e.elements)} initializers for the "
                         f"{len(fields)} fields of {target}")
            return unknown(e)
        pairs = zip(e.elements, fields, strict=False)
        e.elements = [coerce(chk, x, f.type, message) for x, f in pairs]
    elif isinstance(target, T.Tuple):
        if len(e.elements) != len(target.elements):
            chk.error_at(e, f"{chk.text(e)}: {len(e.elements)} elements where {target} has "
                         f"{len(target.elements)}")
            return unknown(e)
        items = zip(e.elements, target.elements, strict=False)
        e.elements = [coerce(chk, x, t, message) for x, t in items]
    elif isinstance(target, T.Stack):
        if len(e.elements) != target.size:
            chk.error_at(e, f"{chk.text(e)}: number of initializers {len(e.elements)} has to "
                         f"match stack size {target.size}")
            return unknown(e)
        e.elements = [coerce(chk, x, target.element, message) for x in e.elements]
    else:
        return None
    if any(is_unknown(x.type) for x in e.elements):
        return unknown(e)
    e.type = target
    return e


def _struct_to(
    chk: Checker,
    e: A.StructExpr,
    target: T.Type,
    message: Callable[[A.Expr, T.Type, T.Type], str] | None,
) -> A.Expr | None:
    fields = _fields_of(target)
    if fields is None or isinstance(target, T.HeaderUnion):
        return None
    given = dict(e.fields)
    names = [f.name for f in fields]
    for n in given:
        if n not in names:
            chk.error_at(e, f"{chk.text(e)}: {target} has no field {n}")
            return unknown(e)
    for f in fields:
        if f.name in given:
            continue
        if not e.rest:
            chk.error_at(e, f"{chk.text(e)}: no initializer for field {f.name} of {target}")
            return unknown(e)
        if not has_default(f.type):
            chk.error_at(e, f"{chk.text(e)}: field {f.name} of type '{f.type}' has no "
                         "default value")
            return unknown(e)
        given[f.name] = default_value(chk, e.pos, f.type)
    e.rest = False
    e.fields = [(f.name, coerce(chk, given[f.name], f.type, message)) for f in fields]
    if any(is_unknown(x.type) for _, x in e.fields):
        return unknown(e)
    e.type = target
    return e
