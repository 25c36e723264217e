"""Expressions to C: ``expr(e)`` returns a C expression of type ``u64`` or ``i64``
(see ``c_base``); side effects (calls, table applications, aggregate construction)
are emitted as statements first, as the Python engine's ``codegen_expr`` does, with the
same wrap, shift, division and cast rules."""

from __future__ import annotations

from switch.engine.codegen_expr import Raw
from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.native.c_base import SCALARS, FuncState, signed, width

AGGREGATE = (T.Header, T.Struct)


def is_aggregate(t: T.Type | None) -> bool:
    return t is not None and isinstance(strip(t), (T.Header, T.Struct, T.HeaderUnion, T.Stack))


def mask(w: int) -> str:
    return f"0x{(1 << w) - 1:x}ull"


def lit(v: int, t: T.Type) -> str:
    if signed(t):
        if v == -(1 << 63):
            return "((i64)(-9223372036854775807LL - 1))"
        return f"((i64){v}LL)"
    return f"((u64)0x{v & ((1 << 64) - 1):x}ull)"


def _simple(code: str) -> bool:
    s = code.strip("() ")
    return s.startswith(("(u64)0x", "(i64)", "0x")) or s.isdigit()


class ExprMixin(FuncState):
    # --------------------------------------------------------------- entry point

    def expr(self, e: A.Expr) -> str:
        m = getattr(self, "_x_" + type(e).__name__, None)
        if m is None:
            raise self.unsupported(f"expression {type(e).__name__}", e)
        code: str = m(e)
        return code

    def wrap(self, code: str, t: T.Type) -> str:
        """Reduce ``code`` (computed in 64 bits) into the range of ``t``."""
        t = strip(t)
        if isinstance(t, T.SerEnum):
            t = t.underlying
        if isinstance(t, T.Bits):
            if t.signed:
                return f"sext((u64)({code}), {t.width})"
            return f"((u64)({code}) & {mask(t.width)})" if t.width < 64 else f"((u64)({code}))"
        if isinstance(t, T.Bool):
            return f"((u64)(({code}) != 0))"
        return f"((u64)({code}))"

    # ------------------------------------------------------------------ literals

    def _x_IntLit(self, e: A.IntLit) -> str:
        t = self.ty(e)
        v = e.value
        if isinstance(t, T.Bits):
            w = t.width
            if w > 64:
                raise self.unsupported(f"{t}: wider than 64 bits", e)
            v &= (1 << w) - 1
            if t.signed and v >> (w - 1):
                v -= 1 << w
            return lit(v, t)
        if isinstance(t, T.Bool):
            return "((u64)1)" if v else "((u64)0)"
        if isinstance(t, T.InfInt):
            if not -(1 << 63) <= v < (1 << 63):
                raise self.unsupported("an integer constant wider than 64 bits", e)
            return lit(v, T.Bits(64, True))
        return lit(v, t)

    def _x_Raw(self, e: Raw) -> str:
        return e.code

    def _x_BoolLit(self, e: A.BoolLit) -> str:
        return "((u64)1)" if e.value else "((u64)0)"

    def _x_EnumValue(self, e: A.EnumValue) -> str:
        t = self.ty(e)
        v = e.value
        if isinstance(t, T.SerEnum):
            u = t.underlying
            if u.signed and v >> (u.width - 1):
                v -= 1 << u.width
            return lit(v, u)
        return lit(v, T.Bits(32))

    def _x_Name(self, e: A.Name) -> str:
        d = e.decl
        code = self.lookup(d)
        if code is not None:
            return code
        if isinstance(d, A.ConstDecl):
            return self.expr(d.value)
        if isinstance(d, A.Param) and self.block is not None and d.name in self.block.ctor_args:
            v = self.block.ctor_args[d.name]
            if isinstance(v, bool):
                return "((u64)1)" if v else "((u64)0)"
            if isinstance(v, int):
                return lit(v, self.ty(e))
            if isinstance(v, A.Expr):
                return self.expr(v)
        if isinstance(d, A.Param) and d.default is not None:
            return self.expr(d.default)
        raise self.unsupported(f"reference to {e.name!r} ({type(d).__name__})", e)

    def _x_Member(self, e: A.Member) -> str:
        base = e.expr
        if isinstance(base, A.Call) and isinstance(base.target, A.CallTableApply):
            hit, act = self.table_apply(base)  # type: ignore[attr-defined]
            if e.name == "hit":
                return hit
            if e.name == "miss":
                return f"((u64)!{hit})"
            raise self.unsupported(f"table result member {e.name} here", e)
        bt = self.ty(base)
        if isinstance(bt, (T.Header, T.Struct)):
            ft = next((f.type for f in bt.fields if f.name == e.name), None)
            if ft is not None and isinstance(strip(ft), T.Varbit):
                raise self.unsupported("a varbit field's value", e)
            return f"{self.expr(base)}.f_{e.name}"
        raise self.unsupported(f"member {e.name} of {bt}", e)

    # ----------------------------------------------------------------- operators

    def _x_Slice(self, e: A.Slice) -> str:
        if not isinstance(e.hi, A.IntLit) or not isinstance(e.lo, A.IntLit):
            raise self.unsupported("a non-constant slice bound", e)
        hi, lo = e.hi.value, e.lo.value
        v = self.expr(e.expr)
        w = hi - lo + 1
        return f"((((u64)({v})) >> {lo}) & {mask(w)})" if w < 64 else f"((u64)({v}))"

    def _x_Unary(self, e: A.Unary) -> str:
        t = self.ty(e)
        v = self.expr(e.expr)
        if e.op == "!":
            return f"((u64)!({v}))"
        if e.op == "+":
            return v
        if isinstance(t, T.Bits):
            if e.op == "~":
                return f"(~({v}))" if t.signed else f"(({v}) ^ {mask(t.width)})"
            if e.op == "-":
                return self.wrap(f"(u64)0 - (u64)({v})", t)
        if isinstance(t, T.InfInt) and e.op in ("-", "~"):
            return f"({e.op}(i64)({v}))"
        raise self.unsupported(f"unary {e.op} on {t}", e)

    def _x_Binary(self, e: A.Binary) -> str:
        op = e.op
        if op in ("&&", "||"):
            return self._short_circuit(e)
        if op in ("&&&", ".."):
            raise self.unsupported(f"{op} outside a keyset", e)
        a = self.expr(e.left)
        with self.em.capture() as lines:
            b = self.expr(e.right)
        if lines:
            if not _simple(a):
                ta = self.tmp()
                self.em(f"{self.scalar_decl(self.ty(e.left), e)} {ta} = {a};")
                a = ta
            self.em.extend(lines)
        lt = self.ty(e.left)
        t = self.ty(e)
        if op in ("==", "!="):
            if is_aggregate(lt):
                raise self.unsupported("comparing headers or structs", e)
            return f"((u64)(({a}) {op} ({b})))"
        if op in ("<", "<=", ">", ">="):
            return f"((u64)(({a}) {op} ({b})))"
        if op == "++":
            rt = self.ty(e.right)
            wl, wr = width(lt, e), width(rt, e)
            if wl + wr > 64:
                raise self.unsupported("a concatenation wider than 64 bits", e)
            r = f"((((u64)({a})) << {wr}) | (((u64)({b})) & {mask(wr)}))"
            return self.wrap(r, t)
        if isinstance(t, T.Bool):
            return f"((u64)(({a}) {op} ({b})))"
        if isinstance(t, T.InfInt):
            if op in ("+", "-", "*", "&", "|", "^"):
                return f"((i64)({a}) {op} (i64)({b}))"
            raise self.unsupported(f"operator {op} on integer constants", e)
        if not isinstance(t, T.Bits):
            raise self.unsupported(f"operator {op} on {t}", e)
        w = t.width
        if w > 64:
            raise self.unsupported(f"{t}: wider than 64 bits", e)
        if op in ("&", "|", "^"):
            return f"(({a}) {op} ({b}))"
        if op in ("+", "-", "*"):
            return self.wrap(f"(u64)({a}) {op} (u64)({b})", t)
        if op in ("/", "%"):
            if t.signed:
                raise self.unsupported(f"{op} on signed values", e)
            if isinstance(e.right, A.IntLit) and e.right.value:
                return f"(({a}) {op} ({b}))"
            d = self.tmp("d")
            self.em(f"u64 {d} = {b};")
            return f"({d} ? (({a}) {op} {d}) : (u64)0)"
        if op in ("|+|", "|-|"):
            cop = "+" if op == "|+|" else "-"
            if t.signed:
                hi, lo = (1 << (w - 1)) - 1, -(1 << (w - 1))
                s = self.tmp("s")
                self.em(f"i128 {s} = (i128)({a}) {cop} (i128)({b});")
                return (f"((i64)({s} > (i128){hi}LL ? (i128){hi}LL : "
                        f"({s} < (i128)({lo}LL) ? (i128)({lo}LL) : {s})))")
            s = self.tmp("s")
            self.em(f"i128 {s} = (i128)(u128)({a}) {cop} (i128)(u128)({b});")
            m = (1 << w) - 1
            return (f"((u64)({s} > (i128)(u128){m}ull ? (i128)(u128){m}ull : "
                    f"({s} < 0 ? (i128)0 : {s})))")
        if op == "<<":
            s = self.tmp("s")
            self.em(f"u64 {s} = (u64)({b});")
            return f"({s} < {w} ? {self.wrap(f'(u64)({a}) << {s}', t)} : {lit(0, t)})"
        if op == ">>":
            s = self.tmp("s")
            self.em(f"u64 {s} = (u64)({b});")
            if t.signed:
                return f"({s} < 64 ? (i64)({a}) >> {s} : (((i64)({a})) < 0 ? (i64)-1 : (i64)0))"
            return f"({s} < 64 ? (u64)({a}) >> {s} : (u64)0)"
        raise self.unsupported(f"operator {op}", e)

    def scalar_decl(self, t: T.Type, node: A.Node) -> str:
        t = strip(t)
        if isinstance(t, T.InfInt):
            return "i64"
        return "i64" if signed(t) else "u64"

    def _short_circuit(self, e: A.Binary) -> str:
        a = self.expr(e.left)
        with self.em.capture() as lines:
            b = self.expr(e.right)
        cop = "&&" if e.op == "&&" else "||"
        if not lines:
            return f"((u64)(({a}) {cop} ({b})))"
        t = self.tmp()
        self.em(f"u64 {t} = (u64)(({a}) != 0);")
        with self.em.block(f"if ({'' if e.op == '&&' else '!'}{t})"):
            self.em.extend(["    " + ln for ln in lines])
            self.em(f"{t} = (u64)(({b}) != 0);")
        return t

    def _x_Mux(self, e: A.Mux) -> str:
        c = self.expr(e.cond)
        with self.em.capture() as l1:
            a = self.expr(e.then)
        with self.em.capture() as l2:
            b = self.expr(e.other)
        t = self.ty(e)
        if is_aggregate(t):
            raise self.unsupported("?: on headers or structs", e)
        if not l1 and not l2:
            return f"(({c}) ? ({a}) : ({b}))"
        r = self.tmp()
        self.em(f"{self.scalar_decl(t, e)} {r};")
        with self.em.block(f"if ({c})"):
            self.em.extend(["    " + ln for ln in l1])
            self.em(f"{r} = {a};")
        with self.em.block("else"):
            self.em.extend(["    " + ln for ln in l2])
            self.em(f"{r} = {b};")
        return r

    def _x_Cast(self, e: A.Cast) -> str:
        to = strip(e.type) if e.type is not None else strip(e.to.resolved)  # type: ignore[arg-type]
        if isinstance(e.expr, (A.ListExpr, A.StructExpr)):
            e.expr.type = to
            return self.expr(e.expr)
        return self.convert(self.expr(e.expr), self.ty(e.expr), to, e)

    def convert(self, v: str, src: T.Type, to: T.Type, node: A.Node) -> str:
        src, to = strip(src), strip(to)
        if isinstance(src, T.SerEnum):
            src = src.underlying
        if isinstance(to, T.SerEnum):
            to = to.underlying
        if src == to:
            return v
        if isinstance(to, T.Bool):
            return f"((u64)(({v}) != 0))"
        if isinstance(src, T.Bool):
            src = T.Bits(1)
        if isinstance(to, T.Bits):
            if to.width > 64:
                raise self.unsupported(f"{to}: wider than 64 bits", node)
            if to.signed:
                if isinstance(src, T.Bits) and src.signed and src.width <= to.width:
                    return f"((i64)({v}))"
                return f"sext((u64)({v}), {to.width})"
            if isinstance(src, T.Bits) and not src.signed and src.width <= to.width:
                return f"((u64)({v}))"
            return self.wrap(v, to)
        if isinstance(to, (T.InfInt, T.Enum, T.Error)):
            return v
        raise self.unsupported(f"cast from {src} to {to}", node)

    # ---------------------------------------------------------------- aggregates

    def _x_ListExpr(self, e: A.ListExpr) -> str:
        t = self.ty(e) if e.type is not None else T.Tuple(())
        if isinstance(t, (T.Header, T.Struct)):
            return self._build(t, [(f.name, x) for f, x in zip(t.fields, e.elements,
                                                                 strict=False)], e)
        raise self.unsupported("a list or tuple value", e)

    def _x_StructExpr(self, e: A.StructExpr) -> str:
        t = self.ty(e)
        if isinstance(t, (T.Header, T.Struct)):
            return self._build(t, list(e.fields), e)
        raise self.unsupported(f"struct initialiser of type {t}", e)

    def _x_InvalidHeader(self, e: A.InvalidHeader) -> str:
        return self.default_value(self.ty(e), e)

    def _x_Dots(self, e: A.Dots) -> str:
        return self.default_value(self.ty(e), e)

    def default_value(self, t: T.Type, node: A.Node) -> str:
        if isinstance(t, SCALARS):
            return lit(0, t)
        ct = self.types.ctype(t, node)
        o = self.tmp("o")
        self.em(f"{ct} {o}; memset(&{o}, 0, sizeof {o});")
        return o

    def _build(self, t: T.Header | T.Struct, items: list[tuple[str, A.Expr]],
               node: A.Node) -> str:
        ct = self.types.ctype(t, node)
        o = self.tmp("o")
        self.em(f"{ct} {o}; memset(&{o}, 0, sizeof {o});")
        ftypes = {f.name: f.type for f in t.fields}
        for name, x in items:
            ft = ftypes.get(name)
            if ft is not None and x.type is None:
                x.type = ft
            v = self.expr(x)
            if ft is not None and not is_aggregate(ft) and not isinstance(
                    self.ty(x), type(strip(ft))):
                v = self.wrap(v, ft)
            elif ft is not None and isinstance(self.ty(x), T.InfInt):
                v = self.wrap(v, ft)
            self.em(f"{o}.f_{name} = {v};")
        if isinstance(t, T.Header):
            self.em(f"{o}.valid = 1;")
        return o

    # ---------------------------------------------------------------- assignment

    def assign(self, target: A.Expr, value: str, value_type: T.Type | None = None) -> None:
        tt = self.ty(target)
        if isinstance(tt, T.Varbit):
            raise self.unsupported("assignment to a varbit", target)
        if value_type is not None and isinstance(strip(value_type), T.InfInt):
            value = self.wrap(value, tt)
        if isinstance(target, A.Name):
            code = self.lookup(target.decl)
            if code is None:
                raise self.unsupported(f"assignment to {target.name}", target)
            self.em(f"{code} = {value};")
            return
        if isinstance(target, Raw):
            self.em(f"{target.code} = {value};")
            return
        if isinstance(target, A.Member):
            bt = self.ty(target.expr)
            if isinstance(bt, (T.Header, T.Struct)):
                self.em(f"{self.expr(target.expr)}.f_{target.name} = {value};")
                return
            raise self.unsupported(f"assignment to member {target.name} of {bt}", target)
        if isinstance(target, A.Slice):
            if not isinstance(target.hi, A.IntLit) or not isinstance(target.lo, A.IntLit):
                raise self.unsupported("a non-constant slice bound", target)
            hi, lo = target.hi.value, target.lo.value
            bt = self.ty(target.expr)
            w = width(bt, target)
            m = (1 << (hi - lo + 1)) - 1
            keep = ((1 << w) - 1) ^ (m << lo)
            cur = self.expr(target.expr)
            new = (f"((((u64)({cur})) & 0x{keep:x}ull) | ((((u64)({value})) & 0x{m:x}ull) "
                   f"<< {lo}))")
            self.assign(target.expr, self.wrap(new, bt))
            return
        raise self.unsupported(f"assignment to {type(target).__name__}", target)

    # -------------------------------------------------------------- serialisation

    def flatten(self, e: A.Expr, guard: str | None = None) -> list[tuple[str, int, str | None]]:
        """The scalar leaves of field list ``e`` as (code, width, validity guard), as
        BMv2 serialises them (fields of invalid headers skipped). A varbit leaf has
        width -1: its code is the header, its field the name after '#'."""
        t = self.ty(e) if e.type is not None or not isinstance(e, A.ListExpr) else T.Tuple(())
        if isinstance(e, A.ListExpr) and not isinstance(t, (T.Header, T.Struct)):
            out: list[tuple[str, int, str | None]] = []
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
            g = f"{h}.valid"
            out = []
            for f in t.fields:
                ft = strip(f.type)
                if isinstance(ft, T.Varbit):
                    out.append((f"{h}#{f.name}", -((ft.max_width + 7) // 8), g))
                    continue
                w = width(ft, e)
                code = f"{h}.f_{f.name}"
                out.append((f"((u64)({code}) & {mask(w)})" if w < 64 else f"((u64)({code}))",
                            w, g))
            return out
        if isinstance(t, T.Struct):
            s = self.expr(e)
            out = []
            for f in t.fields:
                sub = A.Member(e.pos, Raw(e.pos, s, type=t), f.name, type=f.type)
                out += self.flatten(sub, guard)
            return out
        if isinstance(t, T.Varbit):
            if isinstance(e, A.Member) and isinstance(self.ty(e.expr), T.Header):
                h = self.expr(e.expr)
                return [(f"{h}#{e.name}", -((t.max_width + 7) // 8), f"{h}.valid")]
            raise self.unsupported("a varbit that is not a header field", e)
        if isinstance(t, T.InfInt):
            w = 32
        else:
            w = width(t, e)
        if isinstance(e, A.Member) and isinstance(self.ty(e.expr), T.Header):
            guard = f"{self.expr(e.expr)}.valid"
        code = self.expr(e)
        return [(f"((u64)({code}) & {mask(w)})" if w < 64 else f"((u64)({code}))", w, guard)]

    def serialize(self, e: A.Expr) -> tuple[str, str]:
        """Emit the bytes of field list ``e`` into a local buffer; returns (buffer,
        length in bytes) code."""
        leaves = self.flatten(e)
        cap = sum(-w * 8 if w < 0 else w for _c, w, _g in leaves)
        buf, bo = self.tmp("buf"), self.tmp("bo")
        maxbytes = (cap + 7) // 8 + 8
        self.em(f"uint8_t {buf}[{maxbytes}]; memset({buf}, 0, sizeof {buf}); u64 {bo} = 0;")
        for code, w, g in leaves:
            if w < 0:
                h, name = code.split("#")
                stmt = f"put_bytes({buf}, {bo}, {h}.f_{name}, {h}.w_{name}); {bo} += {h}.w_{name};"
            else:
                stmt = f"put_bits({buf}, {bo}, {code}, {w}); {bo} += {w};"
            self.em(f"if ({g}) {{ {stmt} }}" if g else stmt)
        return buf, f"(({bo} + 7) >> 3)"


__all__ = ["ExprMixin", "is_aggregate", "lit", "mask"]
