"""Several pipelines: which packets a v1model program lets several pipelines share.

A program opts in by annotating one header field ``@pipeline_key``: it promises that
two packets that touch the same element of a register (or of a counter or meter) have
the same value in that field, as SwitchML's packets of one pool slot do. The switch may
then run several copies of the pipeline, each with its own state, and have the kernel
send every packet to the copy its key picks (``switch.ports.fanout``), as a hardware
switch's pipes each own their registers.

The kernel must find the field without parsing: ``steering`` follows the program's
parser from ``start`` to the state that extracts the key's header, through fixed-size
headers only, and collects what the path's ``select``\\ s require (each taken case a
constant, or a value and mask, and the cases before it constants too). The result is a
``Steering``: the conditions a frame must meet, and where its key is. A frame that
does not meet them (another protocol) goes to the first pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T

ANNOTATION = "pipeline_key"
MAX_LOAD_BITS = 32  # a classic BPF load reads at most a word


class PartitionError(Exception):
    """The program cannot be split into pipelines; the message says where and why."""


@dataclass(frozen=True)
class FrameField:
    """A field of a frame at a fixed place: ``width`` bits from bit ``offset``."""

    offset: int
    width: int


@dataclass(frozen=True)
class Steering:
    """How the kernel picks a frame's pipeline: a frame that meets every condition
    (``(field & mask) == value``) goes to pipeline ``key % N``, any other to 0."""

    field: str  # the key as the program names it, for messages
    conditions: tuple[tuple[FrameField, int, int], ...]
    key: FrameField


def _where(program: Any, node: A.Node) -> str:
    try:
        o = program.source.origin(node.pos.line)
        return f"{o.file}({o.line})"
    except Exception:  # noqa: BLE001 - a position outside the source
        return str(getattr(program, "filename", "<program>"))


def key_fields(program: Any) -> list[tuple[A.HeaderDecl, A.Field]]:
    """The header fields annotated ``@pipeline_key``."""
    out = []
    for d in program.decls:
        if isinstance(d, A.HeaderDecl):
            out += [(d, f) for f in d.fields if any(a.name == ANNOTATION for a in f.annotations)]
    return out


def steering(program: Any) -> Steering | None:
    """The program's steering rule; None when it does not opt in. PartitionError when
    it does but the kernel cannot find the key (see the module's docstring)."""
    keys = key_fields(program)
    if not keys:
        return None
    if len(keys) > 1:
        where = ", ".join(f"{d.name}.{f.name} at {_where(program, f)}" for d, f in keys)
        raise PartitionError(f"@{ANNOTATION} on more than one field ({where}): a program "
                             "has one key")
    decl, key = keys[0]
    kt = strip(key.type_ref.resolved) if key.type_ref.resolved is not None else None
    if not isinstance(kt, T.Bits) or kt.width > MAX_LOAD_BITS:
        raise PartitionError(f"{_where(program, key)}: @{ANNOTATION} on {decl.name}.{key.name}:"
                             f" the key must be a bit<W> or int<W> of at most "
                             f"{MAX_LOAD_BITS} bits")
    parser = program.pipeline["p"].decl
    paths = _Paths(program, parser, decl, key).search()
    name = f"{decl.name}.{key.name}"
    if not paths:
        raise PartitionError(f"{_where(program, key)}: @{ANNOTATION} on {name}: the parser "
                             f"{parser.name} extracts no {decl.name} at a place the kernel can "
                             "find (after fixed-size headers, through selects on constants)")
    if len(paths) > 1:
        raise PartitionError(f"{_where(program, key)}: @{ANNOTATION} on {name}: the parser "
                             f"{parser.name} reaches {decl.name} on {len(paths)} paths; the "
                             "kernel follows one")
    conditions, at = paths[0]
    return Steering(name, tuple(conditions), at)


@dataclass
class _Header:
    type: T.Header
    offset: int  # bit offset of the header in the frame


class _Paths:
    """Depth-first search of the parser's paths to the key's header."""

    def __init__(self, program: Any, parser: A.ParserDecl, decl: A.HeaderDecl, key: A.Field):
        self.program = program
        self.states = {s.name: s for s in parser.states}
        self.decl = decl
        self.key = key
        self.found: list[tuple[list[tuple[FrameField, int, int]], FrameField]] = []

    def search(self) -> list[tuple[list[tuple[FrameField, int, int]], FrameField]]:
        self._state("start", 0, {}, [], set())
        return self.found

    def _state(self, name: str, offset: int, headers: dict[str, _Header],
               conditions: list[tuple[FrameField, int, int]], seen: set[str]) -> None:
        st = self.states.get(name)
        if st is None or name in seen:  # accept, reject, a loop
            return
        seen = seen | {name}
        headers = dict(headers)
        for s in st.stmts:
            step = self._step(s, offset, headers)
            if step is None:
                return  # the offset is unknown from here on
            if isinstance(step, FrameField):
                self.found.append((list(conditions), step))
                return
            offset = step
        tr = st.transition
        if isinstance(tr, str):
            self._state(tr, offset, headers, conditions, seen)
        elif isinstance(tr, A.Select):
            self._select(tr, offset, headers, conditions, seen)

    def _step(self, s: A.Stmt, offset: int, headers: dict[str, _Header]
              ) -> int | FrameField | None:
        """The offset after ``s``, the key if ``s`` extracts its header, or None when
        the offset cannot be known."""
        if not (isinstance(s, A.CallStmt) and isinstance(s.call.target, A.CallExternMethod)
                and s.call.target.extern == "packet_in"):
            return None if _moves(s) else offset
        method = s.call.target.method
        args = [a.value for a in s.call.args]
        if method == "advance":
            n = args[0] if args else None
            return offset + n.value if isinstance(n, A.IntLit) else None
        if method != "extract":
            return offset  # lookahead, length
        if len(args) != 1 or args[0] is None:
            return None
        path = _path(args[0])
        ht = strip(args[0].type) if args[0].type is not None else None
        if path is None or not isinstance(ht, T.Header) or any(
                isinstance(strip(f.type), T.Varbit) for f in ht.fields):
            return None
        if ht.decl is self.decl:
            return FrameField(offset + _field_offset(ht, self.key.name),
                              T.width_of(strip(self.key.type_ref.resolved)))  # type: ignore[arg-type]
        headers[path] = _Header(ht, offset)
        return offset + T.width_of(ht)

    def _select(self, sel: A.Select, offset: int, headers: dict[str, _Header],
                conditions: list[tuple[FrameField, int, int]], seen: set[str]) -> None:
        keys = [self._frame_field(e, headers) for e in sel.exprs]
        earlier: list[list[tuple[FrameField, int, int]]] = []
        for case in sel.cases:
            matches = self._case(case.keyset, keys)
            if matches is None:
                return  # nor can the cases after it be told apart from it
            if all(_excludes(matches, e) for e in earlier):
                self._state(case.state, offset, headers, conditions + matches, seen)
            earlier.append(matches)

    def _case(self, ks: A.Expr, keys: list[FrameField | None]
              ) -> list[tuple[FrameField, int, int]] | None:
        """What a frame must meet to take a case (None: not expressible)."""
        elems = ks.elements if isinstance(ks, A.ListExpr) and len(keys) > 1 else [ks]
        if len(elems) != len(keys):
            return None
        out = []
        for e, k in zip(elems, keys, strict=True):
            if isinstance(e, (A.DefaultExpr, A.DontCare)):
                continue
            if k is None:
                return None
            full = (1 << k.width) - 1
            if isinstance(e, A.Binary) and e.op == "&&&":
                v, m = _const(e.left), _const(e.right)
                if v is None or m is None:
                    return None
                out.append((k, m & full, v & m & full))
                continue
            v = _const(e)
            if v is None:
                return None
            out.append((k, full, v & full))
        return out

    def _frame_field(self, e: A.Expr, headers: dict[str, _Header]) -> FrameField | None:
        if not isinstance(e, A.Member):
            return None
        base = _path(e.expr)
        h = headers.get(base) if base is not None else None
        if h is None or e.name not in {f.name for f in h.type.fields}:
            return None
        ft = strip(next(f.type for f in h.type.fields if f.name == e.name))
        if not isinstance(ft, T.Bits) or ft.width > MAX_LOAD_BITS:
            return None
        return FrameField(h.offset + _field_offset(h.type, e.name), ft.width)


def _excludes(taken: list[tuple[FrameField, int, int]],
              earlier: list[tuple[FrameField, int, int]]) -> bool:
    """Whether a frame that meets ``taken`` cannot meet ``earlier`` (a select takes
    its first matching case): on some key, a bit both cases test differs."""
    tested = {f: (m, v) for f, m, v in taken}
    return any(f in tested and (tested[f][1] ^ v) & tested[f][0] & m for f, m, v in earlier)


def _moves(s: A.Stmt) -> bool:
    """Whether ``s`` may move the parser's offset (a call of another parser)."""
    if isinstance(s, A.CallStmt):
        return isinstance(s.call.target, A.CallSubApply)
    if isinstance(s, A.Block):
        return any(_moves(x) for x in s.stmts)
    if isinstance(s, A.If):
        return _moves(s.then) or (s.other is not None and _moves(s.other))
    return False


def _path(e: A.Expr) -> str | None:
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Member):
        base = _path(e.expr)
        return None if base is None else f"{base}.{e.name}"
    return None


def _field_offset(t: T.Header, name: str) -> int:
    offset = 0
    for f in t.fields:
        if f.name == name:
            return offset
        offset += T.width_of(strip(f.type))
    raise KeyError(name)


def _const(e: A.Expr) -> int | None:
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.EnumValue):
        return e.value
    return None
