"""A checked program's parser and control blocks as C functions.

Each block instance becomes ``static void blk_<name>(u64 *S, Pkt *P, <one pointer per
aggregate parameter>)`` (a parser returns the bit offset where it stopped and sets
``*perr`` on an error; it reads the packet from ``d``, ``nb`` bytes). The architecture
supplies the extern code (``hooks``), the per-packet context ``Pkt`` and the pipeline
that calls the blocks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from switch.engine.layout import strip
from switch.engine.tables import Table
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.program import BlockInstance, Program
from switch.native.c_base import TypeTable, UnsupportedError, cname
from switch.native.c_parser import ParserMixin
from switch.native.c_tables import Slots, TableCode


class CGen(ParserMixin):
    """Generator of one block's C function (all mixins together)."""

    def __init__(self, program: Program, types: TypeTable, block: BlockInstance,
                 counter: Any, hooks: Any, tables: TableCode, kind: str):
        super().__init__(program, types, block, counter)
        self.hooks = hooks
        self.tables = tables
        self.kind = kind


@dataclass
class BlockCode:
    name: str
    params: list[tuple[str, str]]  # (C type, role) per aggregate parameter
    source: str


@dataclass
class ProgramCode:
    types: TypeTable
    slots: Slots
    tables: TableCode
    blocks: dict[str, BlockCode] = field(default_factory=dict)  # architecture key ->


def _check_declarations(program: Program) -> None:
    for d in program.decls:
        if isinstance(d, A.FunctionDecl):
            continue  # compiled when called (a call is refused below)
        if isinstance(d, A.HeaderUnionDecl):
            raise UnsupportedError("header unions", d.pos)


def gen_block(program: Program, code: ProgramCode, hooks: Any, bi: BlockInstance,
              kind: str, counter: Any, roles: list[str]) -> BlockCode:
    """``kind``: parser, control or deparser. ``roles`` names each parameter
    (packet_in/packet_out parameters included) for the architecture."""
    decl = bi.decl
    if bi.children:
        raise UnsupportedError(f"{decl.name}: a parser or control applied inside another",
                               decl.pos)
    g = CGen(program, code.types, bi, counter, hooks, code.tables, kind)
    params: list[tuple[str, str]] = []
    cparams = ["u64 *S", "Pkt *P"]
    if kind == "parser":
        cparams += ["const uint8_t *d", "u64 nb", "u64 *perr"]
    for p, role in zip(decl.params, roles, strict=True):
        pt = strip(p.type_ref.resolved)  # type: ignore[arg-type]
        if isinstance(pt, T.Extern):
            continue
        if not isinstance(pt, (T.Header, T.Struct)):
            raise UnsupportedError(f"{decl.name}: parameter {p.name} of type {pt}", p.pos)
        ct = code.types.ctype(pt, p)
        name = f"p_{cname(p.name)}"
        cparams.append(f"{ct} *{name}")
        g.bind_name(p, f"(*{name})")
        params.append((ct, role))
    fname = f"blk_{cname(bi.fqn)}"
    if isinstance(decl, A.ParserDecl):
        g.parser_body(decl)
        ret = "u64"
    else:
        for d in decl.locals:
            g.local_decl(d)
        g.stmt(decl.body)
        ret = "void"
    body = "\n".join(g.em.lines)
    src = (f"static {ret} {fname}({', '.join(cparams)}) {{\n    (void)S; (void)P;\n{body}\n}}\n")
    return BlockCode(fname, params, src)


def new_program_code(program: Program, tables: dict[str, Table]) -> ProgramCode:
    _check_declarations(program)
    slots = Slots()
    return ProgramCode(TypeTable(), slots, TableCode(program, tables, slots))


def counter() -> Any:
    return itertools.count()


__all__ = ["BlockCode", "CGen", "ProgramCode", "counter", "gen_block", "new_program_code"]
