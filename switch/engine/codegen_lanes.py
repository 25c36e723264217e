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
- a value read from storage is kept as a view of it unless the storage is written
  while the value may still be read (then it is copied); a local written in the run
  ends with the last lane's value, unless nothing outside the run refers to it;
- a store into a run of header fields that fills the header's array replaces the
  array (a local's vector becomes read-only, as a shared array must be: see
  ``switch.engine.layout``); a store into part of an array writes it in place, after
  copying it if it is shared;
- an ``if`` runs the fused code of the branch its condition, the same in every lane,
  picks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from switch.engine.codegen_stmt import StmtMixin
from switch.engine.lanes import (
    COMPARE_OPS,
    LOGIC_OPS,
    ArrayAccess,
    ArrayRun,
    FieldRun,
    LaneGroup,
    find_groups,
)
from switch.engine.layout import strip
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


@dataclass(frozen=True)
class Operand:
    """A value of the lanes in the fused code. ``kind`` says what ``code`` is:

    - ``scalar``: a Python int (or bool), the same in every lane;
    - ``fresh``: a new array that nothing else refers to;
    - ``vec``: the array of a local's variable (never written in place; it may be
      shared with a header once stored there, and is then read-only);
    - ``view``: a view of storage (``storage``: a register bank or a header's array),
      which changes when that storage is written.
    """

    code: str
    kind: str
    type: T.Type
    storage: frozenset[str] = frozenset()
    roots: frozenset[str] = frozenset()  # vec: the variables whose array it may be


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
    """The vector code of one ``LaneGroup``.

    It is generated twice. The first pass only watches: which variables bound to a
    view of storage are read after that storage was written (those bindings must
    copy; the others keep the view), and nothing of it is kept. The second pass
    writes the code."""

    def __init__(self, g: LaneMixin, group: LaneGroup):
        self.g = g
        self.grp = group
        self.k = group.lanes
        self.vars: dict[int, str] = {}  # id(VarDecl) -> the variable holding its vector
        # (base key, first) -> the code of the run's fields as an operand, the code of
        # the array holding them, their offset in it and whether they fill it
        self.fields: dict[tuple[tuple[object, ...], int], tuple[str, str, int, bool]] = {}
        self.banks: dict[tuple[str, ...], tuple[str, int]] = {}
        self.dead = _dead_after(g, group)  # ids of locals nothing reads after the run
        # copy analysis: variable -> (storage it views, binding sites), the variables
        # whose storage was written since, the binding sites that must copy
        self.watching = True
        self.site = 0
        self.views: dict[str, tuple[frozenset[str], frozenset[int]]] = {}
        self.stale: set[str] = set()
        self.copy_sites: set[int] = set()
        # sharing analysis: a local's array that stores give to two headers must be
        # marked read-only (within the run nothing writes into a header's whole array,
        # and after it no local is read): variable -> the variables whose arrays it
        # may hold, array -> the stores that gave it away, the stores that must mark it
        self.store_site = 0
        self.roots: dict[str, frozenset[str]] = {}
        self.given: dict[str, set[int]] = {}
        self.mark_sites: set[int] = set()

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
            array = f"{h}.{attr}"
            self.fields[(base_key, first)] = (
                array + ("" if whole else f"[{off}:{off + self.k}]"), array, off, whole)
        return True

    def emit(self) -> bool:
        g = self.g
        with g.em.capture() as lines:
            g.em(f"# fused: {self.k} lanes of {self.grp.unit} statement(s)")
            if not self._storage():
                return False
            with g.em.capture(), g.scope():
                self.stmts(self.grp.template)
                self._results()
            self.watching = False
            self.site = self.store_site = 0
            self.vars = {}
            self.stmts(self.grp.template)
            self._results()
        g.em.extend(lines)
        return True

    def _results(self) -> None:
        """Locals written in the run take the last lane's value; the declarations of
        each lane's unit are declared with their lane's value (unless nothing reads
        them after the run)."""
        g = self.g
        for did, decl in self.grp.private.items():
            name = g.lookup(decl)
            if name is not None and did in self.vars and did not in self.dead:
                g.em(f"{name} = int({self.use(self.vars[did])}[-1])")
        for j, d0 in enumerate(self.grp.unit_decls[0]):
            decls = [lane[j] for lane in self.grp.unit_decls]
            names = [g.declare(d, d.name) for d in decls]
            if not all(id(d) in self.dead for d in decls):
                g.em(f"{', '.join(names)}, = {self.use(self.vars[id(d0)])}.tolist()")

    # --------------------------------------------------------- copy analysis

    def use(self, var: str) -> str:
        """``var`` is read here."""
        if self.watching and var in self.stale:
            self.copy_sites |= self.views[var][1]
        return var

    def wrote(self, storage: str) -> None:
        """``storage`` is written in place here."""
        if self.watching:
            self.stale |= {v for v, (st, _) in self.views.items() if storage in st}

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
            whole = col == 0 and g.mod.globals[bank].shape[1] == self.k
            row = f"{bank}[{i}]" if whole else f"{bank}[{i}, {col}:{col + self.k}]"
            if access.write:
                v = self._convert(self.expr(access.value), run.element)
                g.em(f"if {i} < {run.size}:")
                g.em(f"    {row} = {v.code}")
                self.wrote(bank)
            else:
                self.store(access.value, Operand(
                    f"({row} if {i} < {run.size} else {self._zeros(run.element)})", "view",
                    run.element, frozenset([bank])))
        elif isinstance(s, A.Block):
            self.stmts(s.stmts)
        elif isinstance(s, A.If):
            self._if(s)
        elif isinstance(s, A.DeclStmt):
            d = s.decl
            assert isinstance(d, A.VarDecl)
            t = d.type_ref.resolved
            assert t is not None
            v = self.expr(d.init) if d.init is not None else Operand(self._zeros(t), "view", t)
            self.bind(d, v, t)
        # Empty: nothing

    def _if(self, s: A.If) -> None:
        """Both lanes' branches under the one condition. A local whose vector each
        branch binds to another variable gets one variable afterwards; a private
        local that one branch alone writes takes its last lane's value there (the
        analysis saw to it that nothing reads it after the ``if``)."""
        g = self.g
        cond = g.cond(s.cond)
        before = dict(self.vars)
        branches: list[tuple[list[str], dict[int, str]]] = []
        g.em.ind += 1
        for branch in (s.then, s.other):
            self.vars = dict(before)
            with g.em.capture() as lines:
                if branch is not None:
                    self.stmt(branch)
            branches.append((lines, self.vars))
        (then_lines, then_vars), (else_lines, else_vars) = branches
        merged: dict[int, str] = {}
        pad = "    " * g.em.ind
        for did in dict.fromkeys([*then_vars, *else_vars]):
            a, b = then_vars.get(did), else_vars.get(did)
            if a is not None and a == b:
                merged[did] = a
            elif a is not None and b is not None:
                name = g.tmp("_lv")
                then_lines.append(f"{pad}{name} = {a}")
                else_lines.append(f"{pad}{name} = {b}")
                merged[did] = name
                self.roots[name] = self.roots.get(a, frozenset()) | self.roots.get(b, frozenset())
                va, vb = self.views.get(a), self.views.get(b)
                if va is not None or vb is not None:
                    self.views[name] = (
                        (va[0] if va else frozenset()) | (vb[0] if vb else frozenset()),
                        (va[1] if va else frozenset()) | (vb[1] if vb else frozenset()))
                    if a in self.stale or b in self.stale:
                        self.stale.add(name)
            else:
                decl = self.grp.private.get(did)
                local = g.lookup(decl) if decl is not None else None
                if local is not None and did not in self.dead:  # not branch-scoped
                    lines = then_lines if a is not None else else_lines
                    lines.append(f"{pad}{local} = int({self.use(a or b or '')}[-1])")
        g.em.ind -= 1
        self.vars = merged
        g.em(f"if {cond}:")
        g.em.extend(then_lines or [f"{pad}pass"])
        if else_lines:
            g.em("else:")
            g.em.extend(else_lines)

    def store(self, target: A.Expr, v: Operand) -> None:
        g = self.g
        tt = g.ty(target)
        if isinstance(target, A.Name):
            self.bind(target.decl, v, tt)
            return
        frun = self.grp.fields[id(target)]
        _code, array, off, whole = self.fields[(frun.base_key, frun.first)]
        v = self._convert(v, tt)
        if whole:  # the array is replaced (copied on write: see switch.engine.layout)
            self.store_site += 1
            if v.kind == "scalar":
                v = self._vector(v)
            elif v.kind == "view":  # copied in the wire's byte order, for the deparser
                be = g.types.dtype_name(tt, big_endian=True)
                v = Operand(f"{v.code}.astype({be})", "fresh", tt)
            elif v.kind == "vec":
                self._give(v.roots)
                if self.store_site in self.mark_sites:
                    g.em(f"{v.code}.flags.writeable = False")
            g.em(f"{array} = {v.code}")
            return
        a = g.tmp("_la")
        g.em(f"{a} = {array}")
        g.em(f"if not {a}.flags.writeable:")
        g.em(f"    {a} = {array} = {a}.copy()")
        g.em(f"{a}[{off}:{off + self.k}] = {v.code}")
        self.wrote(array)

    def _give(self, roots: frozenset[str]) -> None:
        """A store gives the arrays of ``roots`` to a header (a second header sharing
        one makes every store of it mark it)."""
        if not self.watching:
            return
        for root in roots:
            given = self.given.setdefault(root, set())
            given.add(self.store_site)
            if len(given) > 1:
                self.mark_sites |= given

    def bind(self, decl: object, v: Operand, t: T.Type) -> None:
        """The lanes' values of local ``decl`` become ``v``: a view is copied unless
        the copy analysis found that nothing reads it after its storage changes."""
        v = self._vector(self._convert(v, t))
        name = self.g.tmp("_lv")
        self.site += 1
        code = v.code
        if v.kind == "view":
            if self.watching:
                self.views[name] = (v.storage, frozenset([self.site]))
            elif self.site in self.copy_sites:
                code = f"{code}.copy()"
        self.roots[name] = v.roots if v.kind == "vec" else frozenset([name])
        self.g.em(f"{name} = {code}")
        self.vars[id(decl)] = name

    # ----------------------------------------------------------- expressions

    def expr(self, e: A.Expr) -> Operand:
        g = self.g
        t = g.ty(e)
        if id(e) not in self.grp.dependent:
            return Operand(g.expr(e), "scalar", t)
        if isinstance(e, A.Name):
            var = self.use(self.vars[id(e.decl)])
            view = self.views.get(var)
            if view is not None and not self.watching and not view[1] & self.copy_sites:
                return Operand(var, "view", t, view[0])
            return Operand(var, "vec", t, view[0] if view else frozenset(),
                           self.roots.get(var, frozenset([var])))
        if isinstance(e, A.Member):
            frun = self.grp.fields[id(e)]
            code, array, _off, _whole = self.fields[(frun.base_key, frun.first)]
            return Operand(code, "view", t, frozenset([array]))
        if isinstance(e, A.Binary):
            if e.op in COMPARE_OPS:
                left, right = g.ty(e.left), g.ty(e.right)
                ot = right if isinstance(left, T.InfInt) else left
                a = self._convert(self.expr(e.left), ot).code
                b = self._convert(self.expr(e.right), ot).code
                return Operand(f"({a} {e.op} {b})", "fresh", t)
            if e.op in LOGIC_OPS:  # booleans, scalar or vectors: & and | are exact
                a, b = self.expr(e.left).code, self.expr(e.right).code
                return Operand(f"({a} {'&' if e.op == '&&' else '|'} {b})", "fresh", t)
            a = self._convert(self.expr(e.left), t).code
            if e.op in ("<<", ">>"):
                return Operand(f"({a} {e.op} {self.g.expr(e.right)})", "fresh", t)
            b = self._convert(self.expr(e.right), t).code
            if e.op in ("|+|", "|-|"):
                return self._saturating(e.op, a, b, t)
            return Operand(f"({a} {e.op} {b})", "fresh", t)
        if isinstance(e, A.Unary):
            v = self.expr(e.expr)
            if e.op == "+":
                return v
            if e.op == "!":  # a vector of booleans
                return Operand(f"(~{v.code})", "fresh", t)
            return Operand(f"({e.op}{v.code})", "fresh", t)
        if isinstance(e, A.Cast):
            return self._convert(self.expr(e.expr), t)
        if isinstance(e, A.Mux) and id(e.cond) in self.grp.dependent:
            # each lane picks its side: both are computed (they have no side effects)
            c = self.expr(e.cond).code
            then, other = (self._convert(self.expr(x), t) for x in (e.then, e.other))
            g.mod.globals["_np_where"] = np.where
            return Operand(f"_np_where({c}, {then.code}, {other.code})", "fresh", t)
        if isinstance(e, A.Mux):  # the same condition in every lane: one branch runs
            cond = g.expr(e.cond)
            then, other = (self._vector(self._convert(self.expr(x), t))
                           for x in (e.then, e.other))
            kinds = (then.kind, other.kind)
            kind = "view" if "view" in kinds else "vec" if "vec" in kinds else "fresh"
            return Operand(f"({then.code} if {cond} else {other.code})", kind, t,
                           then.storage | other.storage, then.roots | other.roots)
        raise AssertionError(f"no vector form for {type(e).__name__}")

    def _saturating(self, op: str, a: str, b: str, t: T.Type) -> Operand:
        """``a |+| b`` or ``a |-| b`` lane by lane: computed in 64 bits and clipped to
        the type's range, or for 64-bit types, the wrapped result where it did not
        overflow and the bound it passed where it did."""
        g = self.g
        st = strip(t)
        assert isinstance(st, T.Bits)
        w, signed = st.width, st.signed
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
        sign = "+" if op == "|+|" else "-"
        g.mod.globals["_np_where"] = np.where
        if w < 64:
            g.mod.globals["_np_clip"] = np.clip
            g.mod.globals["_np_asi64"] = _as_int64
            return Operand(f"_np_clip(_np_asi64({a}) {sign} {b}, {lo}, {hi})"
                           f".astype({g.types.dtype_name(t)})", "fresh", t)
        x, y, r = g.tmp("_sa"), g.tmp("_sb"), g.tmp("_sr")
        g.em(f"{x} = {a}")
        g.em(f"{y} = {b}")
        g.em(f"{r} = {x} {sign} {y}")
        if not signed:
            over = f"{r} < {x}" if sign == "+" else f"{x} < {y}"
            bound = hi if sign == "+" else lo
            return Operand(f"_np_where({over}, {bound}, {r})", "fresh", t)
        over = f"(({x} ^ {r}) & ({y} ^ {r})) < 0" if sign == "+" else \
            f"(({x} ^ {y}) & ({x} ^ {r})) < 0"
        return Operand(f"_np_where({over}, _np_where({x} < 0, {lo}, {hi}), {r})", "fresh", t)

    def _vector(self, v: Operand) -> Operand:
        """``v`` as an array (a scalar repeated in every lane)."""
        if v.kind != "scalar":
            return v
        self.g.mod.globals["_np_full"] = np.full
        return Operand(f"_np_full({self.k}, {v.code}, {self.g.types.dtype_name(v.type)})",
                       "fresh", v.type)

    def _convert(self, v: Operand, to: T.Type) -> Operand:
        """``v`` as a value of type ``to`` (both bit<W>/int<W> of vector widths, or a
        scalar of any integer type)."""
        if v.kind == "scalar":
            if isinstance(v.type, T.InfInt):
                return Operand(self.g.wrap(v.code, to), "scalar", to)
            return Operand(self.g.convert(v.code, v.type, to, A.Empty(A.NOWHERE)), "scalar", to)
        if v.type == to:
            return v
        return Operand(f"{v.code}.astype({self.g.types.dtype_name(to)})", "fresh", to)

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


def _as_int64(a: Any) -> Any:
    """``a`` (an array of lanes, or a Python int) as 64-bit integers."""
    return a.astype(np.int64) if isinstance(a, np.ndarray) else np.int64(a)


def _references(node: object, out: Counter[int]) -> None:
    """Count, by declaration, the names that ``node`` and its children refer to."""
    if isinstance(node, A.Name):
        out[id(node.decl)] += 1
        return
    if isinstance(node, A.CallTarget):  # its declaration is elsewhere; its receiver here
        receiver = getattr(node, "receiver", None)
        if receiver is not None:
            _references(receiver, out)
        return
    for slot in getattr(node, "__slots__", ()):
        child = getattr(node, slot, None)
        for c in child if isinstance(child, (list, tuple)) else (child,):
            if isinstance(c, (A.Node, A.CallTarget)):
                _references(c, out)


def _dead_after(g: LaneMixin, group: LaneGroup) -> set[int]:
    """The locals the run writes that nothing outside the run refers to, so their
    values after the run are never read."""
    if g.block is None:
        return set()
    total = g.mod.lane_references.get(g.block.fqn)
    if total is None:
        total = g.mod.lane_references[g.block.fqn] = Counter()
        _references(g.block.decl, total)
    inside: Counter[int] = Counter()
    for s in group.stmts:
        _references(s, inside)
    decls = [*group.private, *(id(d) for lane in group.unit_decls for d in lane)]
    return {d for d in decls if total[d] == inside[d]}


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
