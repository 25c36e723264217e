"""Lane fusion, the code: a run of statements that ``switch.engine.lanes`` found to
repeat one template over K lanes becomes one pass of numpy operations over K-element
vectors.

The lanes' storage is laid out for it before any code is generated
(``plan_lane_storage``): the header fields a run steps through become one array of the
header (``TypeGen.plan_array``), and the architecture keeps the run's K extern arrays
as the K adjacent columns of one 2-D array (``LaneHooks.prepare_lane_banks``), so that
one index reads or writes all K lanes' elements as a row slice. A run whose storage is
not laid out so (or any run, when tracing) is compiled statement by statement as
usual: the fused and the plain code are interchangeable.

The fused code keeps each statement's P4 semantics:

- a vector has the exact numpy dtype of its P4 type (``int<32>``: int32), so ``+``,
  ``-``, ``*``, unary ``-``, ``~`` and shifts by a constant below W wrap exactly as P4's
  do, and casts are numpy's (two's complement) conversions;
- an index is evaluated once per access; an element past the end of the arrays reads
  as 0 in every lane and a write there is lost, as the architecture's plain code does;
- values read from storage are copied before they are kept, so a later write in the
  run cannot change them; a local written in the run ends with the last lane's value.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from switch.engine.codegen_stmt import StmtMixin
from switch.engine.lanes import ArrayAccess, ArrayRun, FieldRun, LaneGroup, find_groups
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.program import BlockInstance, ExternInstance


class LaneHooks(Protocol):
    """What an architecture supplies for lane fusion (all optional: without them no
    run is fused)."""

    def array_access(self, g: Any, call: A.Call, target: A.CallExternMethod,
                     instance: ExternInstance) -> ArrayAccess | None:
        """The call as an element access of an extern array, if it is one."""
        ...

    def prepare_lane_banks(self, runs: list[tuple[str, ...]]) -> None:
        """Keep each run's arrays as adjacent columns of one 2-D array, where possible
        (called before any code is generated)."""
        ...

    def lane_bank(self, g: Any, keys: tuple[str, ...]) -> tuple[str, int] | None:
        """(code of the 2-D array, first column) holding ``keys`` as adjacent columns."""
        ...


# a vector operand: (code, kind, P4 type); kind "vec" (a fresh array), "view" (a view
# of a header's or an extern's storage: copied before it is kept) or "scalar" (a
# Python int, the same in every lane)
Operand = tuple[str, str, T.Type]


class LaneMixin(StmtMixin):
    """Statement lists with their fusable runs compiled as vector code."""

    def array_access(self, call: A.Call) -> ArrayAccess | None:
        t = call.target
        if not isinstance(t, A.CallExternMethod):
            return None
        d = getattr(t.receiver, "decl", None)
        if not isinstance(d, A.Instantiation):
            return None
        inst = self.program.externs.get(self.instance_fqn(d) or "")
        fn = getattr(self.hooks, "array_access", None)
        if inst is None or fn is None:
            return None
        access: ArrayAccess | None = fn(self, call, t, inst)
        return access

    def lane_groups(self, ss: Sequence[A.Stmt]) -> list[LaneGroup]:
        key = (self.block.fqn if self.block is not None else "", id(ss))
        cache = self.mod.lane_groups
        groups = cache.get(key)
        if groups is None:
            groups = cache[key] = find_groups(ss, self)
        return groups

    def stmts(self, ss: list[A.Stmt]) -> None:
        if not self.mod.fuse_lanes or getattr(self.hooks, "lane_bank", None) is None:
            super().stmts(ss)
            return
        pos = 0
        for grp in self.lane_groups(ss):
            super().stmts(ss[pos:grp.start])
            if not FusedRun(self, grp).emit():
                super().stmts(ss[grp.start:grp.end])
            pos = grp.end
        super().stmts(ss[pos:])


class FusedRun:
    """The vector code of one ``LaneGroup``."""

    def __init__(self, g: LaneMixin, group: LaneGroup):
        self.g = g
        self.grp = group
        self.k = group.lanes
        self.vars: dict[int, str] = {}  # id(VarDecl) -> the variable holding its vector
        # (base key, first) -> the code of the run's fields as an operand / as a target
        self.fields: dict[tuple[tuple[object, ...], int], str] = {}
        self.targets: dict[tuple[tuple[object, ...], int], str] = {}
        self.banks: dict[tuple[str, ...], tuple[str, int]] = {}

    # ---------------------------------------------------------------- set-up

    def _storage(self) -> bool:
        """Find the arrays of every run; False if some run has none."""
        g = self.g
        lane_bank = g.hooks.lane_bank  # type: ignore[attr-defined]
        for arun in self.grp.array_runs():
            bank = lane_bank(g, arun.keys)
            if bank is None:
                return False
            self.banks[arun.keys] = bank
        slots: list[tuple[FieldRun, str, int, int]] = []
        for frun in self.grp.field_runs():
            slot = g.types.array_slot(frun.header, frun.first, self.k)
            if slot is None:
                return False
            slots.append((frun, *slot))
        bases: dict[tuple[object, ...], str] = {}
        for frun, attr, off, n in slots:
            base_key, first = frun.base_key, frun.first
            h = bases.get(base_key)
            if h is None:
                h = bases[base_key] = g.tmp("_lh")
                g.em(f"{h} = {g.expr(frun.base)}")
            whole = off == 0 and n == self.k
            self.fields[(base_key, first)] = f"{h}.{attr}" + ("" if whole else
                                                            f"[{off}:{off + self.k}]")
            self.targets[(base_key, first)] = f"{h}.{attr}[{off}:{off + self.k}]"
        return True

    def emit(self) -> bool:
        g = self.g
        with g.em.capture() as lines:
            g.em(f"# fused: {self.k} lanes of {self.grp.unit} statement(s)")
            if not self._storage():
                return False
            self.stmts(self.grp.template)
            self._results()
        g.em.extend(lines)
        return True

    def _results(self) -> None:
        """Locals written in the run take the last lane's value; the declarations of
        each lane's unit are declared with their lane's value."""
        g = self.g
        for did, decl in self.grp.private.items():
            name = g.lookup(decl)
            if name is not None:
                g.em(f"{name} = int({self.vars[did]}[-1])")
        if not self.grp.unit_decls[0]:
            return
        for j, d0 in enumerate(self.grp.unit_decls[0]):
            names = [g.declare(lane[j], lane[j].name) for lane in self.grp.unit_decls]
            g.em(f"{', '.join(names)}, = {self.vars[id(d0)]}.tolist()")

    # ------------------------------------------------------------ statements

    def stmts(self, ss: list[A.Stmt]) -> None:
        for s in ss:
            self.stmt(s)

    def stmt(self, s: A.Stmt) -> None:
        g = self.g
        if isinstance(s, A.Assign):
            self.store(s.target, self.expr(s.value))
        elif isinstance(s, A.CallStmt):
            access = g.array_access(s.call)
            assert access is not None
            run = self.grp.arrays[id(s.call)]
            bank, col = self.banks[run.keys]
            i = g.tmp("_li")
            g.em(f"{i} = {g.expr(access.index)}")
            cols = f"{col}:{col + self.k}"
            if access.write:
                v = self.expr(access.value)
                g.em(f"if {i} < {run.size}:")
                g.em(f"    {bank}[{i}, {cols}] = {self._convert(v, run.element)[0]}")
            else:
                self.store(access.value, (f"({bank}[{i}, {cols}] if {i} < {run.size} "
                                          f"else {self._zeros(run.element)})", "view",
                                          run.element))
        elif isinstance(s, A.Block):
            self.stmts(s.stmts)
        elif isinstance(s, A.DeclStmt):
            d = s.decl
            assert isinstance(d, A.VarDecl)
            t = d.type_ref.resolved
            assert t is not None
            v = self.expr(d.init) if d.init is not None else (self._zeros(t), "vec", t)
            self.bind(d, v, t)
        # Empty: nothing

    def store(self, target: A.Expr, v: Operand) -> None:
        g = self.g
        tt = g.ty(target)
        if isinstance(target, A.Name):
            self.bind(target.decl, v, tt)  # type: ignore[arg-type]
            return
        frun = self.grp.fields[id(target)]
        code, _kind, _t = self._convert(v, tt)
        g.em(f"{self.targets[(frun.base_key, frun.first)]} = {code}")

    def bind(self, decl: object, v: Operand, t: T.Type) -> None:
        """The lanes' values of local ``decl`` become ``v`` (a fresh array)."""
        code, kind, _t = self._vector(self._convert(v, t))
        if kind == "view":
            code = f"{code}.copy()"
        name = self.g.tmp("_lv")
        self.g.em(f"{name} = {code}")
        self.vars[id(decl)] = name

    # ----------------------------------------------------------- expressions

    def expr(self, e: A.Expr) -> Operand:
        g = self.g
        t = g.ty(e)
        if id(e) not in self.grp.dependent:
            return g.expr(e), "scalar", t
        if isinstance(e, A.Name):
            return self.vars[id(e.decl)], "vec", t
        if isinstance(e, A.Member):
            frun = self.grp.fields[id(e)]
            return self.fields[(frun.base_key, frun.first)], "view", t
        if isinstance(e, A.Binary):
            a = self._convert(self.expr(e.left), t)[0]
            if e.op in ("<<", ">>"):
                return f"({a} {e.op} {self.g.expr(e.right)})", "vec", t
            b = self._convert(self.expr(e.right), t)[0]
            return f"({a} {e.op} {b})", "vec", t
        if isinstance(e, A.Unary):
            a, kind, _ = self.expr(e.expr)
            if e.op == "+":
                return a, kind, t
            return f"({e.op}{a})", "vec", t
        if isinstance(e, A.Cast):
            return self._convert(self.expr(e.expr), t)
        if isinstance(e, A.Mux):  # the same condition in every lane: one branch runs
            c = g.expr(e.cond)
            branches = [self._convert(self.expr(x), t) for x in (e.then, e.other)]
            (a, ka, _), (b, kb, _) = (self._vector(v) for v in branches)
            return f"({a} if {c} else {b})", "view" if "view" in (ka, kb) else "vec", t
        raise AssertionError(f"no vector form for {type(e).__name__}")

    def _vector(self, v: Operand) -> Operand:
        """``v`` as an array (a scalar repeated in every lane)."""
        code, kind, t = v
        if kind != "scalar":
            return v
        self.g.mod.globals["_np_full"] = np.full
        return f"_np_full({self.k}, {code}, {self.g.types.dtype_name(t)})", "vec", t

    def _convert(self, v: Operand, to: T.Type) -> Operand:
        """``v`` as a value of type ``to`` (both bit<W>/int<W> of vector widths, or a
        scalar of any integer type)."""
        code, kind, t = v
        if kind == "scalar":
            if isinstance(t, T.InfInt):
                return self.g.wrap(code, to), kind, to
            return self.g.convert(code, t, to, A.Empty(A.NOWHERE)), kind, to
        if t == to:
            return v
        return f"{code}.astype({self.g.types.dtype_name(to)})", "vec", to

    def _zeros(self, t: T.Type | None) -> str:
        """A read-only vector of K zeros of type ``t``."""
        assert t is not None
        dt = self.g.types.dtype_name(t)
        name = f"_LZ{dt}_{self.k}"
        if name not in self.g.mod.globals:
            z = np.zeros(self.k, self.g.types.globals[dt])
            z.flags.writeable = False
            self.g.mod.globals[name] = z
        return name


# ------------------------------------------------------------ storage planning


def _lists(s: A.Stmt | None) -> Iterator[list[A.Stmt]]:
    """The statement lists nested in ``s``."""
    if isinstance(s, A.Block):
        yield s.stmts
    elif isinstance(s, A.If):
        yield from _lists(s.then)
        yield from _lists(s.other)
    elif isinstance(s, A.Switch):
        for c in s.cases:
            yield from _lists(c.body)
    elif isinstance(s, (A.For, A.ForIn)):
        yield from _lists(s.body)


def plan_lane_storage(gens: list[tuple[LaneMixin, BlockInstance]]) -> None:
    """Find the fusable runs of every block (a code generator per block) and lay out
    their storage: header arrays in the types, extern banks in the architecture."""
    field_runs: list[tuple[FieldRun, int]] = []
    array_runs: list[ArrayRun] = []
    for g, bi in gens:
        decl = bi.decl
        todo: list[list[A.Stmt]] = []
        if isinstance(decl, A.ControlDecl):
            todo.append(decl.body.stmts)
            todo += [d.body.stmts for d in decl.locals if isinstance(d, A.ActionDecl)]
        else:
            todo += [st.stmts for st in decl.states]
        while todo:
            ss = todo.pop()
            groups = g.lane_groups(ss)
            inside = {i for grp in groups for i in range(grp.start, grp.end)}
            for grp in groups:
                field_runs += [(r, grp.lanes) for r in grp.field_runs()]
                array_runs += grp.array_runs()
            for i, s in enumerate(ss):
                if i not in inside:
                    todo += _lists(s)
    if not field_runs and not array_runs:
        return
    types = gens[0][0].types
    for frun, k in field_runs:
        types.plan_array(frun.header, frun.first, k)
    prepare = getattr(gens[0][0].hooks, "prepare_lane_banks", None)
    if prepare is not None:
        prepare(list(dict.fromkeys(r.keys for r in array_runs)))
