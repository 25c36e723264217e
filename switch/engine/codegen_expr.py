"""Expressions to Python expressions.

``expr(e)`` returns Python source for the value of ``e``; anything with side effects
(calls, table applications, aggregate construction) is emitted as statements before
the statement being compiled, and ``expr`` returns the temporary holding its result.
Values keep the representation invariant (bit<W> in [0, 2^W), int<W> signed), so
masking happens only where an operation can leave the range.
"""

from __future__ import annotations

from dataclasses import dataclass

from switch.engine.codegen import FuncGenBase
from switch.engine.layout import attr, is_signed, scalar_width, strip, struct_leaves
from switch.frontend import ast as A
from switch.frontend import types as T

AGGREGATE = (T.Header, T.Struct, T.HeaderUnion, T.Stack)

# a field-list leaf: (value code, width in bits or code for it, validity guard code)
Leaf = tuple[str, int | str, str | None]


@dataclass(eq=False, slots=True)
class Raw(A.Expr):
    """An already-compiled Python expression in place of a P4 expression."""

    code: str = ""


def is_aggregate(t: T.Type | None) -> bool:
    return isinstance(strip(t), AGGREGATE) if t is not None else False


def _simple(code: str) -> bool:
    """Code whose value cannot change by running other statements first."""
    s = code.strip("()- ")
    return s.isdigit() or s in ("True", "False") or s.startswith("0x")


class ExprMixin(FuncGenBase):
    # ------------------------------------------------------------ entry point

    def expr(self, e: A.Expr) -> str:
        m = getattr(self, "_x_" + type(e).__name__, None)
        if m is None:
            raise self.unsupported(f"expression {type(e).__name__}", e)
        return m(e)

    def cond(self, e: A.Expr) -> str:
        return self.expr(e)

    # ------------------------------------------------------------- literals

    def _x_IntLit(self, e: A.IntLit) -> str:
        t = self.ty(e)
        v = e.value
        if isinstance(t, T.Bits):
            w = t.width
            v &= (1 << w) - 1
            if t.signed and v >> (w - 1):
                v -= 1 << w
        elif isinstance(t, T.Bool):
            return "True" if v else "False"
        return f"({v})" if v < 0 else str(v)

    def _x_Raw(self, e: Raw) -> str:
        return e.code

    def _x_BoolLit(self, e: A.BoolLit) -> str:
        return "True" if e.value else "False"

    def _x_StringLit(self, e: A.StringLit) -> str:
        return repr(e.value)

    def _x_EnumValue(self, e: A.EnumValue) -> str:
        v = e.value
        t = self.ty(e)
        if isinstance(t, T.SerEnum) and t.underlying.signed and v >> (t.underlying.width - 1):
            v -= 1 << t.underlying.width
        return f"({v})" if v < 0 else str(v)

    def _x_Dots(self, e: A.Dots) -> str:
        return self.types.default(self.ty(e))

    def _x_InvalidHeader(self, e: A.InvalidHeader) -> str:
        return self.types.default(self.ty(e))

    def _x_DefaultExpr(self, e: A.DefaultExpr) -> str:
        raise self.unsupported("'default' outside a keyset", e)

    def _x_TypeExpr(self, e: A.TypeExpr) -> str:
        raise self.unsupported("a type used as a value", e)

    # ----------------------------------------------------------------- names

    def _x_Name(self, e: A.Name) -> str:
        d = e.decl
        code = self.lookup(d)
        if code is not None:
            return code
        if isinstance(d, A.ConstDecl):
            return self.expr(d.value)
        if isinstance(d, A.Param) and self.block is not None and d.name in self.block.ctor_args:
            return self.const_value(self.block.ctor_args[d.name], e)
        if isinstance(d, A.Param) and d.default is not None:
            return self.expr(d.default)
        raise self.unsupported(f"reference to {e.name!r} ({type(d).__name__})", e)

    def const_value(self, v: object, node: A.Node) -> str:
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, int):
            return f"({v})" if v < 0 else str(v)
        if isinstance(v, str):
            return repr(v)
        if isinstance(v, A.Expr):
            return self.expr(v)
        raise self.unsupported(f"constructor argument {v!r}", node)

    def _x_Member(self, e: A.Member) -> str:
        base = e.expr
        if isinstance(base, A.Call) and isinstance(base.target, A.CallTableApply):
            hit, act = self.table_apply(base)  # type: ignore[attr-defined]
            if e.name == "hit":
                return hit
            if e.name == "miss":
                return f"(not {hit})"
            if e.name == "action_run":
                return act
            raise self.unsupported(f"table result member {e.name}", e)
        bt = self.ty(base)
        if isinstance(bt, (T.Header, T.Struct, T.HeaderUnion)):
            return f"{self.expr(base)}.{attr(e.name)}"
        if isinstance(bt, T.Stack):
            s = self.expr(base)
            err = self.program.errors
            if e.name == "size":
                return str(bt.size)
            if e.name == "lastIndex":
                return f"(({s}.nxt - 1) & 0xFFFFFFFF)"
            if e.name == "last":
                return f"_stack_last({s}, {self.bo_code()}, {err.get('StackOutOfBounds', 3)})"
            if e.name == "next":
                if self.kind != "parser":
                    return f"_stack_get({s}, {s}.nxt)"
                return f"_stack_next({s}, {self.bo_code()}, {err.get('StackOutOfBounds', 3)})"
            raise self.unsupported(f"header stack member {e.name}", e)
        if isinstance(bt, T.Tuple):
            raise self.unsupported("member of a tuple", e)
        raise self.unsupported(f"member {e.name} of {bt}", e)

    def bo_code(self) -> str:
        return "_bo" if self.kind == "parser" else "0"

    def _x_Index(self, e: A.Index) -> str:
        bt = self.ty(e.expr)
        base = self.expr(e.expr)
        if isinstance(bt, T.Tuple):
            return f"{base}[{self.expr(e.index)}]"
        if not isinstance(bt, T.Stack):
            raise self.unsupported(f"indexing a {bt}", e)
        if isinstance(e.index, A.IntLit) and 0 <= e.index.value < bt.size:
            return f"{base}.elems[{e.index.value}]"
        return f"_stack_get({base}, {self.expr(e.index)})"

    # ------------------------------------------------------------- operators

    def _x_Slice(self, e: A.Slice) -> str:
        hi = self._const_int(e.hi)
        lo = self._const_int(e.lo)
        m = (1 << (hi - lo + 1)) - 1
        v = self.expr(e.expr)
        if self.ty(e.expr) == T.Bool():
            v = f"int({v})"
        return f"(({v} >> {lo}) & {m})" if lo else f"({v} & {m})"

    def _const_int(self, e: A.Expr) -> int:
        if isinstance(e, A.IntLit):
            return e.value
        raise self.unsupported("a non-constant slice bound", e)

    def _x_Unary(self, e: A.Unary) -> str:
        t = self.ty(e)
        v = self.expr(e.expr)
        if e.op == "!":
            return f"(not {v})"
        if e.op == "+":
            return v
        if isinstance(t, T.Bits):
            w = t.width
            m = (1 << w) - 1
            if e.op == "~":
                return f"(~{v})" if t.signed else f"({v} ^ {m})"
            if e.op == "-":
                return self.wrap(f"-{v}", t)
        if isinstance(t, T.InfInt):
            return f"({e.op}{v})"
        raise self.unsupported(f"unary {e.op} on {t}", e)

    def wrap(self, code: str, t: T.Type) -> str:
        """Reduce ``code`` (any Python int) into the range of ``t``."""
        t = strip(t)
        if isinstance(t, T.Bits):
            m = (1 << t.width) - 1
            if t.signed:
                h = 1 << (t.width - 1)
                return f"((({code}) + {h} & {m}) - {h})"
            return f"(({code}) & {m})"
        if isinstance(t, T.SerEnum):
            return self.wrap(code, t.underlying)
        return f"({code})"

    def _x_Binary(self, e: A.Binary) -> str:
        op = e.op
        if op in ("&&", "||"):
            return self._short_circuit(e)
        if op in ("&&&", ".."):
            raise self.unsupported(f"{op} outside a keyset", e)
        if op in ("==", "!=") and isinstance(self.ty(e.left), T.Varbit):
            return self._varbit_equality(e)
        a = self.expr(e.left)
        with self.em.capture() as lines:
            b = self.expr(e.right)
        if lines:
            if not _simple(a):
                ta = self.tmp()
                self.em(f"{ta} = {a}")
                a = ta
            self.em.extend(lines)
        lt = self.ty(e.left)
        t = self.ty(e)
        if op in ("==", "!="):
            if is_aggregate(lt):
                r = f"{a}.eq({b})"
                return r if op == "==" else f"(not {r})"
            return f"({a} {op} {b})"
        if op in ("<", "<=", ">", ">="):
            return f"({a} {op} {b})"
        if op == "++":
            rt = self.ty(e.right)
            wr = scalar_width(rt)
            if is_signed(rt):
                b = f"({b} & {(1 << wr) - 1})"
            elif isinstance(rt, T.Bool):
                b = f"int({b})"
            if isinstance(lt, T.Bool):
                a = f"int({a})"
            r = f"(({a} << {wr}) | {b})"
            if isinstance(t, T.Bits) and is_signed(lt) != t.signed:
                return self.wrap(r, t)
            return r
        if isinstance(t, T.Bool):
            return f"({a} {op} {b})"
        if isinstance(t, T.InfInt):
            pyop = {"/": "//", "|+|": "+", "|-|": "-"}.get(op, op)
            return f"({a} {pyop} {b})"
        if not isinstance(t, T.Bits):
            raise self.unsupported(f"operator {op} on {t}", e)
        w = t.width
        m = (1 << w) - 1
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op in ("+", "-", "*"):
            return self.wrap(f"{a} {op} {b}", t)
        if op in ("/", "%"):
            if t.signed:
                raise self.unsupported(f"{op} on signed values", e)
            pyop = "//" if op == "/" else "%"
            if isinstance(e.right, A.IntLit) and e.right.value:
                return f"({a} {pyop} {b})"
            # a divisor known only at run time: p4c-bm2-ss lets one through only where
            # it folds the operator away (0 / f(x), (x / y) * 0), so its value does not
            # matter, but a zero divisor must not stop the packet
            d = self.tmp("_d")
            return f"({a} {pyop} {d} if ({d} := {b}) else 0)"
        if op == "|+|":
            if t.signed:
                h = 1 << (w - 1)
                return f"max(min({a} + {b}, {h - 1}), {-h})"
            return f"min({a} + {b}, {m})"
        if op == "|-|":
            if t.signed:
                h = 1 << (w - 1)
                return f"max(min({a} - {b}, {h - 1}), {-h})"
            return f"max({a} - {b}, 0)"
        if op == "<<":
            if isinstance(e.right, A.IntLit):
                n = e.right.value
                if n >= w:
                    return "0"
                return self.wrap(f"{a} << {n}", t)
            s = self.tmp("_s")
            inner = self.wrap(f"{a} << {s}", t)
            return f"({inner} if ({s} := {b}) < {w} else 0)"
        if op == ">>":
            if isinstance(e.right, A.IntLit) and e.right.value >= w:
                return "(-1 if " + a + " < 0 else 0)" if t.signed else "0"
            return f"({a} >> {b})"
        raise self.unsupported(f"operator {op}", e)

    def _varbit_equality(self, e: A.Binary) -> str:
        """Varbits are equal when their current widths and their bits are."""
        (va, wa), (vb, wb) = self._varbit_ref(e.left), self._varbit_ref(e.right)
        r = f"({va} == {vb} and {wa} == {wb})"
        return r if e.op == "==" else f"(not {r})"

    def assign_varbit(self, target: A.Expr, value: A.Expr) -> None:
        """The target takes the value's bits and its current width."""
        tv, tw = self._varbit_ref(target)
        v, w = self._varbit_ref(value)
        self.em(f"{tv}, {tw} = {v}, {w}")

    def _varbit_ref(self, e: A.Expr) -> tuple[str, str]:
        """(value, width) code of a varbit header field, local variable or parameter
        (a local or a parameter is two Python variables: the value and, with ``_w``
        appended, the width)."""
        if isinstance(e, A.Name) and isinstance(e.decl, (A.VarDecl, A.Param)):
            v = self.expr(e)
            return v, f"{v}_w"
        if not (isinstance(e, A.Member) and isinstance(self.ty(e.expr), T.Header)):
            raise self.unsupported("a varbit value that is not a header field, a local "
                                   "variable or a parameter", e)
        h = self.expr(e.expr)
        if not _simple_ref(h):
            t = self.tmp("_h")
            self.em(f"{t} = {h}")
            h = t
        return f"{h}.{attr(e.name)}", f"{h}.w_{e.name}"

    def _short_circuit(self, e: A.Binary) -> str:
        a = self.expr(e.left)
        with self.em.capture() as lines:
            b = self.expr(e.right)
        pyop = "and" if e.op == "&&" else "or"
        if not lines:
            return f"({a} {pyop} {b})"
        t = self.tmp()
        self.em(f"{t} = {a}")
        self.em(f"if {'' if e.op == '&&' else 'not '}{t}:")
        self.em.extend(lines, 1)
        self.em(f"    {t} = {b}")
        return t

    def _x_Mux(self, e: A.Mux) -> str:
        c = self.expr(e.cond)
        with self.em.capture() as l1:
            a = self.expr(e.then)
        with self.em.capture() as l2:
            b = self.expr(e.other)
        if not l1 and not l2:
            return f"({a} if {c} else {b})"
        t = self.tmp()
        self.em(f"if {c}:")
        self.em.extend(l1, 1)
        self.em(f"    {t} = {a}")
        self.em("else:")
        self.em.extend(l2, 1)
        self.em(f"    {t} = {b}")
        return t

    def _x_Cast(self, e: A.Cast) -> str:
        to = strip(e.type) if e.type is not None else strip(e.to.resolved)  # type: ignore[arg-type]
        if isinstance(e.expr, (A.ListExpr, A.StructExpr)):
            e.expr.type = to
            return self.expr(e.expr)
        src = self.ty(e.expr)
        v = self.expr(e.expr)
        return self.convert(v, src, to, e)

    def convert(self, v: str, src: T.Type, to: T.Type, node: A.Node) -> str:
        src, to = strip(src), strip(to)
        if isinstance(src, T.SerEnum):
            src = src.underlying
        if isinstance(to, T.SerEnum):
            to = to.underlying
        if src == to:
            return v
        if isinstance(to, T.Bool):
            return f"({v} != 0)" if not isinstance(src, T.Bool) else v
        if isinstance(src, T.Bool):
            v = f"int({v})"
            src = T.Bits(1)
        if isinstance(to, T.Bits):
            w = to.width
            m = (1 << w) - 1
            if to.signed:
                if isinstance(src, T.Bits) and src.signed and src.width <= w:
                    return v
                h = 1 << (w - 1)
                if isinstance(src, T.Bits) and not src.signed and src.width == w:
                    return f"(({v} ^ {h}) - {h})"
                return f"((({v} & {m}) ^ {h}) - {h})"
            if isinstance(src, T.Bits) and not src.signed and src.width <= w:
                return v
            return f"({v} & {m})"
        if isinstance(to, T.InfInt):
            return v
        if isinstance(to, (T.Enum, T.Error)):
            return v
        raise self.unsupported(f"cast from {src} to {to}", node)

    # -------------------------------------------------------- aggregates

    def _x_ListExpr(self, e: A.ListExpr) -> str:
        t = self.ty(e) if e.type is not None else T.Tuple(())
        if isinstance(t, (T.Header, T.Struct)):
            items = [(f.name, x) for f, x in zip(t.fields, e.elements, strict=False)]
            return self._build(t, items, e)
        if isinstance(t, T.Stack):
            obj = self.tmp("_o")
            self.em(f"{obj} = {self.types.cls(t)}()")
            for i, x in enumerate(e.elements):
                self.em(f"{obj}.elems[{i}].assign({self.expr(x)})")
            return obj
        vals = [self.expr(x) for x in e.elements]
        return "(" + "".join(v + ", " for v in vals) + ")"

    def _x_StructExpr(self, e: A.StructExpr) -> str:
        t = self.ty(e)
        if isinstance(t, (T.Header, T.Struct)):
            return self._build(t, list(e.fields), e)
        if isinstance(t, T.Tuple):
            return "(" + "".join(self.expr(x) + ", " for _n, x in e.fields) + ")"
        raise self.unsupported(f"struct initialiser of type {t}", e)

    def _build(self, t: T.Header | T.Struct, items: list[tuple[str, A.Expr]], node: A.Node) -> str:
        obj = self.tmp("_o")
        self.em(f"{obj} = {self.types.cls(t)}()")
        ftypes = {f.name: f.type for f in t.fields}
        for name, x in items:
            ft = ftypes.get(name)
            if ft is not None and x.type is None:
                x.type = ft
            v = self.expr(x)
            if ft is not None and is_aggregate(ft):
                self.em(f"{obj}.{attr(name)}.assign({v})")
            else:
                if ft is not None and isinstance(strip(x.type), T.InfInt):  # type: ignore[arg-type]
                    v = self.wrap(v, ft)
                self.em(f"{obj}.{attr(name)} = {v}")
        if isinstance(t, T.Header):
            self.em(f"{obj}.valid = True")
        return obj

    # ---------------------------------------------------------- assignment

    def assign(self, target: A.Expr, value: str, value_type: T.Type | None = None) -> None:
        """Emit ``target = value`` (aggregates are copied into the target object)."""
        tt = self.ty(target)
        if is_aggregate(tt):
            self.em(f"{self.expr(target)}.assign({value})")
            return
        if isinstance(tt, T.Varbit):  # ``value`` is a (value, width) pair
            tv, tw = self._varbit_ref(target)
            self.em(f"{tv}, {tw} = {value}")
            return
        if value_type is not None and isinstance(strip(value_type), T.InfInt):
            value = self.wrap(value, tt)
        if isinstance(target, A.Name):
            code = self.lookup(target.decl)
            if code is None:
                raise self.unsupported(f"assignment to {target.name}", target)
            self.em(f"{code} = {value}")
            return
        if isinstance(target, Raw):
            self.em(f"{target.code} = {value}")
            return
        if isinstance(target, A.Member):
            bt = self.ty(target.expr)
            if isinstance(bt, (T.Header, T.Struct, T.HeaderUnion)):
                self.em(f"{self.expr(target.expr)}.{attr(target.name)} = {value}")
                return
            raise self.unsupported(f"assignment to member {target.name} of {bt}", target)
        if isinstance(target, A.Slice):
            hi = self._const_int(target.hi)
            lo = self._const_int(target.lo)
            bt = self.ty(target.expr)
            w = scalar_width(bt)
            full = (1 << w) - 1
            m = (1 << (hi - lo + 1)) - 1
            keep = full ^ (m << lo)
            cur = self.expr(target.expr)
            if is_signed(bt):
                cur = f"({cur} & {full})"
            new = f"(({cur} & {keep}) | (({value} & {m}) << {lo}))"
            if is_signed(bt):
                h = 1 << (w - 1)
                new = f"(({new} ^ {h}) - {h})"
            self.assign(target.expr, new)
            return
        if isinstance(target, A.Index) and isinstance(self.ty(target.expr), T.Tuple):
            # a tuple is an immutable Python tuple: the whole tuple is replaced
            i = self._const_int(target.index)
            base = self.expr(target.expr)
            self.assign(target.expr, f"({base}[:{i}] + ({value},) + {base}[{i + 1}:])")
            return
        if isinstance(target, A.Index):
            raise self.unsupported("assignment to a non-header stack element", target)
        raise self.unsupported(f"assignment to {type(target).__name__}", target)

    # -------------------------------------------------------- serialisation

    def flatten(self, e: A.Expr, guard: str | None = None) -> list[Leaf]:
        """The scalar leaves of ``e`` as (code, width, validity guard), in order, as
        BMv2 serialises a field list (fields of invalid headers are skipped). A varbit
        leaf has its width as code (its current width, known only at run time)."""
        t = self.ty(e) if e.type is not None or not isinstance(e, A.ListExpr) else T.Tuple(())
        if isinstance(e, A.ListExpr) and not isinstance(t, (T.Header, T.Struct)):
            out: list[Leaf] = []
            for x in e.elements:
                out += self.flatten(x, guard)
            return out
        if isinstance(e, A.StructExpr) and isinstance(t, T.Tuple):
            out = []
            for _n, x in e.fields:
                out += self.flatten(x, guard)
            return out
        if isinstance(t, T.Header):
            h = self.expr(e)
            if not _simple_ref(h):
                tmp = self.tmp("_h")
                self.em(f"{tmp} = {h}")
                h = tmp
            g = f"{h}.valid"
            out = []
            for f in t.fields:
                ft = strip(f.type)
                if isinstance(ft, T.Varbit):
                    out.append((f"{h}.{attr(f.name)}", f"{h}.w_{f.name}", g))
                    continue
                out += [(f"{h}.{p.attr}", p.width, g) for p in struct_leaves(ft, attr(f.name))]
            return out
        if isinstance(t, (T.Struct, T.HeaderUnion)):
            s = self.expr(e)
            out = []
            for f in t.fields:
                sub = A.Member(e.pos, Raw(e.pos, s, type=t), f.name, type=f.type)
                out += self.flatten(sub, guard)
            return out
        if isinstance(t, T.Stack):
            s = self.expr(e)
            out = []
            for i in range(t.size):
                el = A.Index(e.pos, Raw(e.pos, s, type=t), A.IntLit(e.pos, i, type=T.Bits(32)),
                             type=t.element)
                out += self.flatten(el, guard)
            return out
        if isinstance(t, T.Varbit):
            if not (isinstance(e, A.Member) and isinstance(self.ty(e.expr), T.Header)):
                value, width = self._varbit_ref(e)
                return [(value, width, guard)]
            h = self.expr(e.expr)
            return [(f"{h}.{attr(e.name)}", f"{h}.w_{e.name}", f"{h}.valid")]
        code = self.expr(e)
        w = scalar_width(t) if not isinstance(t, T.InfInt) else 32
        if isinstance(e, A.Member) and isinstance(self.ty(e.expr), T.Header):
            guard = f"{self.expr(e.expr)}.valid"
        if is_signed(t):
            code = f"({code} & {(1 << w) - 1})"
        elif isinstance(t, T.Bool):
            code = f"int({code})"
        return [(code, w, guard)]

    def serialize_int(self, e: A.Expr) -> tuple[str, int, str | None] | None:
        """(code of the concatenated value, width in bits, validity guard) when all
        leaves share one guard; None otherwise."""
        leaves = self.flatten(e)
        guards = {g for _c, _w, g in leaves}
        if len(guards) != 1:
            return None
        (g,) = guards
        acc = ""
        total = 0
        for c, w, _g in leaves:
            if not isinstance(w, int):
                return None
            acc = c if not acc else f"(({acc}) << {w} | {c})"
            total += w
        return (acc or "0"), total, g

    def serialize(self, e: A.Expr, payload: str | None = None) -> str:
        """Python code for the bytes of field list ``e`` (BMv2's serialisation)."""
        leaves = self.flatten(e)
        guards = {g for _c, _w, g in leaves}
        fixed = all(isinstance(w, int) for _c, w, _g in leaves)
        if len(guards) == 1 and fixed:
            (g,) = guards
            total = sum(w for _c, w, _g in leaves if isinstance(w, int))
            pad = (-total) & 7
            acc = ""
            for c, w, _g in leaves:
                acc = c if not acc else f"(({acc}) << {w} | {c})"
            if not acc:
                code = "b''"
            else:
                if pad:
                    acc = f"(({acc}) << {pad})"
                code = f"({acc}).to_bytes({(total + pad) // 8}, 'big')"
            if g is not None:
                code = f"({code} if {g} else b'')"
        else:
            items = ", ".join(f"({c}, {w}, {g or 'True'})" for c, w, g in leaves)
            code = f"_pack_bits(({items},))"
        if payload:
            code = f"({code} + {payload})"
        return code


def _simple_ref(code: str) -> bool:
    return all(ch.isalnum() or ch in "._" for ch in code)
