"""Statements, calls, actions (inlined at each call site), table application and
sub-block application."""

from __future__ import annotations

from switch.engine.codegen_alias import action_reach, copied_arguments
from switch.engine.codegen_expr import Raw, is_aggregate
from switch.engine.codegen_loops import LoopMixin
from switch.engine.layout import attr, is_signed, scalar_width, strip
from switch.frontend import ast as A
from switch.frontend import types as T


def contains_return(s: A.Stmt | None) -> bool:
    if s is None:
        return False
    if isinstance(s, A.Return):
        return True
    if isinstance(s, A.Block):
        return any(contains_return(x) for x in s.stmts)
    if isinstance(s, A.If):
        return contains_return(s.then) or contains_return(s.other)
    if isinstance(s, A.Switch):
        return any(contains_return(c.body) for c in s.cases)
    if isinstance(s, (A.For, A.ForIn)):
        return contains_return(s.body)
    return False


def may_exit(s: A.Stmt | None, seen: set[int] | None = None) -> bool:
    """Whether running ``s`` can execute ``exit`` (directly or in a called action)."""
    if s is None:
        return False
    if isinstance(s, A.Exit):
        return True
    if isinstance(s, A.Block):
        return any(may_exit(x, seen) for x in s.stmts)
    if isinstance(s, A.If):
        return may_exit(s.then, seen) or may_exit(s.other, seen)
    if isinstance(s, A.Switch):
        return any(may_exit(c.body, seen) for c in s.cases)
    if isinstance(s, (A.For, A.ForIn)):
        return may_exit(s.body, seen)
    if isinstance(s, A.CallStmt) and isinstance(s.call.target, A.CallAction):
        seen = set() if seen is None else seen
        act = s.call.target.action
        if id(act) in seen:
            return False
        seen.add(id(act))
        return may_exit(act.body, seen)
    return False


def _arg_values(args: list[A.Argument]) -> list[A.Expr | None]:
    return [a.value for a in args]


class StmtMixin(LoopMixin):
    # ------------------------------------------------------------- statements

    def stmt(self, s: A.Stmt) -> None:
        if self.mod.trace and not isinstance(s, (A.Block, A.Empty)):
            sid = self.mod.stmt_id(s.pos)
            self.em(f"_T('stmt', {sid}, None)")
        m = getattr(self, "_s_" + type(s).__name__, None)
        if m is None:
            raise self.unsupported(f"statement {type(s).__name__}", s)
        m(s)

    def stmts(self, ss: list[A.Stmt]) -> None:
        for s in ss:
            self.stmt(s)

    def _s_Block(self, s: A.Block) -> None:
        with self.scope():
            self.stmts(s.stmts)

    def _s_Empty(self, s: A.Empty) -> None:
        pass

    def _s_Assign(self, s: A.Assign) -> None:
        if isinstance(self.ty(s.target), T.Varbit):
            self.assign_varbit(s.target, s.value)
            return
        target, value = s.target, s.value
        if s.op and isinstance(value, A.Binary) and value.op == s.op:
            # `a op= b` is `a = a op b` with the l-value evaluated once
            target = self.pin_lvalue(target)
            value = A.Binary(value.pos, value.op, target, value.right, type=value.type)
        with self.em.capture() as lines:
            v = self.expr(value)
        # the l-value (with its stack indices) is evaluated before the right-hand side
        target = self.pin_lvalue(target) if lines else target
        self.em.extend(lines)
        tt = self.ty(target)
        if is_aggregate(tt):
            self.assign(target, v)
            return
        vt = self.ty(value)
        if isinstance(vt, T.InfInt) or (isinstance(vt, T.Bits) and isinstance(tt, T.Bits)
                                          and (vt.width != tt.width or vt.signed != tt.signed)):
            v = self.convert(v, vt, tt, s) if not isinstance(vt, T.InfInt) else self.wrap(v, tt)
        self.assign(target, v)

    def pin_lvalue(self, e: A.Expr) -> A.Expr:
        """``e`` with each run-time stack index evaluated now into a temporary, so that
        code run later (a call's side effects) cannot move the l-value."""
        if isinstance(e, A.Member):
            base = self.pin_lvalue(e.expr)
            return e if base is e.expr else A.Member(e.pos, base, e.name, type=e.type)
        if isinstance(e, A.Slice):
            base = self.pin_lvalue(e.expr)
            return e if base is e.expr else A.Slice(e.pos, base, e.hi, e.lo, type=e.type)
        if isinstance(e, A.Index):
            base = self.pin_lvalue(e.expr)
            index = e.index
            if not isinstance(index, (A.IntLit, Raw)):
                t = self.tmp("_ix")
                self.em(f"{t} = {self.expr(index)}")
                index = Raw(index.pos, t, type=index.type)
            if base is e.expr and index is e.index:
                return e
            return A.Index(e.pos, base, index, type=e.type)
        return e

    def _s_CallStmt(self, s: A.CallStmt) -> None:
        self.call(s.call)

    def _s_If(self, s: A.If) -> None:
        c = self.cond(s.cond)
        self.em(f"if {c}:")
        with self.em.indent():
            self.stmt(s.then)
        if s.other is not None and not isinstance(s.other, A.Empty):
            self.em("else:")
            with self.em.indent():
                self.stmt(s.other)

    def _s_Exit(self, s: A.Exit) -> None:
        if self.mod.trace:
            self.em(f"_T('exit', {self.mod.stmt_id(s.pos)}, None)")
        self.em("raise _EXIT")

    def _s_Return(self, s: A.Return) -> None:
        if not self.return_stack:
            raise self.unsupported("return here", s)
        mode, outs = self.return_stack[-1]
        if mode == "break":
            self.em("break")
            return
        if mode == "loop":  # in a loop of an inlined action: `outs` is the flag
            self.em(f"{outs} = True")
            self.em("break")
            return
        value = self.expr(s.value) if s.value is not None else None
        parts = ([value] if value is not None else []) + ([outs] if outs else [])
        if not parts:
            self.em("return")
        elif len(parts) == 1 and value is not None:
            self.em(f"return {value}")
        else:
            self.em(f"return ({', '.join(parts)},)")

    def _s_DeclStmt(self, s: A.DeclStmt) -> None:
        self.local_decl(s.decl)

    def local_decl(self, d: A.Declaration) -> None:
        if isinstance(d, A.VarDecl):
            t = strip(d.type_ref.resolved)  # type: ignore[arg-type]
            if isinstance(t, T.Varbit):
                name = self.declare(d, d.name)
                self.em(f"{name}, {name}_w = 0, 0")
                if d.init is not None:
                    self.assign_varbit(A.Name(d.pos, d.name, decl=d, type=t), d.init)
                return
            if d.init is not None:
                v = self.expr(d.init)
                name = self.declare(d, d.name)
                if is_aggregate(t):
                    self.em(f"{name} = {self.types.default(t)}")
                    self.em(f"{name}.assign({v})")
                else:
                    it = self.ty(d.init)
                    if isinstance(it, T.InfInt):
                        v = self.wrap(v, t)
                    self.em(f"{name} = {v}")
            else:
                name = self.declare(d, d.name)
                self.em(f"{name} = {self.types.default(t)}")
        elif isinstance(d, A.ConstDecl):
            v = self.expr(d.value)
            name = self.declare(d, d.name)
            self.em(f"{name} = {v}")
        elif isinstance(d, (A.Instantiation, A.ActionDecl, A.TableDecl, A.ValueSetDecl)):
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
            labels = self.action_run_labels(s, decl, self.runtime_table(decl).action_index)
        else:
            v0 = self.expr(e)
            v = self.tmp("_sw")
            self.em(f"{v} = {v0}")
            for c in s.cases:
                if not isinstance(c.label, A.DefaultExpr):
                    labels[id(c)] = self.expr(c.label)
        first = True
        pending: list[str] = []
        default_body: A.Block | None = None
        has_default = False
        for c in s.cases:
            if isinstance(c.label, A.DefaultExpr):
                has_default = True
                if c.body is None:
                    continue
                default_body = c.body
                continue
            pending.append(labels[id(c)])
            if c.body is None:
                continue
            cond = " or ".join(f"{v} == {lab}" for lab in pending)
            pending = []
            self.em(f"{'if' if first else 'elif'} {cond}:")
            first = False
            with self.em.indent():
                self.stmt(c.body)
        if has_default and default_body is not None:
            if first:
                self.stmt(default_body)
            else:
                self.em("else:")
                with self.em.indent():
                    self.stmt(default_body)

    # ------------------------------------------------------------------ calls

    def _x_Call(self, e: A.Call) -> str:
        v = self.call(e)
        if v is None:
            raise self.unsupported("a call without a value used in an expression", e)
        return v

    def call(self, c: A.Call) -> str | None:
        t = c.target
        if isinstance(t, A.CallAction):
            self.inline_action(t.action, c.resolved_args or _arg_values(c.args), [],
                               self.action_fqn(t.action), c)
            return None
        if isinstance(t, A.CallFunction):
            return self.function_call(c, t.function)
        if isinstance(t, A.CallTableApply):
            hit, _a = self.table_apply(c)
            return hit
        if isinstance(t, A.CallSubApply):
            self.sub_apply(c, t.instance)
            return None
        if isinstance(t, A.CallBuiltin):
            return self.builtin(c, t)
        if isinstance(t, A.CallExternMethod):
            if t.extern in ("packet_in", "packet_out"):
                return self.packet_method(c, t)
            c = self.dont_care_outs(c, t.overload.params)
            inst = None
            d = getattr(t.receiver, "decl", None)
            if isinstance(d, A.Instantiation):
                fqn = self.instance_fqn(d)
                inst = self.program.externs.get(fqn or "")
            return self.hooks.extern_method(self, c, t, inst)  # type: ignore[arg-type]
        if isinstance(t, A.CallExternFunction):
            c = self.dont_care_outs(c, t.function.params)
            name = t.function.name
            if name == "verify":
                return self.verify(c)  # type: ignore[attr-defined]
            if name == "static_assert":
                return "True"
            return self.hooks.extern_function(self, c, t.function)  # type: ignore[arg-type]
        raise self.unsupported(f"call of {type(t).__name__}", c)

    def args_of(self, c: A.Call) -> list[A.Expr | None]:
        return list(c.resolved_args) if c.resolved_args else _arg_values(c.args)

    def dont_care_outs(self, c: A.Call, params: list[A.Param]) -> A.Call:
        """``c`` with each ``_`` for an out parameter replaced by a temporary that the
        extern writes and nobody reads: the value is dropped, the side effects (a
        meter's state, the random generator's) stay."""
        if all(a.value is not None for a in c.args):
            return c
        args = [self.scratch(p.type_ref.resolved, c)
                if a is None and p.direction == "out" and not p.optional else a
                for p, a in zip(params, self.args_of(c), strict=False)]
        return A.Call(c.pos, c.callee, c.type_args, c.args, target=c.target,
                      resolved_args=args, type=c.type)

    def scratch(self, t: T.Type | None, node: A.Node) -> Raw:
        """A fresh temporary of type ``t`` for a ``_`` argument. The type of a value
        nobody reads matters only for an aggregate (a generic extern's out parameter
        has a type variable here: a wide scalar stands for it)."""
        st = strip(t) if t is not None else None
        if not isinstance(st, (T.Bits, T.Bool, T.Header, T.Struct, T.HeaderUnion, T.Stack)):
            st = T.Bits(64)
        name = self.tmp("_dc")
        if is_aggregate(st):
            self.em(f"{name} = {self.types.default(st)}")
        return Raw(node.pos, name, type=st)

    # -------------------------------------------------------------- actions

    def inline_action(self, decl: A.ActionDecl, bound: list[A.Expr | None], cp: list[str],
                      fqn: str, node: A.Node) -> None:
        if self.mod.trace:
            self.em(f"_T('action', {self.mod.stmt_id(node.pos)}, {fqn!r})")
        with self.scope():
            copy_out: list[tuple[A.Expr, str]] = []
            copied = self.copied_arguments(decl.params, bound, action_reach(decl))
            ci = 0
            for i, p in enumerate(decl.params):
                pt = strip(p.type_ref.resolved)  # type: ignore[arg-type]
                if i < len(bound) and isinstance(pt, T.Varbit):
                    varbit_out = self.varbit_argument(p, bound[i])
                    if varbit_out is not None:
                        copy_out.append(varbit_out)
                    continue
                if i < len(bound):
                    a = bound[i]
                    if a is None:
                        name = self.declare(p, p.name)
                        self.em(f"{name} = {self.types.default(pt)}")
                        continue
                    if is_aggregate(pt):
                        o, back = self.aggregate_argument(p, pt, a, i in copied)
                        self.bind_name(p, o)
                        if back is not None:
                            copy_out.append((back, o))
                        continue
                    if p.direction in ("out", "inout"):
                        a = self.pin_lvalue(a)
                    if p.direction == "out":
                        name = self.declare(p, p.name)
                        self.em(f"{name} = {self.types.default(pt)}")
                        copy_out.append((a, name))
                        continue
                    v = self.expr(a)
                    at = self.ty(a)
                    if isinstance(at, T.InfInt):
                        v = self.wrap(v, pt)
                    name = self.declare(p, p.name)
                    self.em(f"{name} = {v}")
                    if p.direction == "inout":
                        copy_out.append((a, name))
                else:
                    if ci >= len(cp):
                        raise self.unsupported(f"action {decl.name}: missing argument {p.name}",
                                               node)
                    name = self.declare(p, p.name)
                    self.em(f"{name} = {cp[ci]}")
                    ci += 1
            if copy_out and may_exit(decl.body):
                # exit ends the action, but its out/inout arguments are still copied out
                self.em("try:")
                with self.em.indent():
                    self._action_body(decl)
                self.em("except _P4Exit:")
                with self.em.indent():
                    for a, name in copy_out:
                        self.assign(a, name)
                    self.em("raise")
            else:
                self._action_body(decl)
            for a, name in copy_out:
                self.assign(a, name)

    def varbit_argument(self, p: A.Param, a: A.Expr | None) -> tuple[A.Expr, str] | None:
        """Bind a varbit parameter of an inlined action (a value and a width); returns
        what to copy back, as a copy_out entry."""
        name = self.declare(p, p.name)
        if a is None or p.direction == "out":
            self.em(f"{name}, {name}_w = 0, 0")
        else:
            v, w = self._varbit_ref(a)
            self.em(f"{name}, {name}_w = {v}, {w}")
        if a is None or p.direction not in ("out", "inout"):
            return None
        return self.pin_lvalue(a), f"{name}, {name}_w"

    def copied_arguments(self, params: list[A.Param], args: list[A.Expr | None],
                         reach: set[int]) -> set[int]:
        """The parameters whose aggregate arguments are copied (see codegen_alias)."""
        aggregate = [is_aggregate(p.type_ref.resolved) for p in params]
        return copied_arguments(params, args, aggregate, reach)

    def aggregate_argument(self, p: A.Param, pt: T.Type, a: A.Expr,
                           copied: bool) -> tuple[str, A.Expr | None]:
        """The object an aggregate parameter stands for during the call, and the
        argument to copy it back into afterwards (None when nothing is copied back).
        Passed by reference, an out argument becomes invalid at the call; copied, it
        starts as a fresh invalid value and ``in`` is copied in."""
        if not copied:
            o = self.expr(a)
            if p.direction == "out":
                self.em(f"{o}.invalidate_all()")
            return o, None
        target = self.tmp("_arg")
        self.em(f"{target} = {self.expr(a)}")
        c = self.tmp("_cp")
        self.em(f"{c} = {self.types.default(pt)}" if p.direction == "out"
                else f"{c} = {target}.copy()")
        if p.direction in ("out", "inout"):
            return c, Raw(a.pos, target, type=a.type)
        return c, None

    def _action_body(self, decl: A.ActionDecl) -> None:
        if contains_return(decl.body):
            self.em("while True:")
            with self.em.indent():
                self.return_stack.append(("break", ""))
                try:
                    self.stmt(decl.body)
                finally:
                    self.return_stack.pop()
                self.em("break")
        else:
            self.stmt(decl.body)

    # ----------------------------------------------------------- functions

    def function_call(self, c: A.Call, fn: A.FunctionDecl) -> str | None:
        pyname = self.mod.function_names.get(id(fn))
        if pyname is None:
            pyname = self.mod.fresh(f"fn_{fn.name}_")
            self.mod.function_names[id(fn)] = pyname
            self.mod.pending_functions.append(fn)
        args = self.args_of(c)
        codes, back = self.call_arguments(fn.params, args)
        call = f"{pyname}({', '.join(codes)})"
        rt = strip(fn.return_type.resolved) if fn.return_type.resolved else T.Void()
        has_value = not isinstance(rt, T.Void)
        returned = any(src is None for _, src in back)
        if not returned and not has_value:
            self.em(call)
        r = self.tmp("_r")
        if returned or has_value:
            self.em(f"{r} = {call}")
        self.copy_back(back, r, 1 if has_value else 0)
        if not returned:
            return r if has_value else None
        return f"{r}[0]" if has_value else None

    def call_arguments(self, params: list[A.Param], args: list[A.Expr | None]
                       ) -> tuple[list[str], list[tuple[A.Expr | None, str | None]]]:
        """The Python arguments of a call of a function, parser or control (generated
        by ``compiler._params``), and its copy-out as ``copy_back`` takes it. Scalar
        out values come back in the tuple the callee returns; an out argument ``_``
        takes its value and drops it."""
        copied = self.copied_arguments(params, args, set())
        codes: list[str] = []
        back: list[tuple[A.Expr | None, str | None]] = []
        for i, (p, a) in enumerate(zip(params, args, strict=False)):
            pt = strip(p.type_ref.resolved)  # type: ignore[arg-type]
            if isinstance(pt, T.Extern) and pt.name == "packet_in":
                continue  # a parser takes the packet first, whatever its parameters
            if isinstance(pt, T.Extern) and pt.name == "packet_out":
                codes.append(self.packet_out or "None")
                continue
            aggregate = is_aggregate(pt)
            varbit = isinstance(pt, T.Varbit)  # a value and a width, two Python values
            if a is None:
                if aggregate or p.direction != "out":
                    codes += ["0", "0"] if varbit else [self.types.default(pt)]
                if not aggregate and p.direction in ("out", "inout"):
                    back.append((None, None))
                continue
            if varbit:
                if p.direction in ("out", "inout"):
                    back.append((self.pin_lvalue(a), None))
                if p.direction != "out":
                    codes += self._varbit_ref(a)
                continue
            if aggregate:
                o, target = self.aggregate_argument(p, pt, a, i in copied)
                codes.append(o)
                if target is not None:
                    back.append((target, o))
                continue
            if p.direction in ("out", "inout"):
                a = self.pin_lvalue(a)
            if p.direction == "out":
                back.append((a, None))
                continue
            v = self.expr(a)
            if isinstance(self.ty(a), T.InfInt):
                v = self.wrap(v, pt)
            codes.append(v)
            if p.direction == "inout":
                back.append((a, None))
        return codes, back

    def copy_back(self, back: list[tuple[A.Expr | None, str | None]], r: str,
                  first: int) -> None:
        """Copy-out, in parameter order: a (target, source) pair with a source names
        the copy of an aggregate; the others take the next value of the tuple ``r``
        the callee returned, from index ``first`` on (target None: dropped)."""
        k = first
        for target, src in back:
            if src is None:
                src = f"{r}[{k}]"
                k += 1
            if target is not None:
                self.assign(target, src)

    # ---------------------------------------------------------- builtins

    def builtin(self, c: A.Call, t: A.CallBuiltin) -> str | None:
        m = t.method
        rt = self.ty(t.receiver)
        if m == "isValid":
            return f"{self.expr(t.receiver)}.valid"
        if m == "setValid":
            h, u = self.header_ref(t.receiver)
            # BMv2's add_header, which p4c-bm2-ss emits in parser states and controls
            # alike: the fields of a header that was invalid become 0
            self.em(f"if not {h}.valid:")
            self.em(f"    {h}.zero()")
            self.em(f"    {h}.valid = True")
            self.union_siblings_invalid(t.receiver, u)
            return None
        if m == "setInvalid":
            self.em(f"{self.expr(t.receiver)}.valid = False")
            return None
        if m in ("push_front", "pop_front"):
            n = self.expr(self.args_of(c)[0])  # type: ignore[arg-type]
            self.em(f"_stack_{m}({self.expr(t.receiver)}, {n})")
            return None
        if m in ("minSizeInBits", "maxSizeInBits", "minSizeInBytes", "maxSizeInBytes"):
            try:
                w = T.width_of(rt)
            except TypeError:
                w = 0
            if isinstance(rt, T.Header):
                w = 0
                for f in rt.fields:
                    ft = strip(f.type)
                    if isinstance(ft, T.Varbit):
                        w += ft.max_width if m.startswith("max") else 0
                    else:
                        w += T.width_of(ft)
            return str(w if m.endswith("Bits") else (w + 7) // 8)
        raise self.unsupported(f"method {m}", c)

    def header_ref(self, target: A.Expr) -> tuple[str, str | None]:
        """Temporaries holding the header ``target`` and, when it is a member of a header
        union, the union: the expression is evaluated once (in a parser, ``u.next.h``
        moves the stack on)."""
        h = self.tmp("_h")
        if isinstance(target, A.Member) and isinstance(self.ty(target.expr), T.HeaderUnion):
            u = self.tmp("_u")
            self.em(f"{u} = {self.expr(target.expr)}")
            self.em(f"{h} = {u}.{attr(target.name)}")
            return h, u
        self.em(f"{h} = {self.expr(target)}")
        return h, None

    def union_siblings_invalid(self, member: A.Expr, union: str | None) -> None:
        """The other headers of the union held in ``union`` (from ``header_ref``)
        become invalid once ``member`` is valid."""
        if union is None or not isinstance(member, A.Member):
            return
        ut = self.ty(member.expr)
        assert isinstance(ut, T.HeaderUnion)
        for f in ut.fields:
            if f.name != member.name:
                self.em(f"{union}.{attr(f.name)}.valid = False")

    # -------------------------------------------------------- packet_out

    def packet_method(self, c: A.Call, t: A.CallExternMethod) -> str | None:
        if t.method == "emit":
            if self.packet_out is None:
                raise self.unsupported("emit outside a deparser", c)
            self.emit_value(self.args_of(c)[0])  # type: ignore[arg-type]
            return None
        return self.packet_in_method(c, t)  # type: ignore[attr-defined]

    def emit_value(self, e: A.Expr) -> None:
        t = self.ty(e)
        out = self.packet_out
        if isinstance(t, T.Header):
            h = self.expr(e)
            self.em(f"if {h}.valid:")
            self.em(f"    {out}.append({h}.pack())")
        elif isinstance(t, T.Stack):
            s = self.expr(e)
            v = self.tmp("_el")
            el = strip(t.element)
            self.em(f"for {v} in {s}.elems:")
            if isinstance(el, T.HeaderUnion):
                for f in el.fields:
                    self.em(f"    if {v}.{attr(f.name)}.valid:")
                    self.em(f"        {out}.append({v}.{attr(f.name)}.pack())")
            else:
                self.em(f"    if {v}.valid:")
                self.em(f"        {out}.append({v}.pack())")
        elif isinstance(t, (T.Struct, T.HeaderUnion)):
            s = self.expr(e)
            for f in t.fields:
                self.emit_value(A.Member(e.pos, Raw(e.pos, s, type=t), f.name, type=f.type))
        elif isinstance(t, T.Tuple) and isinstance(e, A.ListExpr):
            for x in e.elements:
                self.emit_value(x)
        elif isinstance(t, T.Tuple):
            s = self.tmp("_tu")
            self.em(f"{s} = {self.expr(e)}")
            for i, et in enumerate(t.elements):
                self.emit_value(Raw(e.pos, f"{s}[{i}]", type=et))
        else:
            raise self.unsupported(f"emit of a {t}", e)

    # ------------------------------------------------------------- tables

    def runtime_table(self, decl: A.TableDecl):  # type: ignore[no-untyped-def]
        fqn = self.instance_fqn(decl)
        rt = self.mod.runtime_tables.get(fqn or "")  # type: ignore[attr-defined]
        if rt is None:
            raise self.unsupported(f"table {decl.name} has no instance", decl)
        return rt

    def table_apply(self, c: A.Call) -> tuple[str, str]:
        decl = c.target.table  # type: ignore[union-attr]
        rt = self.runtime_table(decl)
        fqn = rt.name
        ti = self.program.tables[fqn]
        tname = self.mod.bind(rt, "tbl_" + fqn)
        e = self.tmp("_e")
        hit = self.tmp("_hit")
        match_keys = [k for k in decl.keys if k.match_kind != "selector"]
        if match_keys:
            keys = []
            for k in match_keys:
                v = self.expr(k.expr)
                kt = self.ty(k.expr)
                if is_signed(kt):
                    v = f"({v} & {(1 << scalar_width(kt)) - 1})"
                keys.append(v)
            key = keys[0] if len(keys) == 1 else "(" + ", ".join(keys) + ",)"
            lk = self.mod.bind(rt.lookup, "lk_" + fqn)
            self.em(f"{e} = {lk}({key})")
            self.em(f"if {e} is None:")
            self.em(f"    {e} = {tname}.default")
            self.em(f"    {hit} = False")
            self.em("else:")
            self.em(f"    {hit} = True")
            if ti.direct_counter:
                cnt = self.tmp("_c")
                self.em(f"    {cnt} = {e}.counter")
                self.em(f"    {cnt}[0] += 1")
                self.em(f"    {cnt}[1] += {self.hooks.packet_length}")  # type: ignore[attr-defined]
        else:
            self.em(f"{e} = {tname}.default")
            self.em(f"{hit} = False")
        if ti.direct_meter:
            dm = self.tmp("_dm")
            self.em(f"{dm} = {e}.meter.execute({self.hooks.packet_length}) "  # type: ignore[attr-defined]
                    f"if {hit} and {e}.meter is not None else 0")
            self.direct_meter_var[ti.direct_meter] = dm
        if self.mod.trace:
            self.em(f"_T('table', {self.mod.stmt_id(c.pos)}, ({tname}, {e}, {hit}))")
        act = self.tmp("_a")
        args = self.tmp("_args")
        indirect = rt.profile is not None
        if indirect and match_keys:
            # an indirect entry names a member or a group: resolve it to an action
            sels = []
            for k in decl.keys:
                if k.match_kind != "selector":
                    continue
                v = self.expr(k.expr)
                kt = self.ty(k.expr)
                if is_signed(kt):
                    v = f"({v} & {(1 << scalar_width(kt)) - 1})"
                sels.append(v)
            sel = "(" + "".join(f"{v}, " for v in sels) + ")"
            rs = self.mod.bind(rt.resolve, "rs_" + fqn)
            r = self.tmp("_r")
            self.em(f"{r} = {rs}({e}, {sel}) if {hit} else {e}")
            self.em(f"{act} = {r}.aidx")
            self.em(f"{args} = {r}.args")
        else:
            self.em(f"{act} = {e}.aidx")
            self.em(f"{args} = {e}.args")
        refs = {self.action_fqn(r.action): r for r in decl.actions if r.action is not None}
        n = len(rt.actions) if not indirect else len(rt.actions) + 1  # + no action
        for i, spec in enumerate(rt.actions):
            ai = self.program.actions.get(spec.fqn)
            if ai is None:
                raise self.unsupported(f"action {spec.fqn} has no instance", decl)
            ref = refs.get(spec.fqn)
            bound = _arg_values(ref.args) if ref is not None else []
            cps = [f"{args}[{j}]" for j in range(len(spec.params))]
            if n > 1:
                self.em(f"{'if' if i == 0 else 'elif'} {act} == {i}:")
                with self.em.indent():
                    self.inline_action(ai.decl, bound, cps, spec.fqn, c)
            else:
                self.inline_action(ai.decl, bound, cps, spec.fqn, c)
        return hit, act

    # ------------------------------------------------------------ sub-blocks

    def sub_apply(self, c: A.Call, inst: A.Instantiation | A.Param) -> None:
        child = self.block.children.get(inst.name) if self.block is not None else None
        if child is None:
            raise self.unsupported(f"apply of {inst.name}: no instance", c)
        fname = self.mod.block_names[child.fqn]  # type: ignore[attr-defined]
        decl = child.decl
        codes, back = self.call_arguments(decl.params, self.args_of(c))
        is_parser = isinstance(decl, A.ParserDecl)
        if is_parser:  # the packet and the offset, as compiler._params declares them
            codes = ["_d", "_bo", *codes]
        call = f"{fname}({', '.join(codes)})"
        returned = any(src is None for _, src in back)
        if is_parser:
            if returned:
                r = self.tmp("_r")
                self.em(f"{r} = {call}")
                self.em(f"_bo = {r}[0]")
            else:
                r = ""
                self.em(f"_bo = {call}")
            self.copy_back(back, r, 1)
            return
        if returned:
            # the control returns its out values and whether it ended with `exit`, which
            # ends this control too, after the copy-out
            r = self.tmp("_r")
            self.em(f"{r} = {call}")
            self.copy_back(back, r, 0)
            self.em(f"if {r}[-1]:")
            self.em("    raise _EXIT")
        elif back:
            self.em("try:")
            self.em(f"    {call}")
            self.em("except _P4Exit:")
            with self.em.indent():
                self.copy_back(back, "", 0)
                self.em("raise")
            self.copy_back(back, "", 0)
        else:
            self.em(call)
