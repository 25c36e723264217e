"""Calls: what is called, which overload, the binding of arguments to parameters, and
the inference of type arguments.

A call is classified into one of the ``CallTarget`` kinds of the syntax tree. Arguments
are matched to parameters (positionally, then by name), overloads are chosen by the
number of arguments, and the type parameters of generic externs are bound from the
argument types (``extract<T>(out T hdr)``) or from the instance's type arguments
(``register<bit<32>>``). ``Call.resolved_args`` ends up with one entry per parameter."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.check_core_methods import check_core_function, check_core_method
from switch.frontend.check.check_expressions import SIZE_METHODS, is_unknown, unknown
from switch.frontend.check.check_extern_types import check_extern_call
from switch.frontend.check.context import (
    UNKNOWN,
    FunctionType,
    TableType,
    TypeOfType,
    TypeParam,
    TypeVar,
    Unknown,
)
from switch.frontend.check.resolve_types import contains_infint, free_vars, subst

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker


@dataclass
class Signature:
    """What binding needs to know about a callee."""

    name: str  # for messages
    params: list[A.Param]
    return_type: T.Type
    env: dict[TypeParam, T.Type]  # bindings known before looking at the arguments
    own_type_params: list[TypeParam]  # bound by explicit type arguments, in order
    # "function"; "action" (directionless parameters are plain inputs, all must be
    # bound); "constructor" (arguments must be known at compile time)
    kind: str = "function"


def check_call(chk: Checker, call: A.Call) -> A.Expr:
    callee = call.callee
    if isinstance(callee, A.Member):
        return _method_call(chk, call, callee)
    if isinstance(callee, A.Name):
        decl = callee.decl
        if decl is None:
            _check_args_only(chk, call)
            return unknown(call)
        if isinstance(decl, A.ActionDecl):
            return _action_call(chk, call, callee, decl)
        if isinstance(decl, (A.FunctionDecl, A.ExternFunctionDecl)):
            return _function_call(chk, call, callee)
        if isinstance(decl, A.ExternDecl):
            chk.error_at(call, f"{chk.text(call)}: an extern constructor can only be used to "
                         "instantiate an extern")
            return unknown(call)
    _check_args_only(chk, call)
    checked = chk.expr(callee)
    call.callee = checked
    if not is_unknown(checked.type):
        chk.error_at(call, f"{chk.text(call)} is not a method")
    return unknown(call)


def _check_args_only(chk: Checker, call: A.Call) -> None:
    """Check argument expressions of a call that cannot be resolved (for the errors
    they contain)."""
    for a in call.args:
        if a.value is not None:
            a.value = chk.expr(a.value)


# ------------------------------------------------------------------ overloads


def required(params: list[A.Param]) -> int:
    return sum(1 for p in params if not p.optional and p.default is None)


def choose_overload(chk: Checker, call: A.Call, what: str, candidates: list) -> object | None:
    """Pick the declaration whose parameters fit the arguments by count (and names)."""
    n = len(call.args)
    names = {a.name for a in call.args if a.name}
    fitting = []
    for c in candidates:
        params = c.params
        if required(params) <= n <= len(params) and names <= {p.name for p in params}:
            fitting.append(c)
    if not fitting:
        by_count = [c for c in candidates if required(c.params) <= n <= len(c.params)]
        if by_count:
            known = {p.name for c in by_count for p in c.params}
            unknown_names = sorted(names - known)
            if unknown_names:
                chk.error_at(call, f"{what}: no parameter named {unknown_names[0]}")
                return None
        counts = sorted({len(c.params) for c in candidates} | {required(c.params)
                                                               for c in candidates})
        expected = " or ".join(str(k) for k in counts)
        chk.error_at(call, f"{what}: wrong number of arguments: expected {expected}, got {n}")
        return None
    exact = [c for c in fitting if len(c.params) == n]
    return (exact or fitting)[0]


# -------------------------------------------------------------------- binding


def _param_error(
    chk: Checker, arg: A.Expr, p: A.Param
) -> Callable[[A.Expr, T.Type, T.Type], str]:
    def message(e: A.Expr, src: T.Type, target: T.Type) -> str:
        return (f"{chk.text(arg)}: cannot pass a value of type '{src}' as parameter "
                f"'{p.name}' of type '{target}'")

    return message


def unify(pt: T.Type, at: T.Type, env: dict[TypeParam, T.Type]) -> bool:
    """Bind the type variables of ``pt`` so that it matches ``at``; False on a clash
    with an earlier binding."""
    if isinstance(pt, TypeVar):
        bound = env.get(pt.param)
        if bound is None:
            env[pt.param] = at
            return True
        return bound == at or isinstance(bound, Unknown) or isinstance(at, Unknown)
    if isinstance(pt, T.Extern) and isinstance(at, T.Extern) and pt.name == at.name:
        return all(unify(p, a, env) for p, a in zip(pt.type_args, at.type_args, strict=False))
    if isinstance(pt, T.Tuple) and isinstance(at, T.Tuple):
        if len(pt.elements) != len(at.elements):
            return True
        return all(unify(p, a, env) for p, a in zip(pt.elements, at.elements, strict=False))
    if isinstance(pt, T.Stack) and isinstance(at, T.Stack):
        return unify(pt.element, at.element, env)
    return True


def _unbound(chk: Checker, t: T.Type) -> list[TypeParam]:
    """The type variables of ``t`` still to be inferred: not those of the generic
    function or block being checked, which stand for themselves."""
    rigid = (chk.block, chk.function)
    return [tp for tp in free_vars(t) if not any(tp.owner is r for r in rigid if r)]


def bind(chk: Checker, call: A.Call, sig: Signature) -> list[A.Expr | None] | None:
    """Match the arguments of ``call`` to ``sig``'s parameters, check and convert them,
    and return them in parameter order (defaults filled in, None for an absent optional
    parameter or a don't-care argument). Sets ``call.type`` to the return type."""
    params = sig.params
    slots: list[A.Argument | None] = [None] * len(params)
    ok = True
    position = 0
    seen_named = False
    for a in call.args:
        if a.name:
            seen_named = True
            idx = next((i for i, p in enumerate(params) if p.name == a.name), -1)
            if idx < 0:
                chk.ctx.error(a.pos, f"{sig.name}: no parameter named {a.name}", len(a.name))
                ok = False
                continue
        else:
            if seen_named:
                chk.ctx.error(a.pos, f"{sig.name}: positional argument after named arguments")
                _check_args_only(chk, call)
                return None
            idx = position
            position += 1
            if idx >= len(params):
                expected = str(len(params)) if required(params) == len(params) else (
                    f"{required(params)} to {len(params)}")
                chk.error_at(call, f"{sig.name}: wrong number of arguments: expected "
                             f"{expected}, got {len(call.args)}")
                _check_args_only(chk, call)
                return None
        if slots[idx] is not None:
            chk.ctx.error(a.pos, f"{sig.name}: parameter {params[idx].name} bound twice")
            ok = False
            continue
        slots[idx] = a
    for p, slot in zip(params, slots, strict=False):
        if slot is None and not p.optional and p.default is None:
            if sig.kind == "action" or any(a.name for a in call.args):
                chk.error_at(call, f"{chk.text(call)}: parameter {p.name} must be bound")
            else:
                expected = str(len(params)) if required(params) == len(params) else (
                    f"{required(params)} to {len(params)}")
                chk.error_at(call, f"{sig.name}: wrong number of arguments: expected "
                             f"{expected}, got {len(call.args)}")
            ok = False
            break
    if not ok:
        _check_args_only(chk, call)
        return None

    env = dict(sig.env)
    if call.type_args:
        if len(call.type_args) != len(sig.own_type_params):
            chk.error_at(call, f"{sig.name}: expected {len(sig.own_type_params)} type "
                         f"arguments, got {len(call.type_args)}")
            _check_args_only(chk, call)
            return None
        for tp, ref in zip(sig.own_type_params, call.type_args, strict=False):
            t = chk.resolve(ref)
            if isinstance(t, T.DontCareType):
                continue
            env[tp] = t

    # check the argument expressions
    values: list[A.Expr | None] = [None] * len(params)
    written: dict[int, str] = {}
    for i, slot in enumerate(slots):
        if slot is not None and slot.value is not None:
            written[i] = chk.text(slot.value)
            if sig.kind == "constructor" and _is_block_constructor(slot.value):
                checked = _nameless_instance(chk, slot.value)  # type: ignore[arg-type]
            else:
                checked = chk.expr(slot.value)
            slot.value = checked
            values[i] = None if isinstance(checked, A.DontCare) else checked

    ptypes = [chk.resolve(p.type_ref) for p in params]
    # bind type variables from arguments whose type is known, then from the others
    for known, pt in zip(values, ptypes, strict=False):
        if known is None or is_unknown(known.type) or not free_vars(subst(pt, env)):
            continue
        assert known.type is not None
        if contains_infint(known.type):
            continue
        if not unify(subst(pt, env), known.type, env):
            chk.error_at(known, f"{chk.text(known)}: type '{known.type}' does not match the "
                         f"type '{subst(pt, env)}' inferred for the other uses of this type "
                         "parameter")
            return None

    result: list[A.Expr | None] = []
    for i, (p, pt, slot) in enumerate(zip(params, ptypes, slots, strict=False)):
        v = values[i]
        pt = subst(pt, env)
        if slot is None:
            result.append(p.default if p.default is not None else None)
            continue
        if v is None:
            if p.direction != "out":
                chk.ctx.error(slot.pos, f"{sig.name}: a don't-care argument cannot be given "
                              f"for parameter {p.name} of direction "
                              f"'{p.direction or 'none'}'")
                return None
            if _unbound(chk, pt):
                names = ", ".join(tp.name for tp in _unbound(chk, pt))
                chk.error_at(call, f"{chk.text(call)}: cannot infer a type for type parameter "
                             f"{names} of {sig.name} from _; give it as a type argument")
                return None
            result.append(None)
            continue
        if is_unknown(v.type):
            result.append(v)
            continue
        unbound = _unbound(chk, pt)
        if unbound:
            names = ", ".join(tp.name for tp in unbound)
            chk.error_at(v, f"{chk.text(v)}: cannot infer a type for type parameter {names} "
                         f"of {sig.name}; give the value a width")
            return None
        if p.direction in ("out", "inout"):
            chk_writable(chk, v, f"{p.direction} argument", written.get(i))
            if v.type != pt:
                chk.error_at(v, _param_error(chk, v, p)(v, v.type or UNKNOWN, pt))
            result.append(v)
            continue
        if isinstance(pt, T.InfInt) and not isinstance(v, A.IntLit):
            chk.error_at(v, f"{chk.text(v)}: parameter {p.name} needs a compile-time "
                         "constant")
            return None
        if sig.kind == "constructor" and isinstance(pt, T.ParserOrControl):
            if not _block_argument_fits(chk, v, pt):
                return None
            result.append(v)
            continue
        if sig.kind == "constructor" and not F.is_constant(v) and not is_ctor_param(v):
            chk.error_at(v, f"{chk.text(v)}: expression must be a compile-time constant")
            return None
        v = chk.coerce(v, pt, _param_error(chk, v, p))
        slot.value = v
        result.append(v)

    call.type = subst(sig.return_type, env)
    if free_vars(call.type):
        chk.error_at(call, f"Cannot infer a concrete return type for this call of "
                     f"{chk.text(call)}")
        call.type = UNKNOWN
    call.resolved_args = result
    chk.ctx.call_type_args[id(call)] = {tp.name: env[tp] for tp in sig.own_type_params
                                        if tp in env}
    return result


def is_ctor_param(e: A.Expr) -> bool:
    """An expression over constructor parameters of the enclosing parser or control
    (and constants): known at instantiation, so usable where a compile-time constant
    is required."""
    if isinstance(e, A.Name):
        return isinstance(e.decl, A.Param) and e.decl.direction == ""
    if isinstance(e, A.Cast):
        return is_ctor_param(e.expr) or F.is_constant(e.expr)
    if isinstance(e, A.Unary):
        return is_ctor_param(e.expr)
    if isinstance(e, A.Binary):
        sides = (e.left, e.right)
        return any(is_ctor_param(x) for x in sides) and all(
            is_ctor_param(x) or F.is_constant(x) for x in sides)
    return False


# ---------------------------------------------------------------- writability


def lvalue_root(e: A.Expr) -> A.Expr | None:
    """The Name at the root of an lvalue expression, or None if ``e`` cannot be
    assigned at all."""
    while True:
        if isinstance(e, A.Name):
            return e
        if isinstance(e, A.Member):
            bt = e.expr.type
            if isinstance(bt, T.Stack) and e.name != "next":
                return None
            if not isinstance(bt, (T.Header, T.Struct, T.HeaderUnion, T.Stack)):
                return None
            e = e.expr
        elif isinstance(e, (A.Index, A.Slice)):
            e = e.expr
        else:
            return None


def chk_writable(chk: Checker, e: A.Expr, what: str = "assignment",
                 written: str | None = None) -> bool:
    """Report unless ``e`` can be written: a variable, an out/inout parameter, or a
    field, element or slice of one. ``written`` is the source text of ``e`` before
    checking rewrote it (a constant's name becomes its value)."""
    if is_unknown(e.type):
        return True
    root = lvalue_root(e)
    text = written or chk.text(e)
    if root is None:
        message = (f"Expression {text} cannot be the target of an {what}"
                   if what == "assignment" else f"{text}: must be a left-value")
        chk.ctx.error(e.pos, message, len(text))
        return False
    decl = root.decl if isinstance(root, A.Name) else None
    if isinstance(decl, A.VarDecl):
        return True
    if isinstance(decl, A.Param):
        if decl.direction in ("out", "inout"):
            return True
        if decl.direction == "in":
            chk.error_at(e, f"{text}: cannot write to 'in' parameter {decl.name}")
        else:
            chk.error_at(e, f"{text}: cannot write to directionless parameter {decl.name}")
        return False
    if what == "assignment":
        chk.error_at(e, f"Expression {text} cannot be the target of an assignment")
    else:
        chk.error_at(e, f"{text}: must be a left-value")
    return False


# ---------------------------------------------------------------- call kinds


def _action_call(chk: Checker, call: A.Call, callee: A.Name, decl: A.ActionDecl) -> A.Expr:
    if chk.in_parser:
        chk.error_at(call, f"{chk.text(call)}: Action calls are not allowed within parsers")
        _check_args_only(chk, call)
        return unknown(call)
    if chk.function is not None:
        chk.error_at(call, f"{chk.text(call)}: Functions cannot call actions")
        _check_args_only(chk, call)
        return unknown(call)
    if call.type_args:
        chk.error_at(call, f"{chk.text(call)}: Cannot supply type parameters for an action "
                     "invocation")
    callee.type = FunctionType(decl.name)
    sig = Signature(decl.name, decl.params, T.Void(), {}, [], "action")
    if bind(chk, call, sig) is None:
        return unknown(call)
    call.target = A.CallAction(decl)
    return call


def _function_call(chk: Checker, call: A.Call, callee: A.Name) -> A.Expr:
    candidates = chk.ctx.overloads.get(id(callee)) or [callee.decl]
    decl = choose_overload(chk, call, callee.name, candidates) if len(candidates) > 1 else (
        candidates[0])
    if decl is None:
        _check_args_only(chk, call)
        return unknown(call)
    assert isinstance(decl, (A.FunctionDecl, A.ExternFunctionDecl))
    callee.decl = decl
    callee.type = FunctionType(decl.name)
    own = [TypeParam(n, decl) for n in decl.type_params]
    sig = Signature(decl.name, decl.params, chk.resolve(decl.return_type), {},
                    _type_params_of(chk, decl, own))
    if bind(chk, call, sig) is None:
        return unknown(call)
    if isinstance(decl, A.FunctionDecl):
        call.target = A.CallFunction(decl)
    elif decl.name == "static_assert":
        return _static_assert(chk, call)
    else:
        call.target = A.CallExternFunction(decl)
        check_extern_call(chk, call, "", decl.name, decl.params)
        check_core_function(chk, call, decl.name)
        if decl.name == "digest":
            t = chk.ctx.call_type_args.get(id(call), {}).get("T")
            if t is not None and not is_unknown(t):
                chk.ctx.digest_calls.append((call, t))
    return call


def _static_assert(chk: Checker, call: A.Call) -> A.Expr:
    """``static_assert(check[, message])`` is evaluated at compile time."""
    cond = call.resolved_args[0] if call.resolved_args else None
    if not isinstance(cond, A.BoolLit):
        if cond is not None and not is_unknown(cond.type):
            chk.error_at(cond, f"{chk.text(cond)}: static_assert needs a compile-time "
                         "constant condition")
        return unknown(call)
    if not cond.value:
        message = call.resolved_args[1] if len(call.resolved_args) > 1 else None
        text = message.value if isinstance(message, A.StringLit) else "static_assert failed"
        chk.error_at(call, f"{chk.text(call)}: {text}")
    return F.bool_lit(True, call.pos)


def _type_params_of(chk: Checker, decl: object, fallback: list[TypeParam]) -> list[TypeParam]:
    """The TypeParam objects name resolution created for ``decl``'s type parameters
    (found through the type references of its signature)."""
    names = list(getattr(decl, "type_params", []))
    found: dict[str, TypeParam] = {}
    refs: list[A.TypeRef] = []
    for p in getattr(decl, "params", []):
        refs.append(p.type_ref)
    rt = getattr(decl, "return_type", None)
    if rt is not None:
        refs.append(rt)
    while refs:
        ref = refs.pop()
        if isinstance(ref, A.NamedTypeRef):
            tp = chk.ctx.type_decls.get(id(ref))
            if isinstance(tp, TypeParam) and tp.owner is decl:
                found[tp.name] = tp
            refs.extend(ref.args)
        elif isinstance(ref, A.TupleTypeRef):
            refs.extend(ref.elements)
        elif isinstance(ref, A.StackTypeRef):
            refs.append(ref.element)
    by_name = {tp.name: tp for tp in fallback}
    return [found.get(n) or by_name[n] for n in names]


def _method_call(chk: Checker, call: A.Call, m: A.Member) -> A.Expr:
    recv = chk.expr(m.expr)
    m.expr = recv
    rt = recv.type
    if is_unknown(rt):
        _check_args_only(chk, call)
        return unknown(call)
    m.type = FunctionType(m.name)
    name = m.name
    if isinstance(rt, TableType) and name == "apply":
        return _table_apply(chk, call, recv)
    if isinstance(rt, T.ParserOrControl) and name == "apply":
        return _sub_apply(chk, call, recv, rt)
    if isinstance(rt, T.Extern):
        return _extern_method(chk, call, recv, rt, name)
    if name in SIZE_METHODS and not isinstance(rt, TypeOfType):
        return _size_method(chk, call, recv, name)
    if isinstance(rt, TypeOfType) and name in SIZE_METHODS:
        return _size_method(chk, call, recv, name, rt.of)
    if isinstance(rt, T.Header) and name in ("isValid", "setValid", "setInvalid"):
        return _builtin(chk, call, recv, name, T.Bool() if name == "isValid" else T.Void())
    if isinstance(rt, T.HeaderUnion) and name == "isValid":
        return _builtin(chk, call, recv, name, T.Bool())
    if isinstance(rt, T.Stack) and name in ("push_front", "pop_front"):
        return _stack_method(chk, call, recv, name)
    _check_args_only(chk, call)
    chk.ctx.error(chk.ctx.find_after(recv.pos, r"\.\s*(" + name + r")\b", 1),
                  f"Cannot extract field {name} from {chk.text(recv)} which has type {rt}",
                  len(name))
    return unknown(call)


def _table_apply(chk: Checker, call: A.Call, recv: A.Expr) -> A.Expr:
    decl = recv.decl if isinstance(recv, A.Name) else None
    if not isinstance(decl, A.TableDecl):
        chk.ctx.unsupported(call.pos, "applying a table that is not named directly")
        return unknown(call)
    if chk.action is not None:
        chk.error_at(call, f"{chk.text(call)}: apply cannot be called from actions")
        return unknown(call)
    if chk.function is not None or chk.in_parser:
        chk.error_at(call, f"{chk.text(call)}: tables can only be applied in controls")
        return unknown(call)
    if call.args or call.type_args:
        chk.error_at(call, f"{chk.text(call)}: wrong number of arguments: expected 0, got "
                     f"{len(call.args)}")
        _check_args_only(chk, call)
        return unknown(call)
    call.target = A.CallTableApply(decl)
    call.resolved_args = []
    call.type = T.TableApplyResult(decl.name)
    return call


def _sub_apply(chk: Checker, call: A.Call, recv: A.Expr, rt: T.ParserOrControl) -> A.Expr:
    inst = recv.decl if isinstance(recv, A.Name) else None
    block = rt.decl
    # an instance, or a constructor parameter that stands for the instance it is given
    applicable = isinstance(inst, A.Instantiation) or (
        isinstance(inst, A.Param) and inst.direction == "")
    if not applicable or not isinstance(
        block, (A.ParserDecl, A.ControlDecl, A.ParserTypeDecl, A.ControlTypeDecl)
    ):
        chk.ctx.unsupported(call.pos, f"applying {chk.text(recv)}")
        _check_args_only(chk, call)
        return unknown(call)
    assert isinstance(inst, (A.Instantiation, A.Param))
    if isinstance(block, (A.ParserTypeDecl, A.ControlTypeDecl)) and block.type_params:
        chk.ctx.unsupported(call.pos, f"applying {chk.text(recv)} of the generic type "
                            f"{block.name}")
        _check_args_only(chk, call)
        return unknown(call)
    if chk.action is not None or chk.function is not None:
        chk.error_at(call, f"{chk.text(call)}: apply cannot be called from actions or "
                     "functions")
        return unknown(call)
    if isinstance(block, (A.ParserDecl, A.ParserTypeDecl)) != chk.in_parser:
        where = "parser" if chk.in_parser else "control"
        chk.error_at(call, f"{chk.text(call)}: a {rt.kind} cannot be applied in a {where}")
        return unknown(call)
    sig = Signature(f"{inst.name}.apply", block.params, T.Void(), {}, [])
    if bind(chk, call, sig) is None:
        return unknown(call)
    call.target = A.CallSubApply(inst)
    return call


def _extern_method(
    chk: Checker, call: A.Call, recv: A.Expr, rt: T.Extern, name: str
) -> A.Expr:
    decl = rt.decl
    if not isinstance(decl, A.ExternDecl):
        _check_args_only(chk, call)
        return unknown(call)
    candidates = [md for md in decl.methods if md.name == name and md.return_type is not None]
    if not candidates:
        chk.ctx.error(chk.ctx.find_after(recv.pos, r"\.\s*(" + name + r")\b", 1),
                      f"{chk.text(call.callee)}: extern {decl.name} does not have method "
                      "matching this call", len(name))
        _check_args_only(chk, call)
        return unknown(call)
    what = f"{chk.text(call.callee)}"
    method = choose_overload(chk, call, what, candidates) if len(candidates) > 1 else (
        candidates[0])
    if method is None:
        _check_args_only(chk, call)
        return unknown(call)
    assert isinstance(method, A.MethodDecl)
    env = extern_env(chk, decl, rt)
    own = _type_params_of(chk, method, [TypeParam(n, method) for n in method.type_params])
    sig = Signature(what, method.params, chk.resolve(method.return_type), env, own)
    if bind(chk, call, sig) is None:
        return unknown(call)
    call.target = A.CallExternMethod(decl.name, name, recv, method)
    check_extern_call(chk, call, decl.name, name, method.params)
    check_core_method(chk, call, decl.name, name)
    return call


def extern_env(chk: Checker, decl: A.ExternDecl, t: T.Extern) -> dict[TypeParam, T.Type]:
    """Bindings of an extern's type parameters from an instance type's arguments."""
    params = _extern_type_params(chk, decl)
    return {tp: a for tp, a in zip(params, t.type_args, strict=False)}


def _extern_type_params(chk: Checker, decl: A.ExternDecl) -> list[TypeParam]:
    found: dict[str, TypeParam] = {}
    for md in decl.methods:
        refs: list[A.TypeRef] = [p.type_ref for p in md.params]
        if md.return_type is not None:
            refs.append(md.return_type)
        while refs:
            ref = refs.pop()
            if isinstance(ref, A.NamedTypeRef):
                tp = chk.ctx.type_decls.get(id(ref))
                if isinstance(tp, TypeParam) and tp.owner is decl:
                    found[tp.name] = tp
                refs.extend(ref.args)
            elif isinstance(ref, A.TupleTypeRef):
                refs.extend(ref.elements)
            elif isinstance(ref, A.StackTypeRef):
                refs.append(ref.element)
    return [found.get(n) or TypeParam(n, decl) for n in decl.type_params]


def _builtin(chk: Checker, call: A.Call, recv: A.Expr, name: str, result: T.Type) -> A.Expr:
    if call.args or call.type_args:
        chk.error_at(call, f"{chk.text(call.callee)}: wrong number of arguments: expected 0, "
                     f"got {len(call.args)}")
        _check_args_only(chk, call)
        return unknown(call)
    if name in ("setValid", "setInvalid"):
        chk_writable(chk, recv, "receiver")
    call.target = A.CallBuiltin(name, recv)
    call.resolved_args = []
    call.type = result
    return call


def _stack_method(chk: Checker, call: A.Call, recv: A.Expr, name: str) -> A.Expr:
    if chk.in_parser:
        chk.error_at(call, f"{chk.text(call.callee)}: 'push_front' and 'pop_front' for stacks "
                     "cannot be used in a parser")
        return unknown(call)
    if len(call.args) != 1 or call.args[0].value is None:
        chk.error_at(call, f"{chk.text(call.callee)}: wrong number of arguments: expected 1, "
                     f"got {len(call.args)}")
        _check_args_only(chk, call)
        return unknown(call)
    count = chk.expr(call.args[0].value)
    call.args[0].value = count
    if not isinstance(count, A.IntLit) or count.value < 0:
        if not is_unknown(count.type):
            chk.error_at(count, f"{chk.text(count)}: the count must be a non-negative "
                         "compile-time constant")
        return unknown(call)
    count = F.int_lit(count.value, T.InfInt(), count.pos, count.text)
    call.args[0].value = count
    chk_writable(chk, recv, "receiver")
    call.target = A.CallBuiltin(name, recv)
    call.resolved_args = [count]
    call.type = T.Void()
    return call


def _size_method(
    chk: Checker, call: A.Call, recv: A.Expr, name: str, t: T.Type | None = None
) -> A.Expr:
    if call.args or call.type_args:
        chk.error_at(call, f"{chk.text(call.callee)}: wrong number of arguments: expected 0, "
                     f"got {len(call.args)}")
        return unknown(call)
    t = t if t is not None else recv.type
    assert t is not None
    size = F.size_of_type(t, maximum=name.startswith("max"))
    if size is None:
        chk.error_at(call, f"{chk.text(call)}: {t} has no fixed size")
        return unknown(call)
    if name.endswith("Bytes"):
        size = (size + 7) // 8
    return F.int_lit(size, T.InfInt(), call.pos)


# ------------------------------------------------------------- constructors


def _is_block_constructor(e: A.Expr) -> bool:
    """``C()``: a nameless instance of a parser or control (a constructor argument)."""
    return (isinstance(e, A.Call) and isinstance(e.callee, A.Name)
            and isinstance(e.callee.decl, (A.ParserDecl, A.ControlDecl)))


def _nameless_instance(chk: Checker, call: A.Call) -> A.Expr:
    assert isinstance(call.callee, A.Name)
    block = call.callee.decl
    assert isinstance(block, (A.ParserDecl, A.ControlDecl))
    kind = "parser" if isinstance(block, A.ParserDecl) else "control"
    bt = T.ParserOrControl(kind, block.name, block)
    args = constructor_args(chk, call, bt, block.name)
    if args is None:
        return unknown(call)
    chk.ctx.ctor_args[id(call)] = args
    call.type = bt
    return call


def _block_argument_fits(chk: Checker, v: A.Expr, pt: T.ParserOrControl) -> bool:
    """A constructor argument for a parameter of parser or control type ``pt``: an
    instance (or such a parameter of the enclosing block) whose apply parameters match
    the type's, direction for direction and type for type."""
    vt = v.type
    inst = v.decl if isinstance(v, A.Name) else None
    named = isinstance(inst, (A.Instantiation, A.Param))
    if not (named or _is_block_constructor(v)) or not isinstance(
            vt, T.ParserOrControl) or vt.kind != pt.kind:
        chk.error_at(v, f"{chk.text(v)}: expected an instance of a {pt.kind} of type "
                     f"{pt.name}")
        return False
    want, got = pt.decl, vt.decl
    if want is got:
        return True
    blocks = (A.ParserTypeDecl, A.ControlTypeDecl, A.ParserDecl, A.ControlDecl)
    ok = False
    if isinstance(want, blocks) and isinstance(got, blocks):
        wp, gp = want.params, got.params
        ok = not want.type_params and not got.type_params and len(wp) == len(gp) and all(
            a.direction == b.direction and a.type_ref.resolved == b.type_ref.resolved
            for a, b in zip(wp, gp, strict=True))
    if not ok:
        chk.error_at(v, f"{chk.text(v)}: {vt.name} does not match the {pt.kind} type "
                     f"{pt.name}: their apply parameters differ")
    return ok


def constructor_args(
    chk: Checker, call: A.Call, t: T.Type, what: str
) -> list[A.Expr | None] | None:
    """Check the arguments of an instantiation of type ``t`` (an extern, parser or
    control); constructor arguments are compile-time constants."""
    if isinstance(t, T.Extern):
        decl = t.decl
        if not isinstance(decl, A.ExternDecl):
            return None
        ctors = [md for md in decl.methods if md.return_type is None or md.name == decl.name]
        if not ctors:
            if call.args:
                chk.error_at(call, f"{what}: wrong number of arguments: expected 0, got "
                             f"{len(call.args)}")
                return None
            call.resolved_args = []
            return []
        ctor = choose_overload(chk, call, what, ctors) if len(ctors) > 1 else ctors[0]
        if ctor is None:
            return None
        assert isinstance(ctor, A.MethodDecl)
        sig = Signature(what, ctor.params, t, extern_env(chk, decl, t), [], "constructor")
        return bind(chk, call, sig)
    if isinstance(t, T.ParserOrControl) and isinstance(t.decl, (A.ParserDecl, A.ControlDecl)):
        sig = Signature(what, t.decl.ctor_params, t, {}, [], "constructor")
        return bind(chk, call, sig)
    chk.error_at(call, f"{what}: Cannot invoke a constructor on type {t}")
    return None


def is_constructor_call(e: A.Expr) -> bool:
    return (
        isinstance(e, A.Call)
        and isinstance(e.callee, A.Name)
        and isinstance(e.callee.decl, (A.ExternDecl, A.ParserDecl, A.ControlDecl))
    )
