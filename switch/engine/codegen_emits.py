"""Deparsers: consecutive ``emit`` calls of fixed-layout headers become one
``struct.pack`` of all their fields when every one of the headers is valid (the
usual case), instead of one ``pack`` call, one validity test and one list append
per header; otherwise each ``emit`` runs as written. The bytes are the same."""

from __future__ import annotations

import struct

from switch.engine.codegen_expr import Raw
from switch.engine.codegen_stmt import StmtMixin
from switch.frontend import ast as A
from switch.frontend import types as T


def _path(e: A.Expr) -> bool:
    """An expression naming a header without side effects or run-time indexes."""
    while isinstance(e, A.Member):
        e = e.expr
    return isinstance(e, A.Name)


class EmitMixin(StmtMixin):
    def stmts(self, ss: list[A.Stmt]) -> None:
        if self.mod.trace or self.packet_out is None:
            super().stmts(ss)
            return
        start = i = 0
        while i < len(ss):
            j = i
            while j < len(ss) and self._emitted_header(ss[j]) is not None:
                j += 1
            if j - i >= 2:
                super().stmts(ss[start:i])
                self._merged_emits(ss[i:j])
                start = j
            i = j + 1 if j == i else j
        super().stmts(ss[start:])

    def _emitted_header(self, s: A.Stmt) -> A.Expr | None:
        """The header ``s`` emits, when it is an emit the merge can take."""
        if not (isinstance(s, A.CallStmt) and isinstance(s.call.target, A.CallExternMethod)):
            return None
        t = s.call.target
        if t.extern != "packet_out" or t.method != "emit":
            return None
        args = self.args_of(s.call)
        if len(args) != 1 or args[0] is None or not _path(args[0]):
            return None
        ht = self.ty(args[0])
        if not isinstance(ht, T.Header) or self.types.cls(ht) not in self.types.pack_plans:
            return None
        return args[0]

    def _merged_emits(self, run: list[A.Stmt]) -> None:
        names: list[str] = []
        fmt = ""
        args: list[str] = []
        for s in run:
            e = self._emitted_header(s)
            assert e is not None
            h = self.tmp("_eh")
            self.em(f"{h} = {self.expr(e)}")
            names.append(h)
            hfmt, hargs = self.types.pack_plans[self.types.cls(self.ty(e))]
            fmt += hfmt
            args += [a.replace("self.", f"{h}.") for a in hargs]
        st = self.mod.bind(struct.Struct(">" + fmt), "emit")
        self.em(f"if {' and '.join(f'{h}.valid' for h in names)}:")
        self.em(f"    {self.packet_out}.append({st}.pack({', '.join(args)}))")
        self.em("else:")
        with self.em.indent():
            for s, h in zip(run, names, strict=True):
                e = self._emitted_header(s)
                assert e is not None
                self.emit_value(Raw(e.pos, h, type=e.type))
