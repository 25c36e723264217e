"""Pass 0: specialize generic parsers and controls.

``control C<T>(inout T x) { ... }`` instantiated as ``C<bit<8>>() c;`` becomes a copy of
``C`` named ``C<bit<8>>`` in which every use of ``T`` is the type ``bit<8>``; the
instantiation then names that copy. Each distinct list of type arguments gets one copy,
placed right after the generic declaration. This runs on the syntax tree before names
are resolved, so the copies are checked like any other declaration; the generic
declaration stays too, and is checked once with its type parameters as type variables
(as p4c checks it: ``v + 1`` on a ``T`` is an error even when every specialization could
add). Uses without type arguments are left alone and reported by the checker.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator

from switch.frontend import ast as A
from switch.frontend.check.print_expressions import type_ref_text

Block = A.ParserDecl | A.ControlDecl


def specialize_blocks(source: A.SourceFile) -> None:
    generic = {d.name: d for d in source.decls
               if isinstance(d, (A.ParserDecl, A.ControlDecl)) and d.type_params}
    if not generic:
        return
    copies: dict[tuple[str, str], Block] = {}
    # instances in the generic templates themselves are specialized in their copies
    todo = [d for d in source.decls if d.name not in generic or d is not generic[d.name]]
    while todo:
        made: list[A.Declaration] = []
        for inst in _instantiations(todo):
            ref = inst.type_ref
            decl = generic.get(ref.name.lstrip(".")) if isinstance(ref, A.NamedTypeRef) \
                else None
            if decl is None:
                continue
            assert isinstance(ref, A.NamedTypeRef)
            if len(ref.args) != len(decl.type_params):
                continue  # the checker reports the mismatch
            args_text = ", ".join(type_ref_text(a) for a in ref.args)
            key = (decl.name, args_text)
            if key not in copies:
                copies[key] = _specialized_copy(decl, ref.args, f"{decl.name}<{args_text}>")
                made.append(copies[key])
            ref.name = copies[key].name
            ref.args = []
        todo = made
    decls: list[A.Declaration] = []
    for d in source.decls:
        is_template = d.name in generic and d is generic[d.name]
        decls.append(d)
        decls.extend(c for (name, _), c in copies.items() if is_template and name == d.name)
    source.decls[:] = decls


def _specialized_copy(decl: Block, args: list[A.TypeRef], name: str) -> Block:
    clone = copy.deepcopy(decl)
    env = dict(zip(decl.type_params, args, strict=True))
    clone.name = name
    clone.type_params = []
    for f in dataclasses.fields(clone):
        if f.name != "name":
            setattr(clone, f.name, _substitute(getattr(clone, f.name), env))
    return clone


def _substitute(value: object, env: dict[str, A.TypeRef]) -> object:
    """``value`` with every reference to a type parameter in ``env`` replaced by (a copy
    of) its type argument."""
    if isinstance(value, A.NamedTypeRef) and not value.args and value.name in env:
        return copy.deepcopy(env[value.name])
    if isinstance(value, list):
        return [_substitute(x, env) for x in value]
    if isinstance(value, tuple):
        return tuple(_substitute(x, env) for x in value)
    if isinstance(value, A.Node):
        for f in dataclasses.fields(value):
            setattr(value, f.name, _substitute(getattr(value, f.name), env))
    return value


def _instantiations(decls: list[A.Declaration]) -> Iterator[A.Instantiation]:
    for d in decls:
        if isinstance(d, A.Instantiation):
            yield d
        elif isinstance(d, (A.ParserDecl, A.ControlDecl)):
            yield from (x for x in d.locals if isinstance(x, A.Instantiation))
