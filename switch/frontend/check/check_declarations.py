"""Declarations: types (headers, structs, unions, enums, typedefs), constants, externs,
functions, actions, parsers, controls and instantiations, including the check of the
blocks passed to a package against the package's parameter types."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.check_calls import constructor_args, unify
from switch.frontend.check.check_expressions import is_unknown
from switch.frontend.check.check_extern_types import check_extern_instance
from switch.frontend.check.check_parsers import check_parser_locals, check_states
from switch.frontend.check.check_statements import (
    check_stmt,
    const_decl,
    local_decl,
    returns_always,
)
from switch.frontend.check.check_tables import check_table
from switch.frontend.check.context import UNKNOWN, TypeParam, TypeVar, Unknown
from switch.frontend.check.print_expressions import expr_text, type_ref_text
from switch.frontend.check.resolve_types import free_vars, subst

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker

HEADER_FIELD_TYPES = (T.Bits, T.Varbit, T.Bool, T.SerEnum)
NOT_IN_STRUCTS = (T.Extern, T.ParserOrControl, T.Void, T.String, T.InfInt)


def check_top_level(chk: Checker, d: A.Declaration | A.Node) -> None:
    ctx = chk.ctx
    if isinstance(d, (A.HeaderDecl, A.StructDecl, A.HeaderUnionDecl)):
        _aggregate(chk, d)
    elif isinstance(d, A.EnumDecl):
        _enum(chk, d)
    elif isinstance(d, (A.ErrorDecl, A.MatchKindDecl)):
        pass  # members were numbered by name resolution
    elif isinstance(d, A.TypedefDecl):
        _typedef(chk, d)
    elif isinstance(d, A.ConstDecl):
        const_decl(chk, d)
    elif isinstance(d, A.ExternDecl):
        for m in d.methods:
            if m.return_type is not None:
                chk.resolve(m.return_type)
            params(chk, m.params)
    elif isinstance(d, A.ExternFunctionDecl):
        chk.resolve(d.return_type)
        params(chk, d.params)
    elif isinstance(d, A.FunctionDecl):
        _function(chk, d)
    elif isinstance(d, A.ActionDecl):
        action(chk, d)
    elif isinstance(d, (A.ParserTypeDecl, A.ControlTypeDecl, A.PackageDecl)):
        params(chk, d.params)
    elif isinstance(d, A.ParserDecl):
        _parser(chk, d)
    elif isinstance(d, A.ControlDecl):
        _control(chk, d)
    elif isinstance(d, A.Instantiation):
        instantiation(chk, d)
        if isinstance(d.type, T.ParserOrControl) and d.type.kind != "package":
            chk.decl_error(d, f"{d.name}: cannot instantiate at top-level", kind="invalid")
    elif isinstance(d, A.Unsupported):
        pass  # reported by name resolution
    else:
        ctx.unsupported(d.pos, f"{type(d).__name__} at top level")


# --------------------------------------------------------------------- types


def _field_pos(chk: Checker, f: A.Field) -> A.Pos:
    return chk.ctx.find_after(f.pos, r"\b" + f.name + r"\b")


def _aggregate(chk: Checker, d: A.HeaderDecl | A.StructDecl | A.HeaderUnionDecl) -> None:
    if d.type_params:
        return  # a generic type is checked once per specialization (``specialize``)
    resolved = [(f, chk.resolve(f.type_ref)) for f in d.fields]
    chk.ctx.decl_types[id(d)] = _aggregate_type(chk, d, d.name, resolved)


def specialize(chk: Checker, d: A.HeaderDecl | A.StructDecl | A.HeaderUnionDecl,
               args: list[T.Type], pos: A.Pos) -> T.Type:
    """The type ``d<args>`` of a generic header, struct or union: its fields resolved with
    the type parameters bound to ``args``, checked as a declared type named
    ``Name<args>``."""
    key = (id(d), tuple(str(a) for a in args))
    done = chk.ctx.specializations.get(key)
    if done is not None:
        return done
    if any(free_vars(a) for a in args):
        chk.ctx.unsupported(pos, f"type arguments of {d.name} that are type parameters",
                            len(d.name))
        return UNKNOWN
    outer = chk.type_args
    chk.type_args = {**outer, **{(id(d), n): a for n, a in zip(d.type_params, args,
                                                                strict=True)}}
    try:
        resolved = []
        for f in d.fields:
            _forget_resolved(f.type_ref)  # resolved for another specialization
            resolved.append((f, chk.resolve(f.type_ref)))
            _forget_resolved(f.type_ref)
    finally:
        chk.type_args = outer
    name = f"{d.name}<{', '.join(str(a) for a in args)}>"
    t = _aggregate_type(chk, d, name, resolved)
    chk.ctx.specializations[key] = t
    return t


def _forget_resolved(ref: A.TypeRef) -> None:
    ref.resolved = None
    if isinstance(ref, A.NamedTypeRef):
        for a in ref.args:
            _forget_resolved(a)
    elif isinstance(ref, A.StackTypeRef):
        _forget_resolved(ref.element)
    elif isinstance(ref, A.TupleTypeRef):
        for e in ref.elements:
            _forget_resolved(e)


def _aggregate_type(chk: Checker, d: A.HeaderDecl | A.StructDecl | A.HeaderUnionDecl,
                    name: str, resolved: list[tuple[A.Field, T.Type]]) -> T.Type:
    fields: list[T.FieldType] = []
    kind = {A.HeaderDecl: "header", A.StructDecl: "struct"}.get(type(d), "header_union")
    varbits = 0
    for f, t in resolved:
        fields.append(T.FieldType(f.name, t))
        if is_unknown(t):
            continue
        base = t
        while isinstance(base, T.NewType):
            base = base.underlying
        bad = False
        if isinstance(d, A.HeaderDecl):
            bad = not (isinstance(base, HEADER_FIELD_TYPES) or _fixed_bits_struct(base))
            if isinstance(base, T.Varbit):
                varbits += 1
                if varbits > 1:
                    chk.ctx.error(_field_pos(chk, f), f"{name}: a header can have at most one "
                                  "varbit field", len(f.name))
        elif isinstance(d, A.HeaderUnionDecl):
            bad = not isinstance(base, T.Header)
        else:
            bad = isinstance(base, NOT_IN_STRUCTS)
        if bad:
            chk.ctx.error(_field_pos(chk, f), f"Field {f.name} of {kind} {name} cannot have "
                          f"type {t}", len(f.name))
    agg: T.Type
    if isinstance(d, A.HeaderDecl):
        agg = T.Header(name, tuple(fields), d)
    elif isinstance(d, A.HeaderUnionDecl):
        agg = T.HeaderUnion(name, tuple(fields), d)
    else:
        agg = T.Struct(name, tuple(fields), d)
    return agg


def _fixed_bits_struct(t: T.Type) -> bool:
    """A struct that may be a header field: its fields are bit<W>, int<W>, bool,
    serializable enums or such structs; the header holds their bits in order."""
    if not isinstance(t, T.Struct):
        return False
    for f in t.fields:
        ft = f.type
        while isinstance(ft, T.NewType):
            ft = ft.underlying
        if not (isinstance(ft, (T.Bits, T.Bool, T.SerEnum)) or _fixed_bits_struct(ft)):
            return False
    return True


def _enum(chk: Checker, d: A.EnumDecl) -> None:
    if d.underlying is None:
        for _, value in d.members:
            if value is not None:
                chk.error_at(value, f"{d.name}: only an enum with an underlying type can give "
                             "its members values")
        chk.ctx.decl_types[id(d)] = T.Enum(d.name, tuple(m for m, _ in d.members), d)
        return
    under = chk.resolve(d.underlying)
    if is_unknown(under):
        return
    if not isinstance(under, T.Bits):
        chk.decl_error(d, f"{d.name}: the underlying type of an enum must be bit<W> or "
                      f"int<W>, not {under}")
        return
    members: list[tuple[str, int]] = []
    new_members: list[tuple[str, A.Expr | None]] = []
    for m, value in d.members:
        if value is None:
            chk.ctx.error(chk.ctx.find_after(d.pos, r"\b" + m + r"\b"),
                          f"{d.name}.{m}: a member of a serializable enum needs a value", len(m))
            new_members.append((m, value))
            continue
        v = chk.expr(value)
        v = chk.coerce(v, under)
        new_members.append((m, v))
        if isinstance(v, A.IntLit):
            members.append((m, v.value))
        elif not is_unknown(v.type):
            chk.error_at(v, f"{chk.text(v)}: expression must be a compile-time constant")
    d.members = new_members
    chk.ctx.decl_types[id(d)] = T.SerEnum(d.name, under, tuple(members), d)


def _typedef(chk: Checker, d: A.TypedefDecl) -> None:
    t = chk.resolve(d.type_ref)
    if is_unknown(t):
        return
    if d.new_type:
        if not isinstance(t, (T.Bits, T.Bool, T.NewType)):
            chk.decl_error(d, f"{d.name}: 'type' can only be used with bit<W>, int<W>, bool "
                          f"or another such type, not {t}")
            return
        chk.ctx.decl_types[id(d)] = T.NewType(d.name, t)
    else:
        chk.ctx.decl_types[id(d)] = t


# ---------------------------------------------------------------- parameters


def params(chk: Checker, ps: list[A.Param], in_action: bool = False) -> None:
    for p in ps:
        t = chk.resolve(p.type_ref)
        if is_unknown(t):
            continue
        if isinstance(t, T.ParserOrControl) and t.kind != "package":
            pass  # package parameters have parser/control types
        if isinstance(t, T.InfInt):
            if p.direction:
                chk.decl_error(p, f"{p.name}: parameters with type int must be directionless")
            elif in_action:
                chk.decl_error(p, f"{p.name}: actions cannot have parameters with type int")
        if p.default is not None:
            v = chk.expr(p.default)
            if not free_vars(t):
                v = chk.coerce(v, t)
            if not F.is_constant(v) and not is_unknown(v.type):
                chk.error_at(v, f"{chk.text(v)}: expression must be a compile-time constant")
            p.default = v


def action(chk: Checker, d: A.ActionDecl) -> None:
    params(chk, d.params, in_action=True)
    seen_directionless = False
    for p in d.params:
        if p.direction == "":
            seen_directionless = True
        elif seen_directionless:
            chk.decl_error(p, f"{p.name}: parameters with a direction must come before "
                          "directionless parameters")
    with chk.inside(action=d):
        check_stmt(chk, d.body)


def _function(chk: Checker, d: A.FunctionDecl) -> None:
    rt = chk.resolve(d.return_type)
    params(chk, d.params)
    with chk.inside(function=d):
        check_stmt(chk, d.body)
    if not isinstance(rt, (T.Void, Unknown)) and not returns_always(d.body):
        chk.decl_error(d, f"Function {d.name} does not return a value on all paths")


# ------------------------------------------------------------ parsers, controls


def _parser(chk: Checker, d: A.ParserDecl) -> None:
    params(chk, d.params)
    params(chk, d.ctor_params)
    for local in d.locals:
        chk.ctx.owners[id(local)] = d
    with chk.inside(block=d):
        check_parser_locals(chk, d)
        check_states(chk, d)


def _control(chk: Checker, d: A.ControlDecl) -> None:
    params(chk, d.params)
    params(chk, d.ctor_params)
    with chk.inside(block=d):
        for local in d.locals:
            chk.ctx.owners[id(local)] = d
            if isinstance(local, A.ActionDecl):
                action(chk, local)
            elif isinstance(local, A.TableDecl):
                check_table(chk, local)
            elif isinstance(local, A.Instantiation):
                instantiation(chk, local)
            elif isinstance(local, A.ValueSetDecl):
                chk.decl_error(local, f"{local.name}: value_set can only be declared in a "
                              "parser")
            else:
                local_decl(chk, local)
        check_stmt(chk, d.body)


# ------------------------------------------------------------- instantiations


def instantiation(chk: Checker, d: A.Instantiation) -> None:
    t = chk.resolve(d.type_ref)
    if is_unknown(t):
        return
    what = type_ref_text(d.type_ref)
    if isinstance(t, T.Extern):
        ext = t.decl
        if isinstance(ext, A.ExternDecl) and ext.type_params and not t.type_args:
            chk.ctx.error(d.type_ref.pos, f"{what}: Type parameters needed for {d.name}",
                          len(what))
            return
    elif isinstance(t, T.ParserOrControl) and t.kind == "package":
        _package(chk, d, t)
        d.type = t
        return
    elif not (isinstance(t, T.ParserOrControl) and isinstance(t.decl, (A.ParserDecl,
                                                                       A.ControlDecl))):
        chk.ctx.error(d.type_ref.pos, f"{what}: Cannot invoke a constructor on type {t}",
                      len(what))
        return
    call = _ctor_call(d)
    args = constructor_args(chk, call, t, what)
    if args is not None and isinstance(t, T.Extern):
        check_extern_instance(chk, d.type_ref, t, args)
    if args is not None:
        d.type = t
        d.args = call.args
        chk.ctx.ctor_args[id(d)] = args


def _ctor_call(d: A.Instantiation) -> A.Call:
    name = d.type_ref.name if isinstance(d.type_ref, A.NamedTypeRef) else type_ref_text(
        d.type_ref)
    return A.Call(d.pos, A.Name(d.type_ref.pos, name.lstrip(".")), [], d.args)


def _package(chk: Checker, d: A.Instantiation, t: T.ParserOrControl) -> None:
    pkg = t.decl
    if not isinstance(pkg, A.PackageDecl):
        return
    own = package_type_params(chk, pkg)
    env: dict[TypeParam, T.Type] = {}
    ref = d.type_ref
    if isinstance(ref, A.NamedTypeRef) and ref.args:
        if len(ref.args) != len(own):
            chk.ctx.error(ref.pos, f"{pkg.name}: expected {len(own)} type arguments, got "
                          f"{len(ref.args)}", len(pkg.name))
            return
        for tp, a in zip(own, ref.args, strict=False):
            env[tp] = chk.resolve(a)
    n, expected = len(d.args), len(pkg.params)
    if n != expected:
        chk.ctx.error(d.pos, f"{pkg.name}: wrong number of arguments: expected {expected}, got "
                      f"{n}", len(pkg.name))
        return
    if any(arg.name for arg in d.args):
        ordered = _by_name(chk, pkg, d.args)
        if ordered is None:
            return
        d.args = ordered
    for param, arg in zip(pkg.params, d.args, strict=False):
        if arg.value is None:
            chk.ctx.error(arg.pos, f"{pkg.name}: parameter {param.name} needs an argument")
            continue
        _package_arg(chk, pkg, param, arg, env)


def _by_name(chk: Checker, pkg: A.PackageDecl,
             args: list[A.Argument]) -> list[A.Argument] | None:
    """Named package arguments in the order of the package's parameters."""
    slots: dict[str, A.Argument] = {}
    names = [p.name for p in pkg.params]
    for arg in args:
        if not arg.name:
            chk.ctx.error(arg.pos, f"{pkg.name}: positional argument after named arguments")
            return None
        if arg.name not in names:
            chk.ctx.error(arg.pos, f"{pkg.name}: no parameter named {arg.name}",
                          len(arg.name))
            return None
        if arg.name in slots:
            chk.ctx.error(arg.pos, f"{pkg.name}: parameter {arg.name} bound twice")
            return None
        slots[arg.name] = arg
    return [slots[n] for n in names]


def package_type_params(chk: Checker, pkg: A.PackageDecl) -> list[TypeParam]:
    found: dict[str, TypeParam] = {}
    for p in pkg.params:
        refs: list[A.TypeRef] = [p.type_ref]
        while refs:
            r = refs.pop()
            if isinstance(r, A.NamedTypeRef):
                tp = chk.ctx.type_decls.get(id(r))
                if isinstance(tp, TypeParam) and tp.owner is pkg:
                    found[tp.name] = tp
                refs.extend(r.args)
    return [found.get(n) or TypeParam(n, pkg) for n in pkg.type_params]


def package_arg_block(arg: A.Expr) -> tuple[A.ParserDecl | A.ControlDecl | None,
                                            A.Instantiation | None]:
    """The block passed as a package argument: ``MyIngress()`` or an instance name."""
    if isinstance(arg, A.Call) and isinstance(arg.callee, A.Name):
        decl = arg.callee.decl
        if isinstance(decl, (A.ParserDecl, A.ControlDecl)):
            return decl, None
    if isinstance(arg, A.Name) and isinstance(arg.decl, A.Instantiation):
        t = arg.decl.type
        if isinstance(t, T.ParserOrControl) and isinstance(t.decl, (A.ParserDecl,
                                                                    A.ControlDecl)):
            return t.decl, arg.decl
    return None, None


def _package_arg(
    chk: Checker, pkg: A.PackageDecl, param: A.Param, arg: A.Argument,
    env: dict[TypeParam, T.Type]
) -> None:
    value = arg.value
    assert value is not None
    text = expr_text(value)
    block, _ = package_arg_block(value)
    want = chk.resolve(param.type_ref)
    if is_unknown(want):
        return
    if block is None:
        if isinstance(value, A.Call) and isinstance(value.callee, A.Name) and isinstance(
            value.callee.decl, A.ExternDecl
        ):
            chk.ctx.unsupported(value.pos, "extern instances as package arguments", len(text))
            return
        v = chk.expr(value)
        if not is_unknown(v.type):
            chk.error_at(v, f"{text}: expected a {getattr(want, 'kind', 'block')} for parameter "
                         f"{param.name} of {pkg.name}")
        return
    kind = "parser" if isinstance(block, A.ParserDecl) else "control"
    if block.type_params:
        chk.ctx.unsupported(value.pos, f"the generic {kind} {block.name} as a package "
                            "argument", len(text))
        return
    bt = T.ParserOrControl(kind, block.name, block)
    if isinstance(value, A.Call):
        value.callee.type = bt
        args = constructor_args(chk, value, bt, block.name)
        if args is None:
            return
        chk.ctx.ctor_args[id(value)] = args
        value.type = bt
    else:
        value.type = bt
    if not isinstance(want, T.ParserOrControl) or want.kind != kind:
        chk.error_at(value, f"{text}: a {kind} cannot be passed as parameter {param.name} of "
                     f"type {want}")
        return
    abstract = want.decl
    if not isinstance(abstract, (A.ParserTypeDecl, A.ControlTypeDecl)):
        return
    # the abstract type's own type parameters, bound to the package's (H, M, ...)
    abstract_env: dict[TypeParam, T.Type] = {}
    ref = param.type_ref
    abstract_params = _abstract_type_params(chk, abstract)
    if isinstance(ref, A.NamedTypeRef) and ref.args:
        for tp, a in zip(abstract_params, ref.args, strict=False):
            abstract_env[tp] = chk.resolve(a)
    if len(block.params) != len(abstract.params):
        chk.error_at(value, f"{text}: {block.name} has {len(block.params)} parameters but "
                     f"{pkg.name} expects a {kind} with {len(abstract.params)}")
        return
    for bp, ap in zip(block.params, abstract.params, strict=False):
        if bp.direction != ap.direction:
            chk.error_at(value, f"{text}: parameter {bp.name} of {block.name} has direction "
                         f"'{bp.direction or 'none'}' but {pkg.name} expects "
                         f"'{ap.direction or 'none'}'")
            return
        actual = chk.resolve(bp.type_ref)
        expected = subst(subst(chk.resolve(ap.type_ref), abstract_env), env)
        if is_unknown(actual, expected):
            continue
        if free_vars(expected):
            if not unify(expected, actual, env):
                chk.error_at(value, f"{text}: parameter {bp.name} has type {actual} but "
                             f"{pkg.name} expects {subst(expected, env)}")
                return
            continue
        if expected != actual:
            bound = ""
            raw = subst(chk.resolve(ap.type_ref), abstract_env)
            if isinstance(raw, TypeVar):
                bound = f" ({raw} = {expected})"
            chk.error_at(value, f"{text}: parameter {bp.name} has type {actual} but "
                         f"{pkg.name} expects {expected}{bound}")
            return


def _abstract_type_params(
    chk: Checker, decl: A.ParserTypeDecl | A.ControlTypeDecl
) -> list[TypeParam]:
    found: dict[str, TypeParam] = {}
    for p in decl.params:
        refs: list[A.TypeRef] = [p.type_ref]
        while refs:
            r = refs.pop()
            if isinstance(r, A.NamedTypeRef):
                tp = chk.ctx.type_decls.get(id(r))
                if isinstance(tp, TypeParam) and tp.owner is decl:
                    found[tp.name] = tp
                refs.extend(r.args)
    return [found.get(n) or TypeParam(n, decl) for n in decl.type_params]
