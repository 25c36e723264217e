"""Statements: assignments (to writable places, with implicit conversion of the value),
conditions, switch statements (on ``t.apply().action_run`` or on a value), returns,
exits and local declarations; loops are in ``check_loops``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.check_calls import chk_writable
from switch.frontend.check.check_expressions import is_unknown
from switch.frontend.check.check_loops import check_for, check_for_in, check_jump
from switch.frontend.check.context import Unknown

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker


def check_stmt(chk: Checker, s: A.Stmt | A.Node) -> A.Stmt:
    if isinstance(s, A.Block):
        s.stmts = [check_stmt(chk, x) for x in s.stmts]
        return s
    if isinstance(s, A.Assign):
        return _assign(chk, s)
    if isinstance(s, A.CallStmt):
        out = chk.call(s.call)
        if isinstance(out, A.Call):
            s.call = out
            return s
        return A.Empty(s.pos)  # folded away (static_assert, minSizeInBits, ...)
    if isinstance(s, A.If):
        return _if(chk, s)
    if isinstance(s, A.Switch):
        return _switch(chk, s)
    if isinstance(s, A.Return):
        return _return(chk, s)
    if isinstance(s, A.For):
        return check_for(chk, s)
    if isinstance(s, A.ForIn):
        return check_for_in(chk, s)
    if isinstance(s, (A.Break, A.Continue)):
        return check_jump(chk, s)
    if isinstance(s, A.Exit):
        if chk.in_parser or chk.function is not None:
            where = "a parser" if chk.in_parser else "a function"
            chk.ctx.error(s.pos, f"exit: not allowed in {where}", 4)
        return s
    if isinstance(s, A.Empty):
        return s
    if isinstance(s, A.DeclStmt):
        local_decl(chk, s.decl)
        return s
    if isinstance(s, A.Unsupported):
        chk.ctx.unsupported(s.pos, s.what)
        return A.Empty(s.pos)
    chk.ctx.unsupported(s.pos, f"statement {type(s).__name__}")
    return A.Empty(s.pos)


def _assign(chk: Checker, s: A.Assign) -> A.Stmt:
    written = chk.text(s.target)
    target = chk.expr(s.target)
    value = chk.expr(s.value)
    s.target = target
    if is_unknown(target.type):
        s.value = value
        return s
    if F.is_constant(target):
        # a constant's name was replaced by its value: report what was written
        chk.ctx.error(target.pos, f"Expression {written} cannot be the target of an "
                      "assignment", len(written))
        s.value = value
        return s
    if chk_writable(chk, target):
        assert target.type is not None

        def message(e: A.Expr, src: T.Type, want: T.Type) -> str:
            return (f"{chk.text(target)} = {chk.text(value)}: cannot assign a value of type "
                    f"'{src}' to '{chk.text(target)}' of type '{want}'")

        value = chk.coerce(value, target.type, message, assigned=True)
    s.value = value
    return s


def _if(chk: Checker, s: A.If) -> A.Stmt:
    cond = chk.expr(s.cond)
    s.cond = cond
    if not is_unknown(cond.type) and not isinstance(cond.type, T.Bool):
        chk.error_at(cond, f"{chk.text(cond)}: condition must be a bool, not {cond.type}")
    s.then = check_stmt(chk, s.then)
    if s.other is not None:
        s.other = check_stmt(chk, s.other)
    return s


def _switch(chk: Checker, s: A.Switch) -> A.Stmt:
    with chk.inside(allow_action_run=True):
        e = chk.expr(s.expr)
    s.expr = e
    t = e.type
    seen: set[object] = set()
    default_seen = False
    for case in s.cases:
        label = case.label
        if default_seen:
            chk.ctx.error(label.pos, "switch: 'default' must be the last label")
        if isinstance(label, A.DefaultExpr):
            default_seen = True
            label.type = T.DontCareType()
        elif isinstance(t, T.ActionEnum):
            case.label = _action_label(chk, label, t, e)
        elif is_unknown(t):
            case.label = chk.expr(label)
        elif isinstance(t, (T.Bits, T.Enum, T.SerEnum, T.Error)):
            value = chk.expr(label)
            if not is_unknown(value.type):
                value = chk.coerce(value, t)
                if not F.is_constant(value) and not is_unknown(value.type):
                    chk.error_at(value, f"{chk.text(value)}: must be a compile-time constant")
            case.label = value
        else:
            chk.error_at(e, f"{chk.text(e)}: 'switch' type can't be {t}")
            break
        key = _label_key(case.label)
        if key is not None:
            if key in seen:
                chk.error_at(case.label, f"{chk.text(case.label)}: duplicate switch label")
            seen.add(key)
        if case.body is not None:
            check_stmt(chk, case.body)
    return s


def _label_key(label: A.Expr) -> object | None:
    if isinstance(label, A.DefaultExpr):
        return ("default",)
    if isinstance(label, A.Name):
        return ("action", id(label.decl))
    if F.is_constant(label):
        return F.constant_key(label)
    return None


def _action_label(chk: Checker, label: A.Expr, t: T.ActionEnum, e: A.Expr) -> A.Expr:
    table = None
    if isinstance(e, A.Member) and isinstance(e.expr, A.Call):
        target = e.expr.target
        if isinstance(target, A.CallTableApply):
            table = target.table
    if not isinstance(label, A.Name) or not isinstance(label.decl, A.ActionDecl):
        chk.error_at(label, f"{chk.text(label)}: 'switch' label must be an action name or "
                     "'default'")
        return label
    label.type = t
    if table is not None:
        listed = [r.action or (r.name.decl if isinstance(r.name, A.Name) else None)
                  for r in table.actions]
        if label.decl not in listed:
            chk.error_at(label, f"{chk.text(label)} is not a legal label (action name)")
    return label


def _return(chk: Checker, s: A.Return) -> A.Stmt:
    fn = chk.function
    if chk.in_parser and chk.action is None:
        chk.ctx.error(s.pos, "return: not allowed in a parser", 6)
        return s
    if fn is None:
        if s.value is not None:
            chk.ctx.error(s.pos, "return: return with expression can only be used in a "
                          "function", 6)
        return s
    rt = chk.resolve(fn.return_type)
    if isinstance(rt, T.Void):
        if s.value is not None:
            chk.ctx.error(s.pos, "return: return expression in function with void return", 6)
        return s
    if s.value is None:
        chk.ctx.error(s.pos, f"return: return with no expression in a function returning {rt}",
                      6)
        return s
    value = chk.expr(s.value)
    s.value = chk.coerce(value, rt, assigned=True)
    return s


def local_decl(chk: Checker, d: A.Declaration | A.Node) -> None:
    """A variable or constant declared in a block, a parser or a control."""
    if isinstance(d, A.VarDecl):
        t = chk.resolve(d.type_ref)
        if isinstance(t, (T.Extern, T.ParserOrControl, T.Void, T.String, T.InfInt)):
            chk.decl_error(d, f"{d.name}: a variable cannot have type {t}")
        if d.init is not None:
            init = chk.expr(d.init)

            def message(e: A.Expr, src: T.Type, want: T.Type) -> str:
                return (f"{d.name}: cannot initialize a variable of type '{want}' with a value "
                        f"of type '{src}'")

            d.init = chk.coerce(init, t, message, assigned=True)
        return
    if isinstance(d, A.ConstDecl):
        const_decl(chk, d)
        return
    if isinstance(d, A.Unsupported):
        chk.ctx.unsupported(d.pos, d.what)
        return
    chk.ctx.unsupported(d.pos, f"{type(d).__name__} inside a block")


def const_decl(chk: Checker, d: A.ConstDecl) -> None:
    t = chk.resolve(d.type_ref)
    value = chk.expr(d.value)

    def message(e: A.Expr, src: T.Type, want: T.Type) -> str:
        return f"{d.name}: cannot initialize a constant of type '{want}' with a value of type " \
               f"'{src}'"

    value = chk.coerce(value, t, message, assigned=True)
    d.value = value
    if isinstance(value.type, Unknown):
        return
    if not F.is_constant(value):
        chk.error_at(value, f"{chk.text(value)}: expression must be a compile-time constant")
        return
    chk.ctx.const_values[id(d)] = value


def returns_always(s: A.Stmt | None) -> bool:
    """Whether every path through ``s`` ends in return or exit."""
    if s is None:
        return False
    if isinstance(s, (A.Return, A.Exit)):
        return True
    if isinstance(s, A.Block):
        return any(returns_always(x) for x in s.stmts)
    if isinstance(s, A.If):
        return returns_always(s.then) and returns_always(s.other)
    if isinstance(s, A.Switch):
        has_default = any(isinstance(c.label, A.DefaultExpr) for c in s.cases)
        return has_default and all(
            c.body is None or returns_always(c.body) for c in s.cases
        )
    return False
