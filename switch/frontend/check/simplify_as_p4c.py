"""An expression as p4c-bm2-ss's back end sees it, for the target limits: p4c judges
shift amounts and divisions after its own simplifications, so ``16w0 >> f(x)``, whose
value it folds to ``16w0``, shifts by nothing on BMv2 (and ``f(x)`` still runs, once).

p4c's front end moves every call with side effects out of an expression into a
temporary (``SideEffectOrdering``), and its ``ConstantFolding`` and
``StrengthReduction`` passes rewrite what is left, in the front end and again in the
mid end, once ``LocalCopyPropagation`` has put the operands it moved back together.
``simplify`` applies the same rewrites to a checked expression, with every call as an
opaque operand (the temporary it becomes): operators on constants are folded; ``0 >>
x``, ``0 / x``, ``0 % x``, ``x & 0``, ``x * 0`` are 0; ``x << 0``, ``x + 0``, ``x | 0``,
``x && true`` are ``x``; ``x - x`` is 0; ``x * 2^n`` and ``x / 2^n`` are shifts by the
constant ``n``, ``x % 2^n`` a mask; a slice of a shift by a constant or of a
concatenation keeps the bits it reads; a comparison with the smallest or largest value
of the type is a constant; ``c ? x : y`` with a constant ``c`` is one branch. The
calls' own arguments are separate expressions, which the caller simplifies on their
own.

Where p4c cannot put an operand back (the left operand of an operator whose right
operand calls something that may write what the left one reads, as ``h.a / h.b >=
(0 & f(h.a))``), that operand is ``saved``: judged on its own, whatever the operator
folds to. And ``x && false``, ``x || true`` keep ``x`` when it calls something: p4c
turns the operator into an ``if`` on ``x`` before it folds what the calls leave.

The expression given is never modified: the result is the expression itself, parts of
it, or new nodes (located where the nodes they replace were). p4c's mid end also
propagates the values of local variables and of inlined functions (``bit<8> d = 4; x /
d``), which this does not model: ``ina p4c`` rejects such programs (the README says so).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.print_expressions import expr_text
from switch.frontend.check.walk_expressions import subexpressions, walk_expression

RELATIONS = frozenset({"<", "<=", ">", ">="})


class ZeroDivisor(Exception):
    """``x / 0`` or ``x % 0`` once folded: p4c's StrengthReduction reports it."""

    def __init__(self, e: A.Binary) -> None:
        super().__init__(e)
        self.expr = e


@dataclass
class Simplified:
    expr: A.Expr  # what p4c keeps of the expression
    saved: list[A.Expr] = field(default_factory=list)  # operands judged on their own


def simplify(e: A.Expr) -> Simplified:
    """``e`` as p4c leaves it (see the module's docstring); raises ``ZeroDivisor`` for
    a division or a modulo whose divisor folds to 0."""
    s = _Simplifier()
    return Simplified(s.expr(e), s.saved)


def operators(e: A.Expr) -> Iterator[A.Expr]:
    """``e`` and the expressions inside it, outside calls (a call is an operand)."""
    yield e
    if not isinstance(e, A.Call):
        for x in subexpressions(e):
            yield from operators(x)


def live_calls(e: A.Expr) -> Iterator[A.Call]:
    """The calls in ``e`` that run, outside the arguments of other calls: all of them
    but those in the operand of ``&&``, ``||`` or ``?:`` that a constant leaves out."""
    if isinstance(e, A.Call):
        yield e
        return
    if isinstance(e, A.Binary) and e.op in ("&&", "||"):
        yield from live_calls(e.left)
        if constant_bool(e.left) != (e.op == "||"):
            yield from live_calls(e.right)
        return
    if isinstance(e, A.Mux):
        yield from live_calls(e.cond)
        cond = constant_bool(e.cond)
        for branch, taken in ((e.then, True), (e.other, False)):
            if cond is None or cond == taken:
                yield from live_calls(branch)
        return
    for x in subexpressions(e):
        yield from live_calls(x)


def live_branches(s: A.If) -> list[A.Stmt]:
    """The branches of an ``if`` that p4c keeps: one when the condition folds to a
    constant (its ConstantFolding drops the other)."""
    cond = constant_bool(s.cond)
    if cond is True:
        return [s.then]
    if cond is False:
        return [s.other] if s.other is not None else []
    return [s.then, *([s.other] if s.other is not None else [])]


def select_targets(s: A.Select) -> list[str]:
    """The states a ``select`` may go to once p4c folds it: with constant expressions,
    the cases up to the first that surely matches, without those that cannot."""
    try:
        values = [simplify(e).expr for e in s.exprs]
    except ZeroDivisor:
        values = []
    if not values or not all(F.is_constant(v) for v in values):
        return [case.state for case in s.cases]
    out = []
    for case in s.cases:
        keys = case.keyset.elements if isinstance(case.keyset, A.ListExpr) else [case.keyset]
        if isinstance(case.keyset, A.DefaultExpr):
            keys = [case.keyset] * len(values)
        answers = [_contains(k, v) for k, v in zip(keys, values, strict=False)]
        if False in answers:
            continue
        out.append(case.state)
        if all(answers):
            break
    return out


def _contains(keyset: A.Expr, value: A.Expr) -> bool | None:
    """Whether a keyset holds a constant value (None: cannot tell, a value set)."""
    if isinstance(keyset, A.DefaultExpr):
        return True
    v = F.int_value(value)
    if isinstance(keyset, A.Binary) and keyset.op in ("&&&", ".."):
        a, b = F.int_value(keyset.left), F.int_value(keyset.right)
        if a is None or b is None or v is None:
            return None
        return (v & b) == (a & b) if keyset.op == "&&&" else a <= v <= b
    if F.is_constant(keyset):
        return F.constant_key(keyset) == F.constant_key(value) or (
            v is not None and v == F.int_value(keyset))
    return None


def constant_bool(e: A.Expr) -> bool | None:
    """The value ``e`` folds to in p4c, when it is a constant boolean."""
    try:
        return _bool(simplify(e).expr)
    except ZeroDivisor:
        return None


def has_side_effects(e: A.Expr) -> bool:
    """Whether ``e`` calls something that may have side effects: anything but
    ``isValid()`` and what is annotated ``@noSideEffects``."""
    return any(isinstance(x, A.Call) and not _pure(x) for x in walk_expression(e))


def _pure(call: A.Call) -> bool:
    target = call.target
    if isinstance(target, A.CallBuiltin):
        return target.method == "isValid"
    decl = getattr(target, "function", None) or getattr(target, "overload", None)
    return decl is not None and any(a.name == "noSideEffects" for a in decl.annotations)


# ----------------------------------------------------------------------- the walk


class _Simplifier:
    def __init__(self) -> None:
        self.saved: list[A.Expr] = []

    def expr(self, e: A.Expr) -> A.Expr:
        if isinstance(e, A.Binary):
            return self.binary(e)
        if isinstance(e, A.Unary):
            return self.unary(e)
        if isinstance(e, A.Mux):
            return self.mux(e)
        if isinstance(e, A.Cast):
            inner = self.expr(e.expr)
            if inner is e.expr:
                return e
            folded = _fold_cast(e, inner)
            return folded if folded is not None else _with(e, expr=inner)
        if isinstance(e, A.Slice):
            return self.slice(e, self.expr(e.expr))
        if isinstance(e, A.Member):
            inner = self.expr(e.expr)
            return e if inner is e.expr else _with(e, expr=inner)
        if isinstance(e, A.Index):
            inner, index = self.expr(e.expr), self.expr(e.index)
            return e if inner is e.expr and index is e.index else _with(
                e, expr=inner, index=index)
        if isinstance(e, A.ListExpr):
            elements = [self.expr(x) for x in e.elements]
            if all(a is b for a, b in zip(elements, e.elements, strict=True)):
                return e
            return _with(e, elements=elements)
        if isinstance(e, A.StructExpr):
            fields = [(n, self.expr(x)) for n, x in e.fields]
            if all(a[1] is b[1] for a, b in zip(fields, e.fields, strict=True)):
                return e
            return _with(e, fields=fields)
        return e  # literals, names, calls (opaque), ...

    def unary(self, e: A.Unary) -> A.Expr:
        inner = self.expr(e.expr)
        t = e.type
        if e.op == "+":
            return inner
        if e.op == "!":
            b = _bool(inner)
            if b is not None:
                return F.bool_lit(not b, e.pos)
            if isinstance(inner, A.Unary) and inner.op == "!":
                return inner.expr
        elif e.op in ("~", "-"):
            v = _int(inner)
            if v is not None and t is not None:
                return _lit(F.unary(e.op, v, t), t, e.pos)
            if e.op == "~" and isinstance(inner, A.Unary) and inner.op == "~":
                return inner.expr
        return e if inner is e.expr else _with(e, expr=inner)

    def mux(self, e: A.Mux) -> A.Expr:
        cond = self.expr(e.cond)
        b = _bool(cond)
        if b is not None:
            return self.expr(e.then if b else e.other)
        then, other = self.expr(e.then), self.expr(e.other)
        if _bool(then) is True and _bool(other) is False:
            return cond
        if equivalent(then, other):
            return then
        if cond is e.cond and then is e.then and other is e.other:
            return e
        return _with(e, cond=cond, then=then, other=other)

    def slice(self, e: A.Slice, inner: A.Expr) -> A.Expr:
        hi, lo = _int(e.hi), _int(e.lo)
        if hi is None or lo is None:
            return e if inner is e.expr else _with(e, expr=inner)
        width = hi - lo + 1
        v = _int(inner)
        if v is not None and isinstance(inner.type, T.Bits):
            return _lit(F.slice_bits(v, inner.type.width, hi, lo), T.Bits(width), e.pos)
        if isinstance(inner, A.Binary) and inner.op in ("<<", ">>"):
            # a slice of a shift by a constant reads the shifted value's bits
            k, base = _int(inner.right), inner.left
            bt = base.type
            if k is not None and isinstance(bt, T.Bits) and not (bt.signed and inner.op == ">>"):
                delta = k if inner.op == ">>" else -k
                if lo + delta >= 0 and hi + delta < bt.width:
                    return self.slice(_bounds(e, hi + delta, lo + delta), base)
                if hi + delta < 0:
                    return _lit(0, T.Bits(width), e.pos)
                if lo + delta < 0:
                    part = _bounds(e, hi + delta, 0)
                    part.type = T.Bits(hi + delta + 1)
                    out = A.Binary(e.pos, "++", self.slice(part, base),
                                   _lit(0, T.Bits(-(lo + delta)), e.pos))
                    out.type = e.type
                    return out
        if isinstance(inner, A.Binary) and inner.op == "++" and isinstance(
                inner.right.type, T.Bits):
            # a slice of a concatenation reads one side (or both: left as it is)
            rwidth = inner.right.type.width
            if lo >= rwidth:
                return self.slice(_bounds(e, hi - rwidth, lo - rwidth), inner.left)
            if hi < rwidth:
                return self.slice(e, inner.right)
        return e if inner is e.expr else _with(e, expr=inner)

    def binary(self, e: A.Binary) -> A.Expr:
        op = e.op
        left = self.expr(e.left)
        if op in ("&&", "||"):
            lb = _bool(left)
            if lb is not None:  # the left operand decides, or the right one is the value
                return F.bool_lit(lb, e.pos) if lb == (op == "||") else self.expr(e.right)
        right = self.expr(e.right)
        if (op not in ("&&", "||") and _int(left) is None and _bool(left) is None
                and has_side_effects(e.right) and _writes_reads(e.right, e.left)):
            # p4c saves the left operand into a temporary before the call, and cannot
            # put it back: it is judged on its own, and is an opaque value here
            self.saved.append(left)
            left = A.Name(left.pos, expr_text(e.left))
            left.type, left.decl = e.left.type, object()
        folded = _with(e, left=left, right=right) if (
            left is not e.left or right is not e.right) else e
        assert isinstance(folded, A.Binary)
        constant = _fold(folded)
        if constant is not None:
            return constant
        return _reduce(folded, e)


# -------------------------------------------------------------------- the rewrites


def _fold(e: A.Binary) -> A.Expr | None:
    """ConstantFolding: an operator whose operands are constants (and a shift by 0)."""
    op, left, right, t = e.op, e.left, e.right, e.type
    a, b = _int(left), _int(right)
    if op in ("<<", ">>") and b is not None:
        if b == 0:
            return left
        if a is not None and t is not None:
            return _lit(F.shift(op, a, b, t), t, e.pos)
        return None
    if op in ("==", "!="):
        if F.is_constant(left) and F.is_constant(right):
            same = F.constant_key(left) == F.constant_key(right)
            return F.bool_lit(same == (op == "=="), e.pos)
        return None
    if a is None or b is None:
        return None
    if op in RELATIONS:
        return F.bool_lit(bool(F.compare(op, a, b)), e.pos)
    if op == "++" and isinstance(left.type, T.Bits) and isinstance(right.type, T.Bits):
        joined, ct = F.concat(a, left.type, b, right.type)
        return _lit(joined, ct, e.pos)
    if op in ("/", "%") and b == 0:
        raise ZeroDivisor(e)
    if t is not None and op in ("+", "-", "*", "/", "%", "&", "|", "^", "|+|", "|-|"):
        value = F.arith(op, a, b, t)
        if value is not None:
            return _lit(value, t, e.pos)
    return None


def _reduce(e: A.Binary, original: A.Binary) -> A.Expr:
    """StrengthReduction, rule by rule as p4c applies them to each operator
    (``original``: ``e`` before its operands were simplified)."""
    op, left, right, t = e.op, e.left, e.right, e.type
    if op == "&":
        for a, b in ((left, right), (right, left)):
            if _all_ones(a):
                return b
        for a in (left, right):
            if _is_zero(a):
                return a
        if equivalent(left, right):
            return left
    elif op in ("|", "^"):
        if _is_zero(left):
            return right
        if _is_zero(right):
            return left
        if equivalent(left, right):
            return left if op == "|" else _lit(0, left.type, e.pos)
    elif op in ("&&", "||"):
        rb = _bool(right)
        if rb is not None and rb != (op == "||"):
            return left  # x && true, x || false
        if rb is not None and not has_side_effects(original.left):
            return right  # x && false, x || true
    elif op in ("==", "!="):
        for a, b in ((left, right), (right, left)):
            v = _bool(a)
            if v is not None:
                return b if v == (op == "==") else _node(A.Unary(e.pos, "!", b), T.Bool())
        if equivalent(left, right):
            return F.bool_lit(op == "==", e.pos)
    elif op in RELATIONS:
        return _relation(e)
    elif op in ("-", "|-|"):
        if _is_zero(right):
            return left
        if _is_zero(left):
            if op == "-":
                return _node(A.Unary(e.pos, "-", right), t)
            if isinstance(t, T.Bits) and not t.signed:
                return left
        if equivalent(left, right):
            return _lit(0, left.type, e.pos)
    elif op in ("+", "|+|"):
        if _is_zero(right):
            return left
        if _is_zero(left):
            return right
    elif op in ("<<", ">>"):
        if _is_zero(right):
            return left
        if (isinstance(left, A.Binary) and left.op == op
                and isinstance(left.right.type, T.InfInt) and isinstance(right.type, T.InfInt)):
            # (a << b) << c is a << (b + c)
            amount = A.Binary(e.pos, "+", left.right, right)
            amount.type = T.InfInt()
            return _node(A.Binary(e.pos, op, left.left, _fold(amount) or amount), t)
        if _is_zero(left):
            return left
    elif op == "*":
        for a, b in ((left, right), (right, left)):
            if _is_one(a):
                return b
        for a, b in ((left, right), (right, left)):
            k = _power_of_two(a)
            if k >= 0:
                return _node(A.Binary(e.pos, "<<", b, _lit(k, T.InfInt(), e.pos)), t)
        for a in (left, right):
            if _is_zero(a):
                return a
    elif op in ("/", "%"):
        if _is_zero(right):
            raise ZeroDivisor(e)
        if _is_zero(left):
            return left
        if op == "/" and _is_one(right):
            return left
        k = _power_of_two(right)
        if k >= 0 and op == "/":
            return _node(A.Binary(e.pos, ">>", left, _lit(k, T.InfInt(), e.pos)), t)
        if k >= 0:
            return _node(A.Binary(e.pos, "&", left, _lit((1 << k) - 1, right.type, e.pos)), t)
    elif op == "++":
        if isinstance(left.type, T.Bits) and left.type.width == 0:
            return right
        if isinstance(right.type, T.Bits) and right.type.width == 0:
            return left
    return e


def _relation(e: A.Binary) -> A.Expr:
    """``x < x``, and comparisons with the smallest or largest value of the type."""
    op, left, right = e.op, e.left, e.right
    greater, equal = op in (">", ">="), op in ("<=", ">=")
    if equivalent(left, right):
        return F.bool_lit(equal, e.pos)
    t = left.type
    if left.type != right.type or not isinstance(t, T.Bits):
        return e
    if t.signed:
        low, high = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
    else:
        low, high = 0, (1 << t.width) - 1
    c = _int(right)
    if c is not None:
        if c == (high if greater != equal else low):
            return F.bool_lit(equal, e.pos)
    else:
        c = _int(left)
        if c is not None and c == (low if greater != equal else high):
            return F.bool_lit(equal, e.pos)
    return e


def _fold_cast(e: A.Cast, inner: A.Expr) -> A.Expr | None:
    t = e.type
    v = _int(inner)
    if isinstance(t, T.Bits):
        if v is not None:
            return _lit(F.cast_int(v, t), t, e.pos)
        b = _bool(inner)
        if b is not None:
            return _lit(int(b), t, e.pos)
    if isinstance(t, T.Bool) and v in (0, 1):
        return F.bool_lit(v == 1, e.pos)
    return None


def _writes_reads(writer: A.Expr, reader: A.Expr) -> bool:
    """Whether the calls in ``writer`` may write something ``reader`` reads: a table or
    a parser or control applied may write anything, other calls their ``out`` and
    ``inout`` arguments."""
    written: list[str] = []
    for x in walk_expression(writer):
        if not isinstance(x, A.Call):
            continue
        if isinstance(x.target, (A.CallTableApply, A.CallSubApply)):
            return True
        params = _params(x.target)
        for p, arg in zip(params, x.resolved_args, strict=False):
            if p.direction in ("out", "inout") and arg is not None:
                written.append(_storage(arg))
    read = [_storage(x) for x in walk_expression(reader)
            if isinstance(x, (A.Name, A.Member, A.Index))]
    return any(_overlap(w, r) for w in written for r in read)


def _params(target: A.CallTarget | None) -> list[A.Param]:
    for name in ("function", "overload", "action"):
        decl = getattr(target, name, None)
        if decl is not None:
            return list(decl.params)
    return []


def _storage(e: A.Expr) -> str:
    """The storage an l-value names, as a path (an element of a stack stands for the
    whole stack)."""
    return expr_text(e).split("[")[0]


def _overlap(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return long == short or long.startswith(short + ".")


# ----------------------------------------------------------------------- helpers


def _with(e: A.Expr, **fields: object) -> A.Expr:
    out = copy.copy(e)
    for name, value in fields.items():
        setattr(out, name, value)
    return out


def _bounds(e: A.Slice, hi: int, lo: int) -> A.Slice:
    out = copy.copy(e)
    out.hi, out.lo = _lit(hi, T.InfInt(), e.pos), _lit(lo, T.InfInt(), e.pos)
    return out


def _node(e: A.Expr, t: T.Type | None) -> A.Expr:
    e.type = t
    return e


def _int(e: A.Expr) -> int | None:
    return e.value if isinstance(e, A.IntLit) else None


def _bool(e: A.Expr) -> bool | None:
    return e.value if isinstance(e, A.BoolLit) else None


def _is_zero(e: A.Expr) -> bool:
    t = e.type
    return (isinstance(t, T.Bits) and t.width == 0) or _int(e) == 0


def _is_one(e: A.Expr) -> bool:
    return _int(e) == 1


def _power_of_two(e: A.Expr) -> int:
    """log2 of a positive power-of-two constant, else -1."""
    v = _int(e)
    if v is None or v <= 0 or v & (v - 1):
        return -1
    return v.bit_length() - 1


def _all_ones(e: A.Expr) -> bool:
    v, t = _int(e), e.type
    return v is not None and v > 0 and isinstance(t, T.Bits) and v == (1 << t.width) - 1


def _lit(value: int, t: T.Type | None, pos: A.Pos) -> A.IntLit:
    return F.int_lit(value, t if t is not None else T.InfInt(), pos)


def equivalent(a: A.Expr, b: A.Expr) -> bool:
    """The same expression, as p4c's ``equiv`` tells (two calls never are)."""
    ka = _key(a)
    return ka is not None and ka == _key(b)


def _key(e: A.Expr) -> object | None:
    """A value equal for equivalent expressions; None for one with a call."""
    if isinstance(e, A.IntLit):
        return ("int", e.value, e.type)
    if isinstance(e, A.BoolLit):
        return ("bool", e.value)
    if isinstance(e, A.EnumValue):
        return ("enum", e.enum, e.member)
    if isinstance(e, A.Name):
        return ("name", e.name, id(e.decl))
    if isinstance(e, A.Call):
        return None
    parts: list[object] = [type(e).__name__, getattr(e, "op", None),
                           getattr(e, "name", None)]
    if isinstance(e, A.Cast):
        parts.append(e.type)
    for x in subexpressions(e):
        k = _key(x)
        if k is None:
            return None
        parts.append(k)
    if not subexpressions(e):
        return None  # something this does not compare
    return tuple(parts)
