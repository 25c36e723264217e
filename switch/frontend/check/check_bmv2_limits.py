"""Pass 4: what p4c-bm2-ss rejects in a program the language allows, because BMv2 cannot
run it. Each rule is p4c-bm2-ss's, with its message and error class:

* a shift by a ``bit<W>`` amount wider than 8 bits (``overlimit``), or by a constant
  over 256;
* ``/`` and ``%`` that do not fold to a constant, except by a power of two (``invalid``);
* a ``for (T x in ...)`` loop (``unsupported``);
* in parser states, only assignments, ``extract``/``lookahead``/``advance``,
  ``verify``, ``assert``/``assume``/``log_msg`` and the header and stack methods
  (``unsupported``); a value set inside a tuple keyset (``invalid``); a field of a
  stack's ``next`` element (``uninitialized``);
* in the checksum controls, only calls of ``verify_checksum`` (and ``_with_payload``)
  and ``update_checksum`` (and ``_with_payload``) respectively, which are unknown
  anywhere else (``unsupported``, ``unknown``), over fields and constants
  (``unsupported``);
* in the deparser, only ``emit`` and extern function calls (``unsupported``);
* extern types and functions BMv2 does not implement: those a program declares, and the
  v1model ones p4c-bm2-ss dropped (``Checksum16``, ``clone3``, ``resubmit``,
  ``recirculate``, ``mark_to_drop()`` without ``standard_metadata``);
* ``hash`` data that is not a struct or a list, ``log_msg`` data that is not a list;
* a table that some path through a control applies twice, or that two places apply
  with different statements after them (``invalid``); a table with two ``lpm`` keys, an
  entry key that is an ``error``, or a ``bool`` for an ``lpm``/``range``/``optional``
  key (``unsupported``);
* and those of ``check_bmv2_pipeline`` (parser parameters, header widths, direct
  meters), with what this walk collects.

The walk follows the instantiated program, block by block with the role the package
gives it, into the sub-parsers and sub-controls it applies, the tables it applies, the
actions its tables and body use, and the functions it calls, so that code p4c would
drop as unused is not checked; it judges expressions as p4c's back end sees them
(``simplify_as_p4c``), and leaves out the branch of an ``if`` and the parser states
that p4c's constant folding drops."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check.check_bmv2_pipeline import (
    direct_meters,
    header_widths,
    parser_parameters,
)
from switch.frontend.check.context import Context
from switch.frontend.check.print_expressions import expr_text, type_ref_text
from switch.frontend.check.simplify_as_p4c import (
    ZeroDivisor,
    constant_bool,
    live_branches,
    live_calls,
    operators,
    select_targets,
    simplify,
)
from switch.frontend.check.walk_expressions import calls_in, subexpressions, walk_expression
from switch.frontend.diagnostics import Diagnostics
from switch.frontend.program import BlockInstance, Program

# The role of each V1Switch block.
ROLES = {"p": "parser", "vr": "verify", "ig": "control", "eg": "control",
         "ck": "compute", "dep": "deparser"}
MAX_SHIFT_WIDTH = 8

# v1model's extern types and functions that BMv2 implements.
KNOWN_EXTERNS = frozenset({
    "counter", "direct_counter", "meter", "direct_meter", "register", "action_profile",
    "action_selector",
})
KNOWN_FUNCTIONS = frozenset({
    "verify", "static_assert", "mark_to_drop", "hash", "random", "digest", "clone",
    "clone_preserving_field_list", "resubmit_preserving_field_list",
    "recirculate_preserving_field_list", "truncate", "assert", "assume", "log_msg",
})
# The checksum functions, each allowed only in its own checksum control.
CHECKSUM_FUNCTIONS = {
    "verify": ("verify_checksum", "verify_checksum_with_payload"),
    "compute": ("update_checksum", "update_checksum_with_payload"),
}
PARSER_FUNCTIONS = frozenset({"verify", "assert", "assume", "log_msg"})
PARSER_METHODS = frozenset({"extract", "lookahead", "advance"})
PARSER_BUILTINS = frozenset({"setValid", "setInvalid", "push_front", "pop_front"})
# How p4c-bm2-ss names each match kind in its messages about entries.
ENTRY_KEY_KINDS = {"exact": "exact", "ternary": "ternary", "lpm": "LPM", "range": "range",
                   "optional": "optional"}


def check_bmv2_limits(program: Program, diags: Diagnostics) -> None:
    text = str(getattr(program.source, "text", "") or "")
    _Walk(Context(diags, A.SourceFile(program.decls), text=text), program).run()


class _Walk:
    def __init__(self, ctx: Context, program: Program) -> None:
        self.ctx = ctx
        self.program = program
        self.role = "control"
        self.block: BlockInstance | None = None
        self.reported: set[tuple[object, str]] = set()
        self.storage: list[T.Type] = []  # the types of the program's variables
        self.meter_reads: dict[str, list[A.Expr]] = {}  # direct meter -> read destinations
        self.applied: set[str] = set()  # the tables the program applies
        self.visited: set[tuple[int, str]] = set()  # (id(decl), role) of walked callees
        self.statement_rules: dict[str, Callable[[A.Stmt], str | None]] = {
            "parser": self._parser_statement,
            "verify": self._checksum_statement,
            "compute": self._checksum_statement,
            "deparser": self._deparser_statement,
        }

    def error(self, pos: A.Pos, message: str, length: int, kind: str) -> None:
        if (pos, message) not in self.reported:
            self.reported.add((pos, message))
            self.ctx.error(pos, message, max(1, length), kind)

    def error_at(self, e: A.Expr | A.Call, message: str, kind: str) -> None:
        self.error(e.pos, message, len(expr_text(e)), kind)

    # ---------------------------------------------------------------- blocks

    def run(self) -> None:
        for d in self.program.decls:
            if isinstance(d, A.Instantiation):
                self._instance(d)
        for key, block in self.program.pipeline.items():
            self.role = ROLES.get(key, "control")
            self._block(block)
        parser_parameters(self.ctx, self.program)
        header_widths(self.ctx, self.storage)
        direct_meters(self.ctx, self.program, self.meter_reads, self.applied)

    def _block(self, block: BlockInstance) -> None:
        saved, self.block = self.block, block
        try:
            decl = block.decl
            self._variables(decl.params)
            for local in decl.locals:
                if isinstance(local, A.Instantiation):
                    self._instance(local)
                elif isinstance(local, A.VarDecl):
                    self._variables([local])
            if isinstance(decl, A.ParserDecl):
                for state in _reachable_states(decl):
                    self._statements(state.stmts)
                    if isinstance(state.transition, A.Select):
                        self._select(state.transition)
            else:
                applied = _applied_tables(decl)
                for local in decl.locals:
                    if isinstance(local, A.TableDecl) and id(local) in applied:
                        self._table(local)
                self._statement(decl.body)
                _TableApplies(self, block).run()
        finally:
            self.block = saved

    def _instance(self, d: A.Instantiation) -> None:
        t = d.type
        if isinstance(t, T.Extern) and t.name not in KNOWN_EXTERNS:
            self.error(d.pos, f"{t.name}: unknown extern instance",
                       len(type_ref_text(d.type_ref)), "unknown")

    def _table(self, t: A.TableDecl) -> None:
        fqn = self._fqn(t)
        lpm = [k for k in t.keys if k.match_kind == "lpm"]
        if len(lpm) > 1:
            self.error(self.ctx.name_pos(t), f"multiple LPM keys in table {fqn} not "
                       "supported", len(t.name), "unsupported")
        for k in t.keys:
            self._expr(k.expr)
        for entry in t.entries:
            for k, value in zip(t.keys, entry.keys, strict=False):
                self._entry_key(k.match_kind, value)
        refs = [*t.actions, *([t.default_action] if t.default_action else []),
                *(e.action for e in t.entries)]
        for ref in refs:
            if ref.action is not None:
                self._callee(ref.action, ref.action.body)

    def _fqn(self, decl: A.Declaration) -> str:
        """The P4Info name of a table or extern instance of the current block."""
        block = self.block.fqn if self.block is not None else ""
        return self.program.instance_names.get((id(decl), block), decl.name)

    def _entry_key(self, match_kind: str, value: A.Expr) -> None:
        """BMv2's JSON holds an entry's key values as numbers: an error (``error.X``) is
        none, and neither is a bool where it takes a prefix or a range."""
        if isinstance(value.type, T.Error) or (
                isinstance(value, A.BoolLit) and match_kind in ("lpm", "range", "optional")):
            kind = ENTRY_KEY_KINDS.get(match_kind, match_kind)
            text = expr_text(value)
            sep = " " if match_kind == "range" else ": "  # p4c's own wording
            self.error_at(value, f"{text}{sep}unsupported {kind} key expression",
                          "unsupported")

    def _select(self, s: A.Select) -> None:
        for e in s.exprs:
            self._expr(e)
        for case in s.cases:
            keyset = case.keyset
            if isinstance(keyset, A.ListExpr) and len(keyset.elements) > 1:
                for x in keyset.elements:
                    if isinstance(x, A.Name) and isinstance(x.decl, A.ValueSetDecl):
                        self.error_at(x, f"{x.name}: must evaluate to a compile-time constant",
                                      "invalid")

    def _callee(self, decl: A.ActionDecl | A.FunctionDecl, body: A.Block) -> None:
        """An action or function used from the current role, walked once per role."""
        key = (id(decl), self.role)
        if key not in self.visited:
            self.visited.add(key)
            self._variables(decl.params)
            self._statement(body)

    def _variables(self, decls: Sequence[A.Param | A.VarDecl]) -> None:
        for d in decls:
            t = d.type_ref.resolved
            if t is not None:
                self.storage.append(t)

    # ------------------------------------------------------------ statements

    def _statements(self, stmts: list[A.Stmt]) -> None:
        for s in stmts:
            self._statement(s)

    def _statement(self, s: A.Stmt) -> None:
        rule = self.statement_rules.get(self.role)
        message = rule(s) if rule is not None else None
        if message is not None:
            text, length = _statement_text(self.ctx, s)
            self.error(s.pos, f"{text}: {message}", length, "unsupported")
            return
        if isinstance(s, A.Block):
            self._statements(s.stmts)
        elif isinstance(s, A.Assign):
            self._expr(s.target)
            self._expr(s.value)
        elif isinstance(s, A.CallStmt):
            self._call(s.call, statement=True)
        elif isinstance(s, A.If):
            self._expr(s.cond)
            for branch in live_branches(s):
                self._statement(branch)
        elif isinstance(s, A.Switch):
            self._expr(s.expr)
            for case in s.cases:
                if case.body is not None:
                    self._statement(case.body)
        elif isinstance(s, A.For):
            self._statements(s.init)
            self._expr(s.cond)
            self._statements(s.updates)
            self._statement(s.body)
        elif isinstance(s, A.ForIn):
            text, length = _statement_text(self.ctx, s)
            self.error(s.pos, "BMV2 does not support for-in loops", length, "unsupported")
        elif isinstance(s, A.Return) and s.value is not None:
            self._expr(s.value)
        elif isinstance(s, A.DeclStmt):
            d = s.decl
            if isinstance(d, A.VarDecl):
                self._variables([d])
                if d.init is not None:
                    self._expr(d.init)
            elif isinstance(d, A.Instantiation):
                self._instance(d)

    def _parser_statement(self, s: A.Stmt) -> str | None:
        if not isinstance(s, A.CallStmt):
            return None
        target = s.call.target
        allowed = (
            (isinstance(target, A.CallExternMethod) and target.extern == "packet_in"
             and target.method in PARSER_METHODS)
            or (isinstance(target, A.CallExternFunction)
                and target.function.name in PARSER_FUNCTIONS)
            or (isinstance(target, A.CallBuiltin) and target.method in PARSER_BUILTINS)
            or isinstance(target, (A.CallSubApply, A.CallFunction))
        )
        return None if allowed else "not supported in parser on this target"

    def _checksum_statement(self, s: A.Stmt) -> str | None:
        if isinstance(s, (A.Block, A.Empty, A.DeclStmt)):
            return None
        names = CHECKSUM_FUNCTIONS[self.role]
        if isinstance(s, A.CallStmt):
            target = s.call.target
            if isinstance(target, (A.CallSubApply, A.CallFunction)):
                return None
            if isinstance(target, A.CallExternFunction) and target.function.name in names:
                return None
        return f"Only calls to {names[0]} or {names[1]} allowed"

    def _deparser_statement(self, s: A.Stmt) -> str | None:
        if isinstance(s, (A.If, A.Switch, A.For, A.ForIn)):
            return "not supported within a deparser on this target"
        if not isinstance(s, A.CallStmt):
            return None
        target = s.call.target
        if isinstance(target, A.CallExternMethod):
            if target.extern == "packet_out" and target.method == "emit":
                return None
            return "not supported within a deparser on this target"
        if isinstance(target, (A.CallTableApply, A.CallAction)):
            return "not supported within a deparser on this target"
        return None

    # ----------------------------------------------------------- expressions

    def _expr(self, e: A.Expr) -> None:
        """Every call in ``e`` runs (its arguments are expressions of their own); the
        operators are judged as p4c leaves them (``simplify_as_p4c``)."""
        for call in live_calls(e):
            self._call(call, statement=False)
        try:
            simplified = simplify(e)
        except ZeroDivisor as z:
            what = "Division" if z.expr.op == "/" else "Modulo"
            self.error_at(z.expr, f"{expr_text(z.expr)}: {what} by zero", "expr")
            return
        for part in (simplified.expr, *simplified.saved):
            for x in operators(part):
                if isinstance(x, A.Binary):
                    self._binary(x)
                elif (isinstance(x, A.Member) and isinstance(x.expr, A.Member)
                      and x.expr.name == "next" and isinstance(x.expr.expr.type, T.Stack)
                      and isinstance(x.expr.type, T.Header)):
                    # BMv2 takes a stack's next header only as a whole (to extract it)
                    self.error_at(x.expr, f"{expr_text(x.expr)} uninitialized: next field "
                                  "read", "uninitialized")

    def _binary(self, e: A.Binary) -> None:
        if e.op in ("<<", ">>"):
            amount = e.right
            t = amount.type
            if isinstance(t, T.Bits) and t.width > MAX_SHIFT_WIDTH:
                self.error_at(e, f"{expr_text(e)}: shift amount limited to "
                              f"{MAX_SHIFT_WIDTH} bits on this target", "overlimit")
            elif (isinstance(t, T.InfInt) and isinstance(amount, A.IntLit)
                  and amount.value > 1 << MAX_SHIFT_WIDTH):
                self.error_at(e, f"{expr_text(e)}: shift amount limited to "
                              f"{1 << MAX_SHIFT_WIDTH} on this target", "overlimit")
        elif e.op in ("/", "%"):
            d = e.right
            if not (isinstance(d, A.IntLit) and d.value > 0 and d.value & (d.value - 1) == 0):
                self.error_at(e, f"{expr_text(e)}: could not evaluate expression at "
                              "compilation time", "invalid")

    def _call(self, call: A.Call, statement: bool) -> None:
        target = call.target
        if isinstance(target, A.CallExternFunction):
            self._extern_function(call, target.function.name, statement)
        elif isinstance(target, A.CallExternMethod):
            if self.role == "parser" and target.extern != "packet_in":
                self.error_at(call, f"{expr_text(call)}: not supported in parser on this "
                              "target", "unsupported")
            elif (target.extern == "direct_meter" and target.method == "read"
                  and isinstance(target.receiver, A.Name) and call.resolved_args
                  and call.resolved_args[0] is not None):
                meter = self._fqn(target.receiver.decl)  # type: ignore[arg-type]
                self.meter_reads.setdefault(meter, []).append(call.resolved_args[0])
        elif isinstance(target, A.CallTableApply):
            self.applied.add(self._fqn(target.table))
        elif isinstance(target, A.CallAction):
            self._callee(target.action, target.action.body)
        elif isinstance(target, A.CallFunction):
            self._callee(target.function, target.function.body)
        elif isinstance(target, A.CallSubApply) and self.block is not None:
            child = self.block.children.get(target.instance.name)
            if child is not None:
                self._block(child)
        callee = call.callee  # a method's receiver; the method is no value
        self._expr(callee.expr if isinstance(callee, A.Member) else callee)
        for a in call.args:
            if a.value is not None:
                self._expr(a.value)

    def _checksum_data(self, data: A.Expr, function: str) -> None:
        """BMv2 computes a checksum over fields and constants: p4c-bm2-ss refuses any
        other operand in the data (once folded), at the outermost one."""
        try:
            todo = [simplify(data).expr]
        except ZeroDivisor:
            return  # reported with the expression
        while todo:
            x = todo.pop(0)
            if isinstance(x, (A.ListExpr, A.StructExpr, A.Member, A.Index)):
                todo += subexpressions(x)
            elif not isinstance(x, (A.Name, A.IntLit, A.EnumValue)):
                self.error_at(x, f"{expr_text(x)}: Computations are not supported in "
                              f"{function}", "unsupported")

    def _extern_function(self, call: A.Call, name: str, statement: bool) -> None:
        checksum = {n: role for role, names in CHECKSUM_FUNCTIONS.items() for n in names}
        if name in checksum:
            if checksum[name] != self.role:
                self.error_at(call.callee, f"{name}: unknown extern function", "unknown")
            elif len(call.resolved_args) > 1 and call.resolved_args[1] is not None:
                self._checksum_data(call.resolved_args[1], CHECKSUM_FUNCTIONS[self.role][0])
            return
        if name not in KNOWN_FUNCTIONS:
            if statement:
                self.error_at(call.callee, f"{name}: unknown extern function", "unknown")
            else:
                self.error_at(call, f"{expr_text(call)}: not supported", "target-error")
            return
        args = call.resolved_args
        if name == "mark_to_drop" and not args:
            self.error_at(call, "Expected 1 argument for mark_to_drop(). Are you using an "
                          "up-to-date v1model.p4?", "Target model error")
        elif name == "hash" and len(args) > 3 and args[3] is not None:
            data = args[3]
            if not isinstance(data.type, (T.Struct, T.Header, T.Tuple)):
                self.error_at(data, f"{expr_text(data)}: expected a struct", "legacy")
                self.ctx.error(None, "Are you using an up-to-date v1model.p4?")
        elif name == "log_msg" and len(args) > 1 and args[1] is not None:
            data = args[1]
            if not isinstance(data, (A.ListExpr, A.StructExpr)):
                self.error_at(call, f"{expr_text(call)}: Second argument must be a list "
                              f"expression: {expr_text(data)}", "target-error")


def _applied_tables(decl: A.ControlDecl) -> set[int]:
    """The tables of a control its body applies, and those applied in the keys of
    those (p4c drops the others before its back end sees them)."""
    tables = {id(t): t for t in decl.locals if isinstance(t, A.TableDecl)}
    applied: set[int] = set()
    todo = list(calls_in(decl.body))
    while todo:
        target = todo.pop().target
        if isinstance(target, A.CallTableApply) and id(target.table) in tables:
            if id(target.table) not in applied:
                applied.add(id(target.table))
                todo += calls_in([k.expr for k in target.table.keys])
    return applied


def _reachable_states(decl: A.ParserDecl) -> list[A.ParserState]:
    """The states a packet can reach from ``start``, in declaration order (p4c drops
    the others, and the cases of a constant ``select`` that cannot match)."""
    states = {s.name: s for s in decl.states}
    seen = {"start"}
    todo = ["start"]
    while todo:
        state = states.get(todo.pop())
        if state is None:
            continue
        t = state.transition
        targets = select_targets(t) if isinstance(t, A.Select) else [t] if t else []
        for name in targets:
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return [s for s in decl.states if s.name in seen]


_END = "end"  # the end of the control, where a return goes too


class _TableApplies:
    """BMv2 runs a control as an acyclic graph of table and condition nodes, each with
    its successors. So no path through the body may apply a table twice (a path from
    the table back to itself), and the places that apply one table must all go on to
    the same node (p4c-bm2-ss makes a node of each run of other statements and of each
    ``exit``; a ``return`` goes to the end)."""

    def __init__(self, walk: _Walk, block: BlockInstance) -> None:
        self.walk = walk
        self.top = block
        self.reported: set[str] = set()
        self.successors: dict[str, set[tuple[object, ...]]] = {}
        self.first_decl: dict[str, A.TableDecl] = {}

    def run(self) -> None:
        body = self.top.decl.body  # type: ignore[union-attr]
        self._statement(body, self.top, frozenset(), _END)
        for name, seen in self.successors.items():
            if len(seen) > 1 and name not in self.reported:
                self._report(name, self.first_decl[name], "Program is not supported by "
                             f"this target, because table {name} has multiple successors")

    def _report(self, name: str, decl: A.TableDecl, message: str) -> None:
        self.reported.add(name)
        self.walk.error(self.walk.ctx.name_pos(decl), message, len(decl.name), "invalid")

    def _statement(self, s: A.Stmt, block: BlockInstance, before: frozenset[str] | None,
                   cont: object) -> frozenset[str] | None:
        """The tables applied on some path to the end of ``s`` (None: no path gets
        there, after ``exit`` or ``return``); ``cont`` is the node that follows ``s``."""
        if before is None:
            return None
        kept = _kept(s)
        if kept is None:
            return before
        s = kept
        if isinstance(s, A.Block):
            out: frozenset[str] | None = before
            for i, x in enumerate(s.stmts):
                out = self._statement(x, block, out, _next_node(s.stmts[i + 1:], cont))
            return out
        if isinstance(s, A.If):
            then_node = _next_node([s.then], cont)
            else_node = _next_node([s.other], cont) if s.other is not None else cont
            after_cond = self._expr(s.cond, block, before, ("branch", then_node, else_node))
            then = self._statement(s.then, block, after_cond, cont)
            other = (self._statement(s.other, block, after_cond, cont)
                     if s.other is not None else after_cond)
            return _join(then, other)
        if isinstance(s, A.Switch):
            after_expr = self._expr(s.expr, block, before, ("switch", id(s)))
            out = None
            has_default = False
            for case in s.cases:
                has_default = has_default or isinstance(case.label, A.DefaultExpr)
                if case.body is not None:
                    out = _join(out, self._statement(case.body, block, after_expr, cont))
            return out if has_default else _join(out, after_expr)
        if isinstance(s, (A.Exit, A.Return)):
            return None
        if isinstance(s, A.CallStmt):
            return self._expr(s.call, block, before, ("next", cont))
        if isinstance(s, A.Assign):
            return self._expr(s.value, block, before, ("in", id(s)))
        if isinstance(s, A.DeclStmt) and isinstance(s.decl, A.VarDecl) and s.decl.init:
            return self._expr(s.decl.init, block, before, ("in", id(s)))
        return before

    def _expr(self, e: A.Expr, block: BlockInstance, before: frozenset[str],
              successor: tuple[object, ...]) -> frozenset[str]:
        out = before
        for x in walk_expression(e):
            if not isinstance(x, A.Call):
                continue
            target = x.target
            if isinstance(target, A.CallTableApply):
                name = self.walk.program.instance_names.get((id(target.table), block.fqn))
                if name is None:
                    continue
                self.first_decl.setdefault(name, target.table)
                self.successors.setdefault(name, set()).add(successor)
                if name in out and name not in self.reported:
                    self._report(name, target.table, "Program can not be implemented on this "
                                 f"target since it contains a path from table {name} back "
                                 "to itself")
                out = out | {name}
            elif isinstance(target, A.CallSubApply):
                child = block.children.get(target.instance.name)
                body = getattr(child.decl, "body", None) if child is not None else None
                if child is not None and isinstance(body, A.Block):
                    cont = successor[1] if successor[0] == "next" else successor
                    out = self._statement(body, child, out, cont) or out
        return out


def _next_node(stmts: Sequence[A.Stmt | None], cont: object) -> object:
    """The node the first of ``stmts`` that makes one starts with (``cont`` if none
    does): statements that declare or do nothing make no node, a return goes to the
    end of the control."""
    for s in map(_kept, stmts):
        if s is None or isinstance(s, A.Empty):
            continue
        if isinstance(s, A.DeclStmt) and not (isinstance(s.decl, A.VarDecl) and s.decl.init):
            continue
        if isinstance(s, A.Block):
            if not s.stmts:
                continue
            return _next_node(list(s.stmts), cont)
        if isinstance(s, A.Return):
            return _END
        return id(s)
    return cont


def _kept(s: A.Stmt | None) -> A.Stmt | None:
    """What p4c keeps of a statement: the branch an ``if`` whose condition folds to a
    constant takes (None for none)."""
    while isinstance(s, A.If):
        cond = constant_bool(s.cond)
        if cond is None:
            return s
        s = s.then if cond else s.other
    return s


def _join(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    if a is None:
        return b
    if b is None:
        return a
    return a | b


_STATEMENT_NAMES = {A.If: "IfStatement", A.Switch: "SwitchStatement",
                    A.For: "ForStatement", A.ForIn: "ForInStatement"}


def _statement_text(ctx: Context, s: A.Stmt) -> tuple[str, int]:
    """How p4c names a statement in a message, and the length of the caret: the source
    of a call or an assignment, the kind of a compound statement (with its header)."""
    if isinstance(s, A.CallStmt):
        return expr_text(s.call), len(expr_text(s.call))
    if isinstance(s, A.Assign):
        text = f"{expr_text(s.target)} = {expr_text(s.value)}"
        return text, len(text)
    name = _STATEMENT_NAMES.get(type(s), type(s).__name__)
    return name, _header_length(ctx, s.pos)


def _header_length(ctx: Context, pos: A.Pos) -> int:
    """The length of ``keyword (...)`` at ``pos``: up to the matching parenthesis."""
    start = ctx.offset(pos)
    if start < 0:
        return 1
    m = re.compile(r"\w+\s*\(").match(ctx.text, start)
    if m is None:
        return 1
    depth, i = 1, m.end()
    while i < len(ctx.text) and depth:
        depth += {"(": 1, ")": -1}.get(ctx.text[i], 0)
        i += 1
    return i - start
