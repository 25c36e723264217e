"""Statements, calls, actions (inlined at each call site, copy-in/copy-out) and table
application to C, as ``switch.engine.codegen_stmt`` compiles them to Python.

``exit`` returns from the block's C function (each block is one), after the copy-out
of the inlined actions it leaves; ``return`` in an action jumps to the action's end.
"""

from __future__ import annotations

from typing import Any

from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.native.c_base import SCALARS, signed, width
from switch.native.c_expr import ExprMixin, is_aggregate, lit


class StmtMixin(ExprMixin):
    hooks: Any  # the architecture's extern code (see switch.v1model.native_externs)
    tables: Any  # switch.native.c_tables.TableCode

    def stmt(self, s: A.Stmt) -> None:
        m = getattr(self, "_s_" + type(s).__name__, None)
        if m is None:
            raise self.unsupported(f"statement {type(s).__name__}", s)
        m(s)

    def _s_Block(self, s: A.Block) -> None:
        with self.scope():
            self.em("{")
            self.em.ind += 1
            for x in s.stmts:
                self.stmt(x)
            self.em.ind -= 1
            self.em("}")

    def _s_Empty(self, s: A.Empty) -> None:
        pass

    def _s_Assign(self, s: A.Assign) -> None:
        tt = self.ty(s.target)
        if isinstance(tt, T.Varbit):
            raise self.unsupported("assignment of a varbit", s)
        v = self.expr(s.value)
        vt = self.ty(s.value)
        if is_aggregate(tt):
            if not isinstance(strip(tt), (T.Header, T.Struct)):
                raise self.unsupported(f"assignment of a {tt}", s)
            self.assign(s.target, v)
            return
        if isinstance(vt, T.InfInt):
            v = self.wrap(v, tt)
        elif isinstance(vt, T.Bits) and isinstance(tt, T.Bits) and vt != tt:
            v = self.convert(v, vt, tt, s)
        tv = self.tmp("v")
        self.em(f"{self.scalar_decl(tt, s)} {tv} = {v};")
        self.assign(s.target, tv)

    def _s_CallStmt(self, s: A.CallStmt) -> None:
        self.call(s.call)

    def _s_If(self, s: A.If) -> None:
        c = self.expr(s.cond)
        with self.em.block(f"if ({c})"):
            self.stmt(s.then)
        if s.other is not None and not isinstance(s.other, A.Empty):
            with self.em.block("else"):
                self.stmt(s.other)

    def _s_Exit(self, s: A.Exit) -> None:
        self.leave_block()

    def leave_block(self) -> None:
        """``exit``: copy out every action being left, innermost first, then end the
        block."""
        for copies in reversed(self.exit_copyouts):
            for target, name in copies:
                self.assign(target, name)
        self.em("return;")

    def _s_Return(self, s: A.Return) -> None:
        if s.value is not None:
            raise self.unsupported("return with a value", s)
        if self.return_stack:
            self.em(f"goto {self.return_stack[-1]};")
        else:
            self.em("return;")

    def _s_DeclStmt(self, s: A.DeclStmt) -> None:
        self.local_decl(s.decl)

    def local_decl(self, d: A.Declaration) -> None:
        if isinstance(d, A.VarDecl):
            t = strip(d.type_ref.resolved)  # type: ignore[arg-type]
            if isinstance(t, SCALARS):
                v = lit(0, t)
                if d.init is not None:
                    v = self.expr(d.init)
                    if isinstance(self.ty(d.init), T.InfInt):
                        v = self.wrap(v, t)
                name = self.declare(d, d.name)
                self.em(f"{self.scalar_decl(t, d)} {name} = {v};")
                return
            ct = self.types.ctype(t, d)
            init = self.expr(d.init) if d.init is not None else None
            name = self.declare(d, d.name)
            self.em(f"{ct} {name}; memset(&{name}, 0, sizeof {name});")
            if init is not None:
                self.em(f"{name} = {init};")
        elif isinstance(d, A.ConstDecl):
            t = self.ty(d.value)
            if not isinstance(t, SCALARS + (T.InfInt,)):
                raise self.unsupported(f"a constant of type {t}", d)
            v = self.expr(d.value)
            name = self.declare(d, d.name)
            self.em(f"{self.scalar_decl(t, d)} {name} = {v};")
        elif isinstance(d, (A.Instantiation, A.ActionDecl, A.TableDecl)):
            pass
        else:
            raise self.unsupported(f"local declaration {type(d).__name__}", d)

    def _s_Switch(self, s: A.Switch) -> None:
        e = s.expr
        labels: dict[int, str] = {}
        if (isinstance(e, A.Member) and e.name == "action_run" and isinstance(e.expr, A.Call)
                and isinstance(e.expr.target, A.CallTableApply)):
            _hit, v = self.table_apply(e.expr)
            decl = e.expr.target.table
            labels = self.action_run_labels(s, decl, self.tables.runtime(self, decl).action_index)
        else:
            t = self.ty(e)
            v0 = self.expr(e)
            v = self.tmp("sw")
            self.em(f"{self.scalar_decl(t, e)} {v} = {v0};")
            for c in s.cases:
                if not isinstance(c.label, A.DefaultExpr):
                    labels[id(c)] = self.expr(c.label)
        first = True
        pending: list[str] = []
        default_body: A.Block | None = None
        for c in s.cases:
            if isinstance(c.label, A.DefaultExpr):
                if c.body is not None:
                    default_body = c.body
                continue
            pending.append(labels[id(c)])
            if c.body is None:
                continue
            cond = " || ".join(f"{v} == {lab}" for lab in pending)
            pending = []
            with self.em.block(f"{'if' if first else 'else if'} ({cond})"):
                self.stmt(c.body)
            first = False
        if default_body is not None:
            if first:
                self.stmt(default_body)
            else:
                with self.em.block("else"):
                    self.stmt(default_body)

    # -------------------------------------------------------------------- calls

    def _x_Call(self, e: A.Call) -> str:
        v = self.call(e)
        if v is None:
            raise self.unsupported("a call without a value used in an expression", e)
        return v

    def args_of(self, c: A.Call) -> list[A.Expr | None]:
        return list(c.resolved_args) if c.resolved_args else [a.value for a in c.args]

    def call(self, c: A.Call) -> str | None:
        t = c.target
        if isinstance(t, A.CallAction):
            self.inline_action(t.action, self.args_of(c), [], c)
            return None
        if isinstance(t, A.CallTableApply):
            hit, _a = self.table_apply(c)
            return hit
        if isinstance(t, A.CallBuiltin):
            return self.builtin(c, t)
        if isinstance(t, A.CallExternMethod):
            if t.extern in ("packet_in", "packet_out"):
                return self.packet_method(c, t)  # type: ignore[attr-defined, no-any-return]
            if any(a is None for a in self.args_of(c)):
                raise self.unsupported("_ as an extern's argument", c)
            inst = None
            d = getattr(t.receiver, "decl", None)
            if isinstance(d, A.Instantiation):
                inst = self.program.externs.get(self.instance_fqn(d) or "")
            return self.hooks.extern_method(self, c, t, inst)  # type: ignore[no-any-return]
        if isinstance(t, A.CallExternFunction):
            name = t.function.name
            if name == "verify":
                return self.verify(c)  # type: ignore[attr-defined, no-any-return]
            if name == "static_assert":
                return "((u64)1)"
            return self.hooks.extern_function(self, c, t.function)  # type: ignore[no-any-return]
        raise self.unsupported(f"call of {type(t).__name__.removeprefix('Call')}", c)

    def builtin(self, c: A.Call, t: A.CallBuiltin) -> str | None:
        m = t.method
        rt = self.ty(t.receiver)
        if not isinstance(rt, T.Header):
            raise self.unsupported(f"{m} of a {rt}", c)
        h = self.expr(t.receiver)
        if m == "isValid":
            return f"((u64){h}.valid)"
        if m == "setValid":
            self.em(f"if (!{h}.valid) {{ memset(&{h}, 0, sizeof {h}); {h}.valid = 1; }}")
            return None
        if m == "setInvalid":
            self.em(f"{h}.valid = 0;")
            return None
        raise self.unsupported(f"method {m}", c)

    # ------------------------------------------------------------------ actions

    def inline_action(self, decl: A.ActionDecl, bound: list[A.Expr | None], cp: list[str],
                      node: A.Node) -> None:
        end = self.tmp("end")
        with self.scope():
            self.em("{")
            self.em.ind += 1
            copy_out: list[tuple[A.Expr, str]] = []
            ci = 0
            for i, p in enumerate(decl.params):
                pt = strip(p.type_ref.resolved)  # type: ignore[arg-type]
                if i < len(bound):
                    a = bound[i]
                    if is_aggregate(pt):
                        if not isinstance(pt, (T.Header, T.Struct)) or a is None:
                            raise self.unsupported(f"action parameter {p.name} of type {pt}", p)
                        ct = self.types.ctype(pt, p)
                        name = self.declare(p, p.name)
                        if p.direction == "out":
                            self.em(f"{ct} {name}; memset(&{name}, 0, sizeof {name});")
                        else:
                            self.em(f"{ct} {name} = {self.expr(a)};")
                        if p.direction in ("out", "inout"):
                            copy_out.append((a, name))
                        continue
                    if not isinstance(pt, SCALARS):
                        raise self.unsupported(f"action parameter {p.name} of type {pt}", p)
                    decl_t = self.scalar_decl(pt, p)
                    if a is None:
                        name = self.declare(p, p.name)
                        self.em(f"{decl_t} {name} = {lit(0, pt)};")
                        continue
                    if p.direction == "out":
                        name = self.declare(p, p.name)
                        self.em(f"{decl_t} {name} = {lit(0, pt)};")
                        copy_out.append((a, name))
                        continue
                    v = self.expr(a)
                    if isinstance(self.ty(a), T.InfInt):
                        v = self.wrap(v, pt)
                    name = self.declare(p, p.name)
                    self.em(f"{decl_t} {name} = {v};")
                    if p.direction == "inout":
                        copy_out.append((a, name))
                else:
                    if ci >= len(cp):
                        raise self.unsupported(f"action {decl.name}: missing argument {p.name}",
                                               node)
                    if not isinstance(pt, SCALARS):
                        raise self.unsupported(f"action parameter {p.name} of type {pt}", p)
                    name = self.declare(p, p.name)
                    self.em(f"{self.scalar_decl(pt, p)} {name} = {cp[ci]};")
                    ci += 1
            self.return_stack.append(end)
            self.exit_copyouts.append(copy_out)
            try:
                self.stmt(decl.body)
            finally:
                self.return_stack.pop()
                self.exit_copyouts.pop()
            self.em(f"{end}: ;")
            for a, name in copy_out:
                self.assign(a, name)
            self.em.ind -= 1
            self.em("}")

    # ------------------------------------------------------------------- tables

    def table_apply(self, c: A.Call) -> tuple[str, str]:
        decl = c.target.table  # type: ignore[union-attr]
        rt = self.tables.runtime(self, decl)
        keys = []
        for k in decl.keys:
            if k.match_kind == "selector":
                raise self.unsupported("action selectors", k)
            kt = self.ty(k.expr)
            v = self.expr(k.expr)
            keys.append(self.wrap(v, T.Bits(width(kt, k))) if signed(kt) else v)
        hit, act, args = self.tmp("hit"), self.tmp("a"), self.tmp("g")
        self.em(f"u64 {hit}; int32_t {act}; const u64 *{args};")
        self.tables.lookup_code(self, rt, keys, hit, act, args)
        refs = {self.action_fqn(r.action): r for r in decl.actions if r.action is not None}
        with self.em.block(f"switch ({act})"):
            for i, spec in enumerate(rt.actions):
                ai = self.program.actions.get(spec.fqn)
                if ai is None:
                    raise self.unsupported(f"action {spec.fqn} has no instance", decl)
                ref = refs.get(spec.fqn)
                bound = [a.value for a in ref.args] if ref is not None else []
                cps = []
                for j, (_n, w, sg) in enumerate(spec.params):
                    if w > 64:
                        raise self.unsupported(f"action {spec.fqn}: a parameter wider than 64 "
                                               "bits", decl)
                    cps.append(f"((i64){args}[{j}])" if sg else f"{args}[{j}]")
                self.em(f"case {i}:")
                self.em.ind += 1
                self.inline_action(ai.decl, bound, cps, c)
                self.em("break;")
                self.em.ind -= 1
        return hit, act


__all__ = ["StmtMixin"]
