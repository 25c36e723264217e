"""Lane fusion, the analysis: runs of statements that repeat one template over K
parallel lanes, found on the IR so that code generation can run the K copies as one
vectorised operation (``codegen_lanes`` emits it).

The typical run comes from a macro expanded once per lane: K register arrays read,
added to and written at one index, with one field of a header per lane::

    r_0.read(x, cell); x = x + hdr.v.f0; r_0.write(cell, x); hdr.v.f0 = x;
    r_1.read(x, cell); x = x + hdr.v.f1; r_1.write(cell, x); hdr.v.f1 = x;
    ...

A run of statements qualifies when all of this holds, and is otherwise left to the
plain code generator:

- it is K >= ``MIN_LANES`` consecutive units of L statements, every unit the same as
  the first except for its *leaves*: the extern array a call reads or writes (a
  register instance) and the field a member of a header names;
- each leaf position either names the same thing in every unit (invariant) or steps
  through the lanes: K distinct extern arrays of one element type and size, or the
  consecutive fields i0, i0 + 1, ..., i0 + K - 1 of one header of one type;
- the units are independent: no unit reads or writes what another one writes. A
  local variable written in the run must be written before it is read, in each unit
  (it is then private to each unit and holds the last unit's value afterwards);
  invariant fields and extern arrays are only read; two headers of one type reached
  from different roots (which might be one object) are not both used when one of
  them is written;
- every value that differs between lanes has a ``bit<W>``/``int<W>`` type with W in
  8, 16, 32 or 64 and is computed with ``+ - * & | ^ ~``, unary ``-``, the saturating
  ``|+| |-|``, shifts by a constant below W, casts between such types and ``c ? a :
  b``: numpy's fixed-width integer arithmetic wraps exactly as P4's does there (and
  saturation is computed wider, or from the wrapped result for 64 bits). A condition
  ``c`` may differ between lanes too: a comparison of such values, ``&& || !`` of
  comparisons (each lane picks ``a`` or ``b`` for itself; both are computed, having no
  side effects). The array indexes are invariant;
- an ``if``/``else`` in a unit has an invariant condition (``isValid()`` may appear in
  it), so every lane takes the same branch: SwitchML's "the first contribution
  replaces, later ones add" written one lane at a time. A local written on one path
  through such ``if`` statements and not the other is not read afterwards within the
  unit.

Statements are compared by a canonical form (nested tuples) computed once each, so
the search is linear in the number of statements for every unit length tried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T

MIN_LANES = 4  # fewer lanes cost more in numpy calls than they save
MAX_UNIT = 16  # statements per lane
VECTOR_WIDTHS = (8, 16, 32, 64)
LANE_OPS = ("+", "-", "*", "&", "|", "^", "|+|", "|-|")
SHIFT_OPS = ("<<", ">>")
COMPARE_OPS = ("==", "!=", "<", ">", "<=", ">=")
LOGIC_OPS = ("&&", "||")


@dataclass(frozen=True)
class ArrayAccess:
    """A call that reads or writes one element of an extern array of scalars (a
    v1model ``register``), as the architecture describes it: an element read past the
    end is 0 and a write there is lost."""

    key: str  # the extern instance's fqn
    size: int
    element: T.Type
    write: bool
    index: A.Expr
    value: A.Expr  # the value written, or the l-value the element is read into


class LaneContext(Protocol):
    """What the analysis asks of the code generator of the block."""

    def ty(self, e: A.Expr) -> T.Type:
        ...

    def array_access(self, call: A.Call) -> ArrayAccess | None:
        ...


def vector_type(t: T.Type | None) -> bool:
    """Whether values of ``t`` can step through lanes (numpy's wrapping dtypes)."""
    t = strip(t) if t is not None else None
    return isinstance(t, T.Bits) and t.width in VECTOR_WIDTHS


# ----------------------------------------------------------------------- leaves


@dataclass(eq=False)
class FieldLeaf:
    """``base.name``, a scalar field of a header."""

    node: A.Member
    base: A.Expr
    base_key: tuple[object, ...]
    root: object  # the declaration the base path starts from
    header: T.Header
    name: str
    index: int  # position of the field in the header
    type: T.Type


@dataclass(eq=False)
class ArrayLeaf:
    """The extern array an array-access call acts on."""

    node: A.Call
    access: ArrayAccess


Leaf = FieldLeaf | ArrayLeaf


@dataclass(frozen=True)
class FieldRun:
    """K consecutive fields of a header, one per lane (lane k: field ``first + k``)."""

    header: T.Header
    base: A.Expr  # lane 0's base expression
    base_key: tuple[object, ...]
    root: object
    first: int
    type: T.Type


@dataclass(frozen=True)
class ArrayRun:
    """K extern arrays, one per lane, in lane order."""

    keys: tuple[str, ...]
    size: int
    element: T.Type


@dataclass(eq=False)
class LaneGroup:
    """A fusable run: ``stmts[start:start + unit * lanes]`` of a statement list."""

    start: int
    unit: int
    lanes: int
    template: list[A.Stmt]  # lane 0's statements
    fields: dict[int, FieldRun]  # id(lane-0 Member) -> its run (varying fields only)
    arrays: dict[int, ArrayRun]  # id(lane-0 Call) -> its arrays
    private: dict[int, A.VarDecl]  # locals declared outside the run, private per lane
    unit_decls: list[list[A.VarDecl]]  # per lane: the unit's top-level declarations
    stmts: list[A.Stmt] = field(default_factory=list)  # every lane's statements
    dependent: set[int] = field(default_factory=set)  # ids of lane-varying nodes

    @property
    def end(self) -> int:
        return self.start + self.unit * self.lanes

    def field_runs(self) -> list[FieldRun]:
        return list({(r.base_key, r.first): r for r in self.fields.values()}.values())

    def array_runs(self) -> list[ArrayRun]:
        return list({r.keys: r for r in self.arrays.values()}.values())


class NotFusable(Exception):
    """A statement or run that the fusion leaves to the plain code generator."""


# -------------------------------------------------------------- canonical forms


@dataclass(eq=False)
class StmtForm:
    canon: tuple[object, ...]
    leaves: list[Leaf]
    declares: A.VarDecl | None  # a top-level declaration statement's variable
    refs: frozenset[int]  # ids of the declarations it names


class Canonicalizer:
    """The canonical form of one statement: its structure with every leaf left out
    (leaves are listed in evaluation order) and the variables it declares numbered
    in order, so that two lanes' statements compare equal."""

    def __init__(self, ctx: LaneContext):
        self.ctx = ctx
        self.leaves: list[Leaf] = []
        self.inner: dict[int, int] = {}
        self.refs: set[int] = set()

    def form(self, s: A.Stmt) -> StmtForm | None:
        self.leaves, self.inner, self.refs = [], {}, set()
        try:
            declares = None
            if isinstance(s, A.DeclStmt):
                canon = self._decl(s.decl)
                assert isinstance(s.decl, A.VarDecl)
                declares = s.decl
            else:
                canon = self.stmt(s)
        except NotFusable:
            return None
        return StmtForm(canon, self.leaves, declares, frozenset(self.refs))

    # ---------------------------------------------------------- statements

    def stmt(self, s: A.Stmt) -> tuple[object, ...]:
        if isinstance(s, A.Assign):
            value = self.expr(s.value)
            return ("=", self.expr(s.target), value)
        if isinstance(s, A.CallStmt):
            access = self.ctx.array_access(s.call)
            if access is None:
                raise NotFusable
            t = s.call.target
            assert isinstance(t, A.CallExternMethod)
            self.leaves.append(ArrayLeaf(s.call, access))
            return ("A", t.extern, t.method, access.write, self.expr(access.index),
                    self.expr(access.value))
        if isinstance(s, A.Block):
            return ("{", *[self.stmt(x) for x in s.stmts])
        if isinstance(s, A.If):
            cond = self.expr(s.cond)
            then = self.stmt(s.then)
            return ("if", cond, then, self.stmt(s.other) if s.other is not None else None)
        if isinstance(s, A.DeclStmt):
            return self._decl(s.decl, inner=True)
        if isinstance(s, A.Empty):
            return (";",)
        raise NotFusable

    def _decl(self, d: A.Declaration, inner: bool = False) -> tuple[object, ...]:
        if not isinstance(d, A.VarDecl):
            raise NotFusable
        t = d.type_ref.resolved
        if not vector_type(t):
            raise NotFusable
        init = self.expr(d.init) if d.init is not None else None
        if inner:
            self.inner[id(d)] = len(self.inner)
        return ("D", strip(t), init)  # type: ignore[arg-type]

    # --------------------------------------------------------- expressions

    def expr(self, e: A.Expr) -> tuple[object, ...]:
        ty = self.ctx.ty(e)
        if isinstance(e, A.IntLit):
            return ("i", e.value, ty)
        if isinstance(e, A.BoolLit):
            return ("b", e.value)
        if isinstance(e, A.EnumValue):
            return ("e", e.enum, e.member, ty)
        if isinstance(e, A.Name):
            d = e.decl
            if not isinstance(d, (A.VarDecl, A.Param, A.ConstDecl)):
                raise NotFusable
            k = self.inner.get(id(d))
            if k is not None:
                return ("l", k)
            self.refs.add(id(d))
            return ("n", id(d), ty)
        if isinstance(e, A.Member):
            base = self.expr(e.expr)
            bt = self.ctx.ty(e.expr)
            if isinstance(bt, T.Header) and not isinstance(ty, (T.Header, T.Struct,
                                                                T.HeaderUnion, T.Stack)):
                self.leaves.append(self._field_leaf(e, bt, base, ty))
                return ("f", base, ty)
            if not isinstance(bt, (T.Header, T.Struct, T.HeaderUnion)):
                raise NotFusable  # stack members, table results
            return ("m", base, e.name, ty)
        if isinstance(e, A.Index):
            if not isinstance(e.index, A.IntLit) or not isinstance(self.ctx.ty(e.expr), T.Stack):
                raise NotFusable
            return ("x", self.expr(e.expr), e.index.value)
        if isinstance(e, A.Binary):
            if e.op in ("&&&", ".."):
                raise NotFusable
            return ("B", e.op, ty, self.expr(e.left), self.expr(e.right))
        if isinstance(e, A.Unary):
            return ("U", e.op, ty, self.expr(e.expr))
        if isinstance(e, A.Cast):
            return ("C", ty, self.expr(e.expr))
        if isinstance(e, A.Slice):
            if not (isinstance(e.hi, A.IntLit) and isinstance(e.lo, A.IntLit)):
                raise NotFusable
            return ("S", self.expr(e.expr), e.hi.value, e.lo.value)
        if isinstance(e, A.Mux):
            return ("?", ty, self.expr(e.cond), self.expr(e.then), self.expr(e.other))
        if isinstance(e, A.Call) and isinstance(e.target, A.CallBuiltin) \
                and e.target.method == "isValid" and not e.args:
            return ("V", self.expr(e.target.receiver))
        raise NotFusable  # other calls, initialisers, ...

    def _field_leaf(self, e: A.Member, ht: T.Header, base: tuple[object, ...],
                    ty: T.Type) -> FieldLeaf:
        names = [f.name for f in ht.fields]
        if e.name not in names:
            raise NotFusable
        root = _root(e.expr)
        if root is None:
            raise NotFusable
        return FieldLeaf(e, e.expr, base, root, ht, e.name, names.index(e.name), ty)


def _root(e: A.Expr) -> object | None:
    while isinstance(e, (A.Member, A.Index)):
        e = e.expr
    return e.decl if isinstance(e, A.Name) else None


def _renumber(canon: object, unit: dict[int, int]) -> object:
    """``canon`` with the names of the unit's own declarations numbered."""
    if isinstance(canon, tuple):
        if len(canon) == 3 and canon[0] == "n" and canon[1] in unit:
            return ("u", unit[canon[1]])  # type: ignore[index]
        return tuple(_renumber(c, unit) for c in canon)
    return canon


# ------------------------------------------------------------------- search


def find_groups(stmts: Sequence[A.Stmt], ctx: LaneContext,
                min_lanes: int = MIN_LANES) -> list[LaneGroup]:
    """The fusable runs of ``stmts``, in order and not overlapping."""
    n = len(stmts)
    if n < min_lanes:
        return []
    canon = Canonicalizer(ctx)
    forms = [canon.form(s) for s in stmts]
    groups: list[LaneGroup] = []
    i = 0
    while i + min_lanes <= n:
        best: LaneGroup | None = None
        for unit in range(1, min(MAX_UNIT, (n - i) // min_lanes) + 1):
            g = _group_at(stmts, forms, i, unit, ctx, min_lanes)
            if g is not None and (best is None or g.unit * g.lanes > best.unit * best.lanes):
                best = g
        if best is None:
            i += 1
            continue
        groups.append(best)
        i = best.end
    return groups


def _unit_key(forms: list[StmtForm | None], start: int, unit: int
              ) -> tuple[object, ...] | None:
    sl = forms[start:start + unit]
    if len(sl) < unit or any(f is None for f in sl):
        return None
    decls = {id(f.declares): k for k, f in enumerate(sl)  # type: ignore[union-attr]
             if f.declares is not None}  # type: ignore[union-attr]
    if not decls:
        return tuple(f.canon for f in sl)  # type: ignore[union-attr]
    return tuple(_renumber(f.canon, decls) for f in sl)  # type: ignore[union-attr]


def _leaves(forms: list[StmtForm | None], start: int, unit: int) -> list[Leaf]:
    out: list[Leaf] = []
    for f in forms[start:start + unit]:
        assert f is not None
        out += f.leaves
    return out


def _steps(first: Leaf, prev: Leaf, leaf: Leaf, lane: int, invariant: bool | None) -> bool | None:
    """Whether ``leaf`` (lane ``lane``) continues its position: None if it cannot,
    else whether the position is invariant."""
    if isinstance(first, FieldLeaf):
        assert isinstance(leaf, FieldLeaf) and isinstance(prev, FieldLeaf)
        if leaf.base_key != first.base_key or leaf.header is not first.header:
            return None
        same = leaf.index == first.index
        if invariant is None:
            invariant = same
        if invariant:
            return True if same else None
        ok = leaf.index == first.index + lane and vector_type(leaf.type) \
            and strip(leaf.type) == strip(first.type)
        return False if ok else None
    assert isinstance(first, ArrayLeaf) and isinstance(leaf, ArrayLeaf)
    a, b = first.access, leaf.access
    if a.size != b.size or strip(a.element) != strip(b.element):
        return None
    if b.key == a.key:
        return None  # the same array in every lane is not supported (nor needed)
    return False


def _group_at(stmts: Sequence[A.Stmt], forms: list[StmtForm | None], start: int, unit: int,
              ctx: LaneContext, min_lanes: int) -> LaneGroup | None:
    key0 = _unit_key(forms, start, unit)
    if key0 is None:
        return None
    if _unit_key(forms, start + unit, unit) != key0:
        return None
    first = _leaves(forms, start, unit)
    modes: list[bool | None] = [None] * len(first)
    seen_arrays: list[set[str]] = [{lf.access.key} if isinstance(lf, ArrayLeaf) else set()
                                   for lf in first]
    lanes_leaves = [first]
    lanes = 1
    n = len(stmts)
    while start + (lanes + 1) * unit <= n:
        s = start + lanes * unit
        if _unit_key(forms, s, unit) != key0:
            break
        leaves = _leaves(forms, s, unit)
        new_modes = list(modes)
        ok = True
        for p, (lf0, lf) in enumerate(zip(first, leaves, strict=True)):
            m = _steps(lf0, lanes_leaves[-1][p], lf, lanes, modes[p])
            if m is None or (isinstance(lf, ArrayLeaf) and lf.access.key in seen_arrays[p]):
                ok = False
                break
            new_modes[p] = m
        if not ok:
            break
        for p, lf in enumerate(leaves):
            if isinstance(lf, ArrayLeaf):
                seen_arrays[p].add(lf.access.key)
        modes = new_modes
        lanes_leaves.append(leaves)
        lanes += 1
    if lanes < min_lanes:
        return None
    try:
        return _check(stmts, forms, start, unit, lanes, lanes_leaves, modes, ctx)
    except NotFusable:
        return None


# ------------------------------------------------------------ the checks


def _check(stmts: Sequence[A.Stmt], forms: list[StmtForm | None], start: int, unit: int,
           lanes: int, lanes_leaves: list[list[Leaf]], modes: list[bool | None],
           ctx: LaneContext) -> LaneGroup:
    template = list(stmts[start:start + unit])
    fields: dict[int, FieldRun] = {}
    arrays: dict[int, ArrayRun] = {}
    invariant_fields: list[FieldLeaf] = []
    for p, lf in enumerate(lanes_leaves[0]):
        if isinstance(lf, FieldLeaf):
            if modes[p]:
                invariant_fields.append(lf)
            else:
                fields[id(lf.node)] = FieldRun(lf.header, lf.base, lf.base_key, lf.root,
                                               lf.index, strip(lf.type))
        else:
            keys = tuple(ll[p].access.key for ll in lanes_leaves)  # type: ignore[union-attr]
            arrays[id(lf.node)] = ArrayRun(keys, lf.access.size, strip(lf.access.element))
    if not fields and not arrays:
        raise NotFusable("the run touches no lane storage: numpy would only add calls")
    unit_decls = [[f.declares for f in forms[start + k * unit:start + (k + 1) * unit]
                   if f is not None and f.declares is not None] for k in range(lanes)]
    flow = _Flow(ctx, fields, arrays, {id(d) for d in unit_decls[0]})
    flow.run(template)
    group = LaneGroup(start, unit, lanes, template, fields, arrays, flow.private,
                      unit_decls, list(stmts[start:start + unit * lanes]), flow.dependent)
    _check_locations(group, invariant_fields, flow.written_runs)
    return group


def _check_locations(group: LaneGroup, invariant_fields: list[FieldLeaf],
                     written: set[tuple[tuple[object, ...], int]]) -> None:
    k = group.lanes
    runs = group.field_runs()
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            if a.base_key == b.base_key and a.first < b.first + k and b.first < a.first + k:
                raise NotFusable  # overlapping runs: lanes would see each other's fields
    for lf in invariant_fields:
        for r in runs:
            if (r.base_key, r.first) in written and r.base_key == lf.base_key \
                    and r.first <= lf.index < r.first + k:
                raise NotFusable  # a field every lane reads and one lane writes
    bases: dict[tuple[object, ...], tuple[T.Header, object, bool]] = {}
    for r in runs:
        w = (r.base_key, r.first) in written
        h, root, w0 = bases.get(r.base_key, (r.header, r.root, False))
        bases[r.base_key] = (h, root, w0 or w)
    for lf in invariant_fields:
        bases.setdefault(lf.base_key, (lf.header, lf.root, False))
    items = list(bases.items())
    for i, (ka, (ha, ra, wa)) in enumerate(items):
        for kb, (hb, rb, wb) in items[i + 1:]:
            if ha is hb and ka != kb and ra is not rb and (wa or wb):
                raise NotFusable  # two roots that may be one object
    array_runs = group.array_runs()
    for i, ar in enumerate(array_runs):
        for br in array_runs[i + 1:]:
            if set(ar.keys) & set(br.keys):
                raise NotFusable  # one array in two lanes


class _Flow:
    """Walks lane 0's statements in evaluation order: which values differ between
    lanes, which locals are private to each lane, and whether every statement and
    every lane-varying expression has a vector form.

    An ``if`` whose condition is the same in every lane sends every lane down the same
    branch, so each branch is walked from the state before the ``if``; afterwards a
    local counts as written only if both branches wrote it, and one that only some
    paths wrote may not be read (it would hold this lane's value on one path and the
    value from before the run on the other)."""

    def __init__(self, ctx: LaneContext, fields: dict[int, FieldRun],
                 arrays: dict[int, ArrayRun], unit_decls: set[int]):
        self.ctx = ctx
        self.fields = fields
        self.arrays = arrays
        self.local: set[int] = set(unit_decls)  # declared in the unit: private anyway
        self.private: dict[int, A.VarDecl] = {}  # written on some path
        self.written: set[int] = set()  # private locals written on every path to here
        self.read_first: set[int] = set()
        self.dependent: set[int] = set()
        self.written_runs: set[tuple[tuple[object, ...], int]] = set()

    def run(self, stmts: list[A.Stmt]) -> None:
        for s in stmts:
            self.stmt(s)
        for d in self.private:
            if d in self.read_first:
                raise NotFusable  # a value carried from one lane to the next

    # ---------------------------------------------------------- statements

    def stmt(self, s: A.Stmt) -> None:
        if isinstance(s, A.Assign):
            self.expr(s.value)
            self.store(s.target, self.ctx.ty(s.value))
        elif isinstance(s, A.CallStmt):
            run = self.arrays[id(s.call)]
            access = self.ctx.array_access(s.call)
            assert access is not None
            if not vector_type(run.element):
                raise NotFusable
            if self.expr(access.index):
                raise NotFusable  # the index differs between lanes
            if access.write:
                self.expr(access.value)
            else:
                self.store(access.value, run.element)
        elif isinstance(s, A.Block):
            for x in s.stmts:
                self.stmt(x)
        elif isinstance(s, A.If):
            if self.expr(s.cond):
                raise NotFusable  # a condition that differs between lanes
            before = set(self.written)
            self.stmt(s.then)
            after_then, self.written = self.written, before
            if s.other is not None:
                self.stmt(s.other)
            self.written &= after_then
        elif isinstance(s, A.DeclStmt):
            d = s.decl
            assert isinstance(d, A.VarDecl)
            if d.init is not None:
                self.expr(d.init)
            self.local.add(id(d))
        elif not isinstance(s, A.Empty):
            raise NotFusable

    def store(self, target: A.Expr, value_type: T.Type) -> None:
        """``target`` is written with a lane-varying value: a private local or a
        field of a run."""
        if not vector_type(self.ctx.ty(target)):
            raise NotFusable
        if isinstance(target, A.Name) and isinstance(target.decl, A.VarDecl):
            d = target.decl
            if id(d) not in self.local:
                self.private.setdefault(id(d), d)  # type: ignore[arg-type]
                self.written.add(id(d))
            return
        run = self.fields.get(id(target))
        if run is None:
            raise NotFusable  # a location every lane would write
        self.written_runs.add((run.base_key, run.first))

    # --------------------------------------------------------- expressions

    def expr(self, e: A.Expr) -> bool:
        """Whether ``e`` differs between lanes (checking its vector form if so)."""
        dep = self._dep(e)
        if dep:
            self.dependent.add(id(e))
        return dep

    def _dep(self, e: A.Expr) -> bool:
        if isinstance(e, A.Name):
            d = e.decl
            if id(d) in self.local:
                return True
            if isinstance(d, A.VarDecl):
                if id(d) in self.written:
                    return True
                if id(d) in self.private:
                    raise NotFusable  # written on another path only
                self.read_first.add(id(d))
            return False
        if isinstance(e, A.Member):
            if id(e) in self.fields:
                return True
            self.expr(e.expr)
            return False
        if isinstance(e, (A.IntLit, A.BoolLit, A.EnumValue)):
            return False
        if isinstance(e, A.Index):
            self.expr(e.expr)
            return False
        if isinstance(e, A.Binary):
            a, b = self.expr(e.left), self.expr(e.right)
            if not (a or b):
                return False
            t = self.ctx.ty(e)
            if e.op in COMPARE_OPS:  # a vector of booleans
                left, right = self.ctx.ty(e.left), self.ctx.ty(e.right)
                ot = right if isinstance(left, T.InfInt) else left
                if not vector_type(ot):
                    raise NotFusable
                for st in (left, right):
                    if not (isinstance(st, T.InfInt) or strip(st) == strip(ot)):
                        raise NotFusable
                return True
            if e.op in LOGIC_OPS:
                return True  # both sides booleans, one a vector of them
            if not vector_type(t):
                raise NotFusable
            if e.op in SHIFT_OPS:
                if b or not isinstance(e.right, A.IntLit) \
                        or not 0 <= e.right.value < strip(t).width:  # type: ignore[attr-defined]
                    raise NotFusable
                return True
            if e.op not in LANE_OPS:
                raise NotFusable
            for side, dep in ((e.left, a), (e.right, b)):
                st = self.ctx.ty(side)
                if not (isinstance(st, T.InfInt) or strip(st) == strip(t)):
                    raise NotFusable
                if dep and not vector_type(st):
                    raise NotFusable
            return True
        if isinstance(e, A.Unary):
            if not self.expr(e.expr):
                return False
            if e.op == "!":
                return True
            if e.op not in ("-", "~", "+") or not vector_type(self.ctx.ty(e)):
                raise NotFusable
            return True
        if isinstance(e, A.Cast):
            if not self.expr(e.expr):
                return False
            if not (vector_type(self.ctx.ty(e)) and vector_type(self.ctx.ty(e.expr))):
                raise NotFusable
            return True
        if isinstance(e, A.Slice):
            if self.expr(e.expr):
                raise NotFusable
            return False
        if isinstance(e, A.Call):  # isValid(), the only call in a canonical form
            assert isinstance(e.target, A.CallBuiltin)
            self.expr(e.target.receiver)
            return False
        if isinstance(e, A.Mux):
            c = self.expr(e.cond)  # a condition that differs between lanes picks lane by lane
            a, b = self.expr(e.then), self.expr(e.other)
            if not (a or b or c):
                return False
            t = self.ctx.ty(e)
            if not vector_type(t):
                raise NotFusable
            for side in (e.then, e.other):
                st = self.ctx.ty(side)
                if not (isinstance(st, T.InfInt) or strip(st) == strip(t)):
                    raise NotFusable
            return True
        raise NotFusable
