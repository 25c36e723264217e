"""Parsers to C (one function, states as labels) and the deparser's ``emit``, with the
Python engine's rules (``switch.engine.codegen_parser``, ``rt.extract_generic``): an
extraction past the end fails with PacketTooShort where the header starts, a varbit's
size is checked for whole bytes, then the packet's end, then the field's maximum;
``reject`` ends with the error code of NoError, a select without a match with
NoMatch; a parser with a loop stops after 10000 states with ParserTimeout."""

from __future__ import annotations

from switch.engine.codegen_parser import MAX_PARSER_STEPS, parser_has_cycle, state_targets
from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.native.c_base import signed, width
from switch.native.c_stmt import StmtMixin


def _fold(a: str, b: str) -> str:
    """``a + b``, added up when both are numbers."""
    if a.isdigit() and b.isdigit():
        return str(int(a) + int(b))
    return f"{a} + {b}"


def _max_width(t: T.Type, node: A.Node) -> int:
    st = strip(t)
    return st.max_width if isinstance(st, T.Varbit) else width(st, node)


class ParserMixin(StmtMixin):
    kind = "control"
    looping = False

    def err(self, name: str, default: int) -> int:
        return self.program.errors.get(name, default)

    def fail(self, code: str) -> str:
        return f"{{ *perr = {code}; return bo; }}"

    # ------------------------------------------------------------------ states

    def parser_body(self, decl: A.ParserDecl) -> None:
        by_name = {s.name: s for s in decl.states}
        if "start" not in by_name:
            raise self.unsupported("parser without a start state", decl)
        self.looping = parser_has_cycle(decl)
        self.em("u64 bo = 0; const u64 n = nb << 3; (void)n;")
        if self.looping:
            self.em("u64 steps = 0;")
        for d in decl.locals:
            if isinstance(d, A.ValueSetDecl):
                raise self.unsupported("value sets", d)
            self.local_decl(d)
        self.em("goto st_start;")
        reachable = {"start"}
        todo = ["start"]
        while todo:
            for t in state_targets(by_name[todo.pop()]):
                if t in by_name and t not in reachable:
                    reachable.add(t)
                    todo.append(t)
        for st in decl.states:
            if st.name in reachable:
                self.state(st)

    def state(self, st: A.ParserState) -> None:
        self.em(f"st_{st.name}: ;")
        with self.scope():
            self.em("{")
            self.em.ind += 1
            if self.looping:
                self.em(f"if (++steps > {MAX_PARSER_STEPS}) "
                        f"{self.fail(str(self.err('ParserTimeout', 5)))}")
            for s in st.stmts:
                self.stmt(s)
            tr = st.transition
            if tr is None:
                self.goto("reject")
            elif isinstance(tr, str):
                self.goto(tr)
            else:
                self.select(tr)
            self.em.ind -= 1
            self.em("}")

    def goto(self, name: str) -> None:
        if name == "accept":
            self.em("return bo;")
        elif name == "reject":
            self.em(self.fail(str(self.err("NoError", 0))))
        else:
            self.em(f"goto st_{name};")

    def select(self, sel: A.Select) -> None:
        keys = []
        for e in sel.exprs:
            t = self.ty(e)
            v = self.expr(e)
            k = self.tmp("k")
            self.em(f"{self.scalar_decl(t, e)} {k} = {v};")
            keys.append(k)
        for case in sel.cases:
            cond = self.keyset(case.keyset, keys)
            if cond == "1":
                self.goto(case.state)
                return
            with self.em.block(f"if ({cond})"):
                self.goto(case.state)
        self.em(self.fail(str(self.err("NoMatch", 2))))

    def keyset(self, ks: A.Expr, keys: list[str]) -> str:
        if isinstance(ks, (A.DefaultExpr, A.DontCare)):
            return "1"
        if isinstance(ks, A.Name) and isinstance(ks.decl, A.ValueSetDecl):
            raise self.unsupported("value sets", ks)
        if len(keys) > 1:
            elems = ks.elements if isinstance(ks, A.ListExpr) else None
            if elems is None or len(elems) != len(keys):
                raise self.unsupported("keyset does not match the select key", ks)
            parts = [self.keyset(x, [k]) for x, k in zip(elems, keys, strict=True)]
            parts = [p for p in parts if p != "1"]
            return " && ".join(f"({p})" for p in parts) if parts else "1"
        if isinstance(ks, A.ListExpr) and len(ks.elements) == 1:
            return self.keyset(ks.elements[0], keys)
        k = keys[0]
        if isinstance(ks, A.Binary) and ks.op == "&&&":
            v, m = self.expr(ks.left), self.expr(ks.right)
            return f"(({k}) & ({m})) == (({v}) & ({m}))"
        if isinstance(ks, A.Binary) and ks.op == "..":
            return f"({self.expr(ks.left)}) <= ({k}) && ({k}) <= ({self.expr(ks.right)})"
        return f"({k}) == ({self.expr(ks)})"

    # ---------------------------------------------------------------- packet_in

    def packet_method(self, c: A.Call, t: A.CallExternMethod) -> str | None:
        args = self.args_of(c)
        if t.method == "emit":
            if self.kind != "deparser":
                raise self.unsupported("emit outside the deparser", c)
            self.emit_value(args[0])  # type: ignore[arg-type]
            return None
        if self.kind != "parser":
            raise self.unsupported(f"packet_in.{t.method} outside a parser", c)
        short = str(self.err("PacketTooShort", 1))
        if t.method == "extract":
            if args[0] is None:
                raise self.unsupported("extract into _", c)
            self.extract(args[0], args[1] if len(args) > 1 else None, c)
            return None
        if t.method == "lookahead":
            lt = None
            if c.type_args and c.type_args[0].resolved is not None:
                lt = strip(c.type_args[0].resolved)
            elif c.type is not None:
                lt = strip(c.type)
            if isinstance(lt, T.Header):
                h = self.tmp("lh")
                ct = self.types.ctype(lt, c)
                self.em(f"{ct} {h}; memset(&{h}, 0, sizeof {h});")
                total = self._fixed_width(lt, c)
                self.em(f"if (bo + {total} > n) {self.fail(short)}")
                self._read_fields(lt, h, "bo", c)
                self.em(f"{h}.valid = 1;")
                return h
            if lt is None or isinstance(lt, (T.Struct, T.Varbit)) or not isinstance(
                    lt, (T.Bits, T.Bool)):
                raise self.unsupported(f"lookahead of a {lt}", c)
            w = width(lt, c)
            v = self.tmp("la")
            self.em(f"if (bo + {w} > n) {self.fail(short)}")
            self.em(f"u64 {v} = get_bits(d, bo, {w});")
            if isinstance(lt, T.Bool):
                return f"((u64)({v} != 0))"
            return f"sext({v}, {w})" if signed(lt) else v
        if t.method == "advance":
            a = self.tmp("adv")
            self.em(f"u64 {a} = (u64)({self.expr(args[0])});")  # type: ignore[arg-type]
            self.em(f"if ({a} & 7) {self.fail(str(self.err('ParserInvalidArgument', 6)))}")
            self.em(f"if (bo + {a} > n) {self.fail(short)}")
            self.em(f"bo += {a};")
            return None
        if t.method == "length":
            return "nb"
        raise self.unsupported(f"packet_in.{t.method}", c)

    def _fixed_width(self, t: T.Header, node: A.Node) -> int:
        return sum(width(f.type, node) for f in t.fields
                   if not isinstance(strip(f.type), T.Varbit))

    def _read_fields(self, t: T.Header, h: str, at: str, node: A.Node,
                     varbits: str | None = None, data: str = "d") -> None:
        off = "0"
        for f in t.fields:
            ft = strip(f.type)
            if isinstance(ft, T.Varbit):
                vb = varbits or "0"
                self.em(f"get_bytes({h}.f_{f.name}, {data}, {at} + {off}, {vb}); "
                        f"{h}.w_{f.name} = {vb};")
                off = f"{off} + {vb}"
                continue
            w = width(ft, node)
            if at == "0" and off.isdigit() and int(off) % 8 == 0 and w in (8, 16, 32, 64):
                v = f"ld_be{w}({data} + {int(off) // 8})"
            else:
                v = f"get_bits({data}, {_fold(at, off)}, {w})"
            if isinstance(ft, T.Bool):
                v = f"(u64)({v} != 0)"
            elif signed(ft):
                v = f"sext({v}, {w})"
            self.em(f"{h}.f_{f.name} = {v};")
            off = _fold(off, str(w))

    def extract(self, target: A.Expr, nbits: A.Expr | None, c: A.Call) -> None:
        t = self.ty(target)
        if not isinstance(t, T.Header):
            raise self.unsupported(f"extract into a {t}", c)
        h = self.expr(target)
        fixed = self._fixed_width(t, c)
        short = str(self.err("PacketTooShort", 1))
        vfields = [f for f in t.fields if isinstance(strip(f.type), T.Varbit)]
        if len(vfields) > 1:
            raise self.unsupported("a header with two varbit fields", c)
        if nbits is None:
            self.em(f"if (bo + {fixed} > n) {self.fail(short)}")
            if vfields:
                self._read_fields(t, h, "bo", c, "0")
            else:
                # at a whole byte (the usual case) every offset is a constant
                with self.em.block("if ((bo & 7) == 0)"):
                    self.em("const uint8_t *pb = d + (bo >> 3);")
                    self._read_fields(t, h, "0", c, None, "pb")
                with self.em.block("else"):
                    self._read_fields(t, h, "bo", c, None)
            self.em(f"{h}.valid = 1;")
            self.em(f"bo += {fixed};")
            return
        if not vfields:
            raise self.unsupported("a two-argument extract of a header without a varbit", c)
        vt = strip(vfields[0].type)
        assert isinstance(vt, T.Varbit)
        vb = self.tmp("vb")
        self.em(f"u64 {vb} = (u64)({self.expr(nbits)});")
        self.em(f"if ({vb} & 7) {self.fail(str(self.err('ParserInvalidArgument', 6)))}")
        self.em(f"if ({vb} > n || bo + {fixed} + {vb} > n) {self.fail(short)}")
        self.em(f"if ({vb} > {vt.max_width}) {self.fail(str(self.err('HeaderTooShort', 4)))}")
        self._read_fields(t, h, "bo", c, vb)
        self.em(f"{h}.valid = 1;")
        self.em(f"bo += {fixed} + {vb};")

    def verify(self, c: A.Call) -> None:
        if self.kind != "parser":
            raise self.unsupported("verify outside a parser", c)
        args = self.args_of(c)
        cond = self.expr(args[0])  # type: ignore[arg-type]
        code = self.expr(args[1])  # type: ignore[arg-type]
        self.em(f"if (!({cond})) {self.fail(code)}")

    # ---------------------------------------------------------------- deparser

    def emit_value(self, e: A.Expr) -> None:
        t = self.ty(e)
        if isinstance(t, T.Header):
            h = self.expr(e)
            with self.em.block(f"if ({h}.valid)"):
                if any(isinstance(strip(f.type), T.Varbit) for f in t.fields):
                    size = sum(_max_width(f.type, e) for f in t.fields)
                    self.em(f"zero_from(P->out, P->obo, P->obo + {size});")
                    for f in t.fields:
                        ft = strip(f.type)
                        if isinstance(ft, T.Varbit):
                            self.em(f"put_bytes(P->out, P->obo, {h}.f_{f.name}, "
                                    f"{h}.w_{f.name}); P->obo += {h}.w_{f.name};")
                            continue
                        w = width(ft, e)
                        self.em(f"put_bits(P->out, P->obo, (u64)({h}.f_{f.name}), {w}); "
                                f"P->obo += {w};")
                    return
                total = sum(width(f.type, e) for f in t.fields)
                # at a whole byte (the usual case) every offset is a constant
                for aligned in (True, False):
                    with self.em.block("if ((P->obo & 7) == 0)" if aligned else "else"):
                        if aligned:
                            self.em("uint8_t *qb = P->out + (P->obo >> 3);")
                            self.em(f"memset(qb, 0, {(total + 7) // 8});")
                        else:
                            self.em("zero_from(P->out, P->obo, P->obo + "
                                    f"{total});")
                        off = 0
                        for f in t.fields:
                            w = width(f.type, e)
                            at = f"{off}" if aligned else f"P->obo + {off}"
                            if aligned and off % 8 == 0 and w in (8, 16, 32, 64):
                                self.em(f"st_be{w}(qb + {off // 8}, (u64)({h}.f_{f.name}));")
                            else:
                                self.em(f"put_bits({'qb' if aligned else 'P->out'}, {at}, "
                                        f"(u64)({h}.f_{f.name}), {w});")
                            off += w
                self.em(f"P->obo += {total};")
            return
        if isinstance(t, T.Struct):
            s = self.expr(e)
            from switch.engine.codegen_expr import Raw
            for f in t.fields:
                self.emit_value(A.Member(e.pos, Raw(e.pos, s, type=t), f.name, type=f.type))
            return
        raise self.unsupported(f"emit of a {t}", e)


__all__ = ["ParserMixin"]
