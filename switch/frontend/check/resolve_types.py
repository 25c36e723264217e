"""Turning written types (``TypeRef``) into canonical types (``switch.frontend.types``).

Widths and stack sizes are compile-time constant expressions, so resolution folds them
through the expression checker. Generic signatures keep their type parameters as
``TypeVar``s; ``subst`` replaces them once a use binds them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check.context import UNKNOWN, TypeParam, TypeVar, Unknown
from switch.frontend.check.print_expressions import type_ref_text

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker

MAX_WIDTH = 2048


def resolve_type(chk: Checker, ref: A.TypeRef | None) -> T.Type:
    """The canonical type of ``ref`` (cached in ``ref.resolved``); ``UNKNOWN`` after an
    error has been reported."""
    if ref is None:
        return T.Void()
    if ref.resolved is not None:
        return ref.resolved
    t = _resolve(chk, ref)
    ref.resolved = t
    return t


def _width(chk: Checker, ref: A.BitTypeRef | A.VarbitTypeRef, signed: bool) -> int | None:
    assert ref.width is not None
    folded = chk.const_expr(ref.width)
    ref.width = folded
    if not isinstance(folded, A.IntLit):
        if not isinstance(folded.type, Unknown):
            chk.ctx.error(folded.pos, f"{chk.text(folded)}: width must be a compile-time "
                          "constant", len(chk.text(folded)))
        return None
    w = folded.value
    if w < (1 if signed else 0) or w > MAX_WIDTH:
        chk.ctx.error(folded.pos, f"{chk.text(folded)}: invalid type width {w}",
                      len(chk.text(folded)))
        return None
    return w


def _resolve(chk: Checker, ref: A.TypeRef) -> T.Type:
    ctx = chk.ctx
    if isinstance(ref, A.BitTypeRef):
        if ref.width is None:
            return T.Bits(1, ref.signed)
        w = _width(chk, ref, ref.signed)
        return UNKNOWN if w is None else T.Bits(w, ref.signed)
    if isinstance(ref, A.VarbitTypeRef):
        w = _width(chk, ref, False)
        return UNKNOWN if w is None else T.Varbit(w)
    if isinstance(ref, A.BoolTypeRef):
        return T.Bool()
    if isinstance(ref, A.IntTypeRef):
        return T.InfInt()
    if isinstance(ref, A.ErrorTypeRef):
        return T.Error()
    if isinstance(ref, A.StringTypeRef):
        return T.String()
    if isinstance(ref, A.VoidTypeRef):
        return T.Void()
    if isinstance(ref, A.DontCareTypeRef):
        return T.DontCareType()
    if isinstance(ref, A.StackTypeRef):
        element = resolve_type(chk, ref.element)
        folded = chk.const_expr(ref.size)
        ref.size = folded
        if isinstance(element, Unknown):
            return UNKNOWN
        if not isinstance(folded, A.IntLit) or folded.value <= 0:
            ctx.error(folded.pos, f"{chk.text(folded)}: header stack size must be a positive "
                      "compile-time constant", len(chk.text(folded)))
            return UNKNOWN
        if not isinstance(element, (T.Header, T.HeaderUnion)):
            ctx.error(ref.pos, f"{type_ref_text(ref)}: header stack element type must be a "
                      f"header or header_union, not {element}")
            return UNKNOWN
        return T.Stack(element, folded.value)
    if isinstance(ref, A.TupleTypeRef):
        elements = tuple(resolve_type(chk, e) for e in ref.elements)
        if any(isinstance(e, Unknown) for e in elements):
            return UNKNOWN
        return T.Tuple(elements)
    if isinstance(ref, A.NamedTypeRef):
        return _named(chk, ref)
    ctx.unsupported(ref.pos, f"type {type(ref).__name__}")
    return UNKNOWN


def _named(chk: Checker, ref: A.NamedTypeRef) -> T.Type:
    ctx = chk.ctx
    decl = ctx.type_decls.get(id(ref))
    name = ref.name.lstrip(".")
    if decl is None:
        return UNKNOWN  # reported by name resolution
    args = [resolve_type(chk, a) for a in ref.args]
    if any(isinstance(a, Unknown) for a in args):
        return UNKNOWN
    if isinstance(decl, TypeParam):
        if args:
            ctx.error(ref.pos, f"{name}: a type parameter takes no type arguments", len(name))
        bound = chk.type_args.get((id(decl.owner), decl.name))
        return bound if bound is not None else TypeVar(decl)
    if isinstance(decl, A.ExternDecl):
        if args and len(args) != len(decl.type_params):
            ctx.error(ref.pos, f"{name}: expected {len(decl.type_params)} type arguments, "
                      f"got {len(args)}", len(name))
            return UNKNOWN
        return T.Extern(decl.name, tuple(args), decl)
    if isinstance(decl, (A.ParserDecl, A.ControlDecl)) and decl.type_params:
        if len(args) == len(decl.type_params) and any(free_vars(a) for a in args):
            # in a generic block, an instance of another generic block with its own type
            # parameters: checked in each specialization of the enclosing block
            return UNKNOWN
        # the uses with the right number of type arguments were specialized
        ctx.error(ref.pos, f"{name}: expected {len(decl.type_params)} type arguments, got "
                  f"{len(args)}", len(name))
        return UNKNOWN
    if isinstance(decl, (A.ParserTypeDecl, A.ParserDecl)):
        return T.ParserOrControl("parser", decl.name, decl)
    if isinstance(decl, (A.ControlTypeDecl, A.ControlDecl)):
        return T.ParserOrControl("control", decl.name, decl)
    if isinstance(decl, A.PackageDecl):
        return T.ParserOrControl("package", decl.name, decl)
    if isinstance(decl, (A.HeaderDecl, A.StructDecl, A.HeaderUnionDecl)) and decl.type_params:
        if len(args) != len(decl.type_params):
            ctx.error(ref.pos, f"{name}: expected {len(decl.type_params)} type arguments, "
                      f"got {len(args)}", len(name))
            return UNKNOWN
        from switch.frontend.check.check_declarations import specialize

        return specialize(chk, decl, args, ref.pos)
    type_decls = (A.HeaderDecl, A.StructDecl, A.HeaderUnionDecl, A.EnumDecl, A.TypedefDecl)
    if isinstance(decl, type_decls):
        if args:
            ctx.unsupported(ref.pos, f"type arguments for {name}", len(name))
            return UNKNOWN
        t = ctx.decl_types.get(id(decl))
        return UNKNOWN if t is None else t
    if isinstance(decl, A.ErrorDecl):
        return T.Error()
    ctx.error(ref.pos, f"{name}: not a type", len(name))
    return UNKNOWN


def subst(t: T.Type, env: dict[TypeParam, T.Type]) -> T.Type:
    """``t`` with its type variables replaced by their bindings in ``env``."""
    if not env:
        return t
    if isinstance(t, TypeVar):
        return env.get(t.param, t)
    if isinstance(t, T.Extern) and t.type_args:
        return T.Extern(t.name, tuple(subst(a, env) for a in t.type_args), t.decl)
    if isinstance(t, T.Tuple):
        return T.Tuple(tuple(subst(e, env) for e in t.elements))
    if isinstance(t, T.Stack):
        return T.Stack(subst(t.element, env), t.size)
    return t


def free_vars(t: T.Type) -> list[TypeParam]:
    if isinstance(t, TypeVar):
        return [t.param]
    if isinstance(t, T.Extern):
        return [p for a in t.type_args for p in free_vars(a)]
    if isinstance(t, T.Tuple):
        return [p for e in t.elements for p in free_vars(e)]
    if isinstance(t, T.Stack):
        return free_vars(t.element)
    return []


def contains_infint(t: T.Type) -> bool:
    if isinstance(t, T.InfInt):
        return True
    if isinstance(t, T.Tuple):
        return any(contains_infint(e) for e in t.elements)
    if hasattr(t, "fields") and not isinstance(t, (T.Header, T.Struct, T.HeaderUnion)):
        return any(contains_infint(f.type) for f in t.fields)  # type: ignore[attr-defined]
    return False
