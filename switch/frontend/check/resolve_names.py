"""Pass 1: name resolution.

Walks the whole tree with lexical scopes and records what every name means:
``Name.decl`` for names in expressions, ``Context.type_decls`` for named types, and the
states of every parser. Reports undeclared names, duplicate declarations in one scope
and uses of a name before its declaration. Declaration must precede use, except for
parser states (a parser's states all see each other) and the actions a table lists
(any action of the enclosing control)."""

from __future__ import annotations

import re

from switch.frontend import ast as A
from switch.frontend.check.context import CORE_ERRORS, Context, TypeParam
from switch.frontend.check.scopes import Scope

BUILTIN_STATES = ("accept", "reject")


class ResolveNames:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.top = Scope(None, "top")
        self.error_decl: A.ErrorDecl | None = None
        # actions of the control being resolved (tables may name later ones)
        self.control_actions: dict[str, A.ActionDecl] = {}

    # ------------------------------------------------------------------ helpers

    def name_pos(self, decl: A.Declaration | A.Field) -> A.Pos:
        return self.ctx.name_pos(decl)

    def declare(self, scope: Scope, name: str, decl: object, where: A.Declaration) -> None:
        clash = scope.add(name, decl)
        if clash is not None:
            self.ctx.error(self.name_pos(where), f"{name}: duplicate declaration", len(name))

    def declare_params(self, scope: Scope, params: list[A.Param]) -> None:
        for p in params:
            self.type_ref(p.type_ref, scope)
            if p.default is not None:
                self.expr(p.default, scope)
            self.declare(scope, p.name, p, p)

    def type_params(self, names: list[str], owner: A.Declaration, scope: Scope) -> Scope:
        inner = Scope(scope, "type-params")
        for n in names:
            inner.add(n, TypeParam(n, owner, owner.pos))
        return inner

    # -------------------------------------------------------------------- types

    def type_ref(self, ref: A.TypeRef | None, scope: Scope) -> None:
        if ref is None:
            return
        if isinstance(ref, A.NamedTypeRef):
            name = ref.name
            found = self.top.lookup(name[1:]) if name.startswith(".") else scope.lookup(name)
            if not found:
                self.ctx.error(ref.pos, f"{name.lstrip('.')}: declaration not found", len(name))
            else:
                self.ctx.type_decls[id(ref)] = found[0]
            for a in ref.args:
                self.type_ref(a, scope)
        elif isinstance(ref, (A.BitTypeRef, A.VarbitTypeRef)):
            if ref.width is not None:
                self.expr(ref.width, scope)
        elif isinstance(ref, A.StackTypeRef):
            self.type_ref(ref.element, scope)
            self.expr(ref.size, scope)
        elif isinstance(ref, A.TupleTypeRef):
            for e in ref.elements:
                self.type_ref(e, scope)

    # -------------------------------------------------------------- expressions

    def expr(self, e: A.Expr | None, scope: Scope) -> None:
        if e is None:
            return
        if isinstance(e, A.Name):
            self.name(e, scope)
        elif isinstance(e, A.Member):
            self.expr(e.expr, scope)
        elif isinstance(e, A.Index):
            self.expr(e.expr, scope)
            self.expr(e.index, scope)
        elif isinstance(e, A.Slice):
            self.expr(e.expr, scope)
            self.expr(e.hi, scope)
            self.expr(e.lo, scope)
        elif isinstance(e, A.Unary):
            self.expr(e.expr, scope)
        elif isinstance(e, A.Binary):
            self.expr(e.left, scope)
            self.expr(e.right, scope)
        elif isinstance(e, A.Mux):
            self.expr(e.cond, scope)
            self.expr(e.then, scope)
            self.expr(e.other, scope)
        elif isinstance(e, A.Cast):
            self.type_ref(e.to, scope)
            self.expr(e.expr, scope)
        elif isinstance(e, A.Call):
            self.expr(e.callee, scope)
            for t in e.type_args:
                self.type_ref(t, scope)
            for a in e.args:
                self.expr(a.value, scope)
        elif isinstance(e, A.ListExpr):
            for x in e.elements:
                self.expr(x, scope)
        elif isinstance(e, A.StructExpr):
            seen: set[str] = set()
            for fname, x in e.fields:
                if fname in seen:
                    self.ctx.error(x.pos, f"{fname}: duplicate field in initializer", len(fname))
                seen.add(fname)
                self.expr(x, scope)
        elif isinstance(e, A.TypeExpr):
            self.type_ref(e.ref, scope)

    def name(self, e: A.Name, scope: Scope) -> None:
        if e.name == "error" and not e.top_level and not scope.lookup("error"):
            e.decl = self.error_decl
            return
        found = self.top.lookup(e.name) if e.top_level else scope.lookup(e.name)
        if not found:
            self.ctx.error(e.pos, f"{e.name}: declaration not found", len(e.name))
            return
        e.decl = found[0]
        if len(found) > 1:
            self.ctx.overloads[id(e)] = list(found)

    # --------------------------------------------------------------- statements

    def stmt(self, s: A.Stmt | A.Node, scope: Scope) -> None:
        if isinstance(s, A.Block):
            inner = Scope(scope, "block")
            for x in s.stmts:
                self.stmt(x, inner)
        elif isinstance(s, A.Assign):
            self.expr(s.target, scope)
            self.expr(s.value, scope)
        elif isinstance(s, A.CallStmt):
            self.expr(s.call, scope)
        elif isinstance(s, A.If):
            self.expr(s.cond, scope)
            self.stmt(s.then, Scope(scope, "block"))
            if s.other is not None:
                self.stmt(s.other, Scope(scope, "block"))
        elif isinstance(s, A.Switch):
            self.expr(s.expr, scope)
            for c in s.cases:
                if not isinstance(c.label, A.DefaultExpr):
                    self.expr(c.label, scope)
                if c.body is not None:
                    self.stmt(c.body, scope)
        elif isinstance(s, A.Return):
            self.expr(s.value, scope)
        elif isinstance(s, A.DeclStmt):
            self.local_decl(s.decl, scope)
        elif isinstance(s, A.For):
            inner = Scope(scope, "for")  # the declarations of the init clause
            for x in s.init:
                self.stmt(x, inner)
            self.expr(s.cond, inner)
            for x in s.updates:
                self.stmt(x, inner)
            self.stmt(s.body, Scope(inner, "block"))
        elif isinstance(s, A.ForIn):
            self.expr(s.collection, scope)  # before the loop variable exists
            inner = Scope(scope, "for")
            self.local_decl(s.var, inner)
            self.stmt(s.body, Scope(inner, "block"))
        elif isinstance(s, (A.Exit, A.Empty, A.Break, A.Continue)):
            pass
        elif isinstance(s, A.Unsupported):
            self.ctx.unsupported(s.pos, s.what)
        else:
            self.ctx.unsupported(s.pos, type(s).__name__)

    def local_decl(self, d: A.Declaration | A.Node, scope: Scope) -> None:
        """A declaration inside a block, a parser or a control."""
        if isinstance(d, A.VarDecl):
            self.type_ref(d.type_ref, scope)
            self.expr(d.init, scope)
            self.declare(scope, d.name, d, d)
        elif isinstance(d, A.ConstDecl):
            self.type_ref(d.type_ref, scope)
            self.expr(d.value, scope)
            self.declare(scope, d.name, d, d)
        elif isinstance(d, A.Instantiation):
            self.instantiation(d, scope)
        elif isinstance(d, A.ValueSetDecl):
            self.type_ref(d.element, scope)
            self.expr(d.size, scope)
            self.declare(scope, d.name, d, d)
        elif isinstance(d, A.ActionDecl):
            self.action(d, scope)
        elif isinstance(d, A.TableDecl):
            self.table(d, scope)
        elif isinstance(d, A.Unsupported):
            self.ctx.unsupported(d.pos, d.what)
        else:
            self.ctx.unsupported(d.pos, f"{type(d).__name__} here")

    def instantiation(self, d: A.Instantiation, scope: Scope) -> None:
        self.type_ref(d.type_ref, scope)
        for a in d.args:
            self.expr(a.value, scope)
        if d.initializer is not None:
            self.ctx.unsupported(d.initializer.pos, "instantiation with an initializer block")
        self.declare(scope, d.name, d, d)

    def action(self, d: A.ActionDecl, scope: Scope) -> None:
        inner = Scope(scope, "action")
        self.declare_params(inner, d.params)
        self.stmt(d.body, inner)
        self.declare(scope, d.name, d, d)

    def table(self, d: A.TableDecl, scope: Scope) -> None:
        for k in d.keys:
            self.expr(k.expr, scope)
        for ref in d.actions:
            self.action_ref(ref, scope)
        if d.default_action is not None:
            self.action_ref(d.default_action, scope)
        for entry in d.entries:
            for key in entry.keys:
                self.expr(key, scope)
            self.action_ref(entry.action, scope)
            self.expr(entry.priority, scope)
        self.expr(d.size, scope)
        self.expr(d.largest_priority_wins, scope)
        self.expr(d.priority_delta, scope)
        for prop in d.properties:
            self.expr(prop.value, scope)
        self.declare(scope, d.name, d, d)

    def action_ref(self, ref: A.ActionRef, scope: Scope) -> None:
        name = ref.name
        if isinstance(name, A.Name) and not name.top_level:
            found = scope.lookup(name.name)
            if not found and name.name in self.control_actions:
                name.decl = self.control_actions[name.name]
            else:
                self.expr(name, scope)
        else:
            self.expr(name, scope)
        for a in ref.args:
            self.expr(a.value, scope)

    # ------------------------------------------------------------- declarations

    def run(self) -> Scope:
        for i, name in enumerate(CORE_ERRORS):
            self.ctx.errors.setdefault(name, i)
        for d in self.ctx.tree.decls:
            if isinstance(d, A.ErrorDecl) and self.error_decl is None:
                self.error_decl = d
        for d in self.ctx.tree.decls:
            self.top_decl(d)
        return self.top

    def top_decl(self, d: A.Declaration | A.Node) -> None:
        top = self.top
        if isinstance(d, (A.HeaderDecl, A.StructDecl, A.HeaderUnionDecl)):
            scope = self.type_params(d.type_params, d, top)
            seen: set[str] = set()
            for f in d.fields:
                self.type_ref(f.type_ref, scope)
                if f.name in seen:
                    self.ctx.error(self.name_pos(f), f"{f.name}: duplicate field", len(f.name))
                seen.add(f.name)
            self.declare(top, d.name, d, d)
        elif isinstance(d, A.EnumDecl):
            self.type_ref(d.underlying, top)
            members: set[str] = set()
            for m, value in d.members:
                if m in members:
                    first = self.ctx.find_after(d.pos, r"\b" + _escape(m) + r"\b")
                    again = self.ctx.find_after(
                        A.Pos(first.line, first.col + 1), r"\b" + _escape(m) + r"\b"
                    )
                    self.ctx.error(again, f"{d.name}.{m}: duplicate declaration", len(m))
                members.add(m)
                self.expr(value, top)
            self.declare(top, d.name, d, d)
        elif isinstance(d, A.ErrorDecl):
            self.error_members(d)
        elif isinstance(d, A.MatchKindDecl):
            for m in d.members:
                if m in self.ctx.match_kinds:
                    self.ctx.error(self.ctx.find_after(d.pos, r"\b" + _escape(m) + r"\b"),
                                   f"{m}: duplicate declaration", len(m))
                else:
                    self.ctx.match_kinds.append(m)
        elif isinstance(d, A.TypedefDecl):
            self.type_ref(d.type_ref, top)
            self.declare(top, d.name, d, d)
        elif isinstance(d, A.ConstDecl):
            self.local_decl(d, top)
        elif isinstance(d, A.ExternDecl):
            self.extern(d)
        elif isinstance(d, A.ExternFunctionDecl):
            scope = self.type_params(d.type_params, d, top)
            self.type_ref(d.return_type, scope)
            self.declare_params(Scope(scope, "params"), d.params)
            self.declare(top, d.name, d, d)
        elif isinstance(d, A.FunctionDecl):
            scope = self.type_params(d.type_params, d, top)
            self.type_ref(d.return_type, scope)
            inner = Scope(scope, "function")
            self.declare_params(inner, d.params)
            self.stmt(d.body, inner)
            self.declare(top, d.name, d, d)
        elif isinstance(d, A.ActionDecl):
            self.action(d, top)
        elif isinstance(d, (A.ParserTypeDecl, A.ControlTypeDecl, A.PackageDecl)):
            scope = self.type_params(d.type_params, d, top)
            self.declare_params(Scope(scope, "params"), d.params)
            self.declare(top, d.name, d, d)
        elif isinstance(d, A.ParserDecl):
            self.parser(d)
        elif isinstance(d, A.ControlDecl):
            self.control(d)
        elif isinstance(d, A.Instantiation):
            self.instantiation(d, top)
        elif isinstance(d, A.Unsupported):
            self.ctx.unsupported(d.pos, d.what)
        else:
            self.ctx.unsupported(d.pos, f"{type(d).__name__} at top level")

    def error_members(self, d: A.ErrorDecl) -> None:
        errors = self.ctx.errors
        declared: set[str] = getattr(self, "_declared_errors", set())
        for m in d.members:
            if m in declared:
                self.ctx.error(self.ctx.find_after(d.pos, r"\b" + _escape(m) + r"\b"),
                               f"error.{m}: duplicate declaration", len(m))
                continue
            declared.add(m)
            if m not in errors:
                errors[m] = len(errors)
        self._declared_errors = declared

    def extern(self, d: A.ExternDecl) -> None:
        scope = self.type_params(d.type_params, d, self.top)
        methods = Scope(None, "methods")
        # the extern's own name is visible in its methods (constructors)
        self.declare(self.top, d.name, d, d)
        for m in d.methods:
            mscope = self.type_params(m.type_params, m, scope)
            self.type_ref(m.return_type, mscope)
            self.declare_params(Scope(mscope, "params"), m.params)
            self.declare(methods, m.name, m, m)

    def parser(self, d: A.ParserDecl) -> None:
        scope = Scope(self.type_params(d.type_params, d, self.top), "parser")
        self.declare_params(scope, d.params)
        self.declare_params(scope, d.ctor_params)
        for local in d.locals:
            self.local_decl(local, scope)
        states: dict[str, A.ParserState] = {}
        for st in d.states:
            if st.name in states or st.name in BUILTIN_STATES:
                self.ctx.error(self.name_pos(st), f"{st.name}: duplicate declaration",
                               len(st.name))
                continue
            states[st.name] = st
        self.ctx.states[id(d)] = states
        if "start" not in states:
            self.ctx.error(self.name_pos(d), f"{d.name}: parser has no 'start' state", len(d.name))
        for st in d.states:
            inner = Scope(scope, "state")
            for s in st.stmts:
                self.stmt(s, inner)
            tr = st.transition
            if isinstance(tr, str):
                self.check_state(tr, states, self.ctx.find_after(
                    st.pos, r"\btransition\s+(" + _escape(tr) + r")\b", 1))
            elif isinstance(tr, A.Select):
                for e in tr.exprs:
                    self.expr(e, inner)
                for c in tr.cases:
                    self.expr(c.keyset, inner)
                    self.check_state(c.state, states, self.ctx.find_after(
                        c.pos, r":\s*(" + _escape(c.state) + r")\b", 1))
        self.declare(self.top, d.name, d, d)

    def check_state(self, name: str, states: dict[str, A.ParserState], pos: A.Pos) -> None:
        if name not in states and name not in BUILTIN_STATES:
            self.ctx.error(pos, f"{name}: declaration not found", len(name))

    def control(self, d: A.ControlDecl) -> None:
        scope = Scope(self.type_params(d.type_params, d, self.top), "control")
        self.declare_params(scope, d.params)
        self.declare_params(scope, d.ctor_params)
        saved = self.control_actions
        self.control_actions = {a.name: a for a in d.locals if isinstance(a, A.ActionDecl)}
        for local in d.locals:
            self.local_decl(local, scope)
        self.stmt(d.body, scope)
        self.control_actions = saved
        self.declare(self.top, d.name, d, d)


def _escape(name: str) -> str:
    return re.escape(name)


def resolve_names(ctx: Context) -> Scope:
    return ResolveNames(ctx).run()
