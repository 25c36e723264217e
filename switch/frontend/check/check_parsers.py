"""Parsers: local declarations, value sets, the statements of each state and its
transition (``select`` expressions of bits, bools and enums; keysets with as many
elements as there are select expressions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check.check_expressions import is_unknown
from switch.frontend.check.check_keysets import keyset
from switch.frontend.check.check_statements import check_stmt, local_decl

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker

SELECT_TYPES = (T.Bits, T.Bool, T.SerEnum, T.Enum, T.Error)
STATE_STMTS = (A.Assign, A.CallStmt, A.DeclStmt, A.Block, A.Empty, A.If)


def check_parser_locals(chk: Checker, d: A.ParserDecl) -> None:
    from switch.frontend.check.check_declarations import instantiation

    for local in d.locals:
        if isinstance(local, A.ValueSetDecl):
            value_set(chk, local)
        elif isinstance(local, A.Instantiation):
            instantiation(chk, local)
        else:
            local_decl(chk, local)


def value_set(chk: Checker, d: A.ValueSetDecl) -> None:
    t = chk.resolve(d.element)
    if not is_unknown(t) and not _value_set_type_ok(t):
        chk.decl_error(d, f"{d.name}: value_set element type {t} is not allowed; use "
                      "bit<W>, a struct of them or a tuple of them")
    size = chk.const_expr(d.size)
    d.size = size
    if isinstance(size, A.IntLit) and size.value <= 0:
        chk.error_at(size, f"{chk.text(size)}: value_set size must be positive")


def _value_set_type_ok(t: T.Type) -> bool:
    return T.every_leaf(t, lambda leaf: isinstance(leaf, (T.Bits, T.SerEnum, T.Bool)))


def check_states(chk: Checker, d: A.ParserDecl) -> None:
    for st in d.states:
        with chk.inside(in_state=True):
            stmts = []
            for s in st.stmts:
                if isinstance(s, (A.For, A.ForIn)):
                    chk.ctx.error(s.pos, "for: loops are not allowed in a parser", 3)
                    continue
                if not isinstance(s, STATE_STMTS) and not isinstance(s, A.Unsupported):
                    chk.ctx.error(s.pos, f"{type(s).__name__.lower()} statements are not "
                                  "allowed in a parser state")
                    continue
                stmts.append(check_stmt(chk, s))
            st.stmts = stmts
            if isinstance(st.transition, A.Select):
                _select(chk, st.transition)


def _select(chk: Checker, sel: A.Select) -> None:
    exprs = []
    types: list[T.Type] = []
    bad = False
    for e in sel.exprs:
        v = chk.expr(e)
        exprs.append(v)
        if is_unknown(v.type):
            bad = True
        elif not isinstance(v.type, SELECT_TYPES):
            chk.error_at(v, f"Expression '{chk.text(v)}' with a component of type "
                         f"'{v.type}' cannot be used in 'select'")
            bad = True
        else:
            assert v.type is not None
            types.append(v.type)
    sel.exprs = exprs
    if bad:
        return
    for case in sel.cases:
        case.keyset = keyset(chk, case.keyset, types, "match", allow_value_set=True)
