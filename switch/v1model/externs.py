"""v1model externs: their run-time state and the code generated for their calls."""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from switch.engine.codegen import UnsupportedError
from switch.engine.hashes import ALGORITHMS
from switch.engine.lanes import ArrayAccess
from switch.engine.layout import attr, is_signed, scalar_width, strip
from switch.engine.meters import Meter, now_us
from switch.engine.rt import log_format
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.program import ExternInstance, Program


class PacketCtx:
    """Per-pass state that generated extern code reads and writes (``_X``)."""

    __slots__ = ("plen", "clone_session", "clone_fl", "resubmit", "recirculate", "truncate",
                 "digests", "checksum_error", "payload", "sm", "log")

    def __init__(self, log: Callable[[str], None]):
        self.log = log
        self.reset()

    def reset(self) -> None:
        self.plen = 0
        self.clone_session: int | None = None
        self.clone_fl: FieldList | None = None
        self.resubmit: FieldList | None = None
        self.recirculate: FieldList | None = None
        self.truncate: int | None = None
        self.digests: list[tuple[str, tuple[int, ...]]] = []
        self.checksum_error = 0
        self.payload = b""
        self.sm: Any = None


class FieldList:
    """Fields preserved for a clone, resubmit or recirculate: paths into the block's
    parameters (param index, attribute path)."""

    def __init__(self, paths: list[tuple[int, tuple[str, ...]]]):
        self.paths = paths

    def snapshot(self, params: tuple[Any, ...]) -> list[tuple[int, tuple[str, ...], Any]]:
        out = []
        for idx, path in self.paths:
            obj = params[idx]
            for a in path:
                obj = getattr(obj, a)
            if hasattr(obj, "copy"):
                obj = obj.copy()
            out.append((idx, path, obj))
        return out


def apply_snapshot(snap: list[tuple[int, tuple[str, ...], Any]], params: tuple[Any, ...]) -> None:
    for idx, path, value in snap:
        if not path:
            params[idx].assign(value)
            continue
        obj = params[idx]
        for a in path[:-1]:
            obj = getattr(obj, a)
        cur = getattr(obj, path[-1])
        if hasattr(cur, "assign"):
            cur.assign(value)
        else:
            setattr(obj, path[-1], value)


class Register:
    """A register array. Its values are a list, or (for registers that lane fusion
    reads and writes together) a column of a bank: a 2-D numpy array whose row i
    holds element i of each of its registers, so one row slice reads all lanes."""

    def __init__(self, name: str, size: int, width: int, signed: bool):
        self.name, self.size, self.width, self.signed = name, size, width, signed
        self.values: list[int] | np.ndarray = [0] * size
        self.bank: np.ndarray | None = None
        self.column = 0

    def read(self, index: int) -> int:
        return int(self.values[index])

    def write(self, index: int, value: int) -> None:
        self.values[index] = value

    def reset(self) -> None:
        self.values[:] = [0] * self.size


class Counter:
    def __init__(self, name: str, size: int, kind: str):
        self.name, self.size, self.kind = name, size, kind
        self.packets: list[int] = [0] * size
        self.bytes: list[int] = [0] * size


class MeterArray:
    def __init__(self, name: str, size: int, by_bytes: bool, clock: Callable[[], int]):
        self.name, self.size, self.by_bytes = name, size, by_bytes
        self.meters = [Meter(by_bytes, clock) for _ in range(size)]


def _enum_name(v: object) -> str:
    return str(v).split(".")[-1]


def _int_arg(v: object, default: int = 0) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, A.IntLit):
        return v.value
    return default


class ExternState:
    """All extern objects of a program, by fqn."""

    def __init__(self, program: Program, seed: int, clock: Callable[[], int] = now_us):
        self.registers: dict[str, Register] = {}
        self.counters: dict[str, Counter] = {}
        self.meters: dict[str, MeterArray] = {}
        self.others: dict[str, ExternInstance] = {}
        self.rng = random.Random(seed)
        for fqn, ei in program.externs.items():
            if ei.extern == "register":
                et = strip(ei.type.type_args[0]) if ei.type.type_args else T.Bits(32)
                self.registers[fqn] = Register(fqn, _int_arg(ei.args[0]), scalar_width(et),
                                               is_signed(et))
            elif ei.extern == "counter":
                kind = _enum_name(ei.args[1]) if len(ei.args) > 1 else "packets"
                self.counters[fqn] = Counter(fqn, _int_arg(ei.args[0]), kind)
            elif ei.extern == "meter":
                self.meters[fqn] = MeterArray(
                    fqn, _int_arg(ei.args[0]),
                    len(ei.args) > 1 and _enum_name(ei.args[1]) == "bytes", clock)
            else:
                self.others[fqn] = ei

    def bank_registers(self, fqns: tuple[str, ...]) -> bool:
        """Keep registers ``fqns`` as the adjacent columns of one bank (their values
        are kept). True if they are so (now or already); False if they cannot be:
        not all registers of one size and one element type of 8, 16, 32 or 64 bits, or
        some of them in another bank already."""
        regs = [self.registers.get(f) for f in fqns]
        if any(r is None for r in regs):
            return False
        r0 = regs[0]
        assert r0 is not None
        if r0.bank is not None:
            return all(r is not None and r.bank is r0.bank and r.column == r0.column + i
                       for i, r in enumerate(regs))
        if any(r is None or r.bank is not None or (r.size, r.width, r.signed)
               != (r0.size, r0.width, r0.signed) for r in regs) or r0.width not in (8, 16, 32, 64):
            return False
        dtype = np.dtype(f"{'i' if r0.signed else 'u'}{r0.width // 8}")
        bank = np.zeros((r0.size, len(regs)), dtype)
        for i, r in enumerate(regs):
            assert r is not None
            bank[:, i] = r.values
            r.values, r.bank, r.column = bank[:, i], bank, i
        return True


Leaf = tuple[str, int | str, str | None]  # a field-list leaf: value, width, validity guard


def _word_terms(leaves: list[tuple[str, int]], pad: int) -> str:
    """Fixed-width leaves as a sum of ``value << (offset mod 16)`` (see ``_word_sum``),
    their concatenation followed by ``pad`` zero bits."""
    terms = []
    offset = pad
    for code, w in reversed(leaves):
        shift = offset % 16
        terms.append(f"({code} << {shift})" if shift else code)
        offset += w
    return "(" + " + ".join(reversed(terms)) + ")" if terms else "0"


def _word_sum(g: Any, leaves: list[Leaf]) -> tuple[str, str | None]:
    """(code, validity guard) of a non-negative integer congruent modulo 0xFFFF to the
    leaves concatenated (those of invalid headers left out) and padded to whole 16-bit
    words, and zero only when they are all zero: what csum16 needs, without building
    the concatenation. Since 2^16 = 1 modulo 0xFFFF, a field that ends o bits before
    the end counts as ``field << (o mod 16)``. One guard for all (or none) and fixed
    widths: an expression, valid under the guard; else statements are emitted."""
    guards = {gd for _c, _w, gd in leaves}
    fixed = [(c, w) for c, w, _g in leaves if isinstance(w, int)]
    if len(guards) <= 1 and len(fixed) == len(leaves):
        total = sum(w for _c, w in fixed)
        return _word_terms(fixed, (-total) & 15), next(iter(guards), None)
    acc, after = g.tmp("_cs"), g.tmp("_ca")
    g.em(f"{acc} = 0")
    g.em(f"{after} = 0")  # bits after the leaves summed so far (they go from the end)
    j = len(leaves)
    while j > 0:
        guard = leaves[j - 1][2]
        i = j
        while i > 0 and leaves[i - 1][2] == guard:
            i -= 1
        if guard is not None:
            g.em(f"if {guard}:")
        with g.em.indent() if guard is not None else contextlib.nullcontext():
            run: list[tuple[str, int]] = []
            for code, w, _g in [("", "", None)] + leaves[i:j]:
                if isinstance(w, int):
                    run.append((code, w))
                    continue
                _flush_run(g, acc, after, run)
                run = []
                if code:  # a varbit: its width is known at run time
                    g.em(f"{acc} += {code} << ({after} & 15)")
                    g.em(f"{after} += {w}")
            _flush_run(g, acc, after, run)
        j = i
    return f"({acc} << (-{after} & 15))", None


_FIELD_OF_MEMBER = re.compile(r"([A-Za-z_]\w*(?:\.\w+)+)\.(\w+)")


def _read_headers_once(g: Any, leaves: list[Leaf]) -> list[Leaf]:
    """``leaves`` with the fields of a header that several of them read (``h.f_x.f_y``)
    read from a temporary holding the header (emitted here): one attribute load per
    field instead of two or more. Only for leaves whose code is a plain attribute
    path, which has no side effects and stays the same object while the checksum is
    computed."""
    def split(code: str | None) -> tuple[str, str] | None:
        m = _FIELD_OF_MEMBER.fullmatch(code or "")
        return (m.group(1), m.group(2)) if m else None

    counts: dict[str, int] = {}
    for c, _w, _g in leaves:
        p = split(c)
        if p is not None:
            counts[p[0]] = counts.get(p[0], 0) + 1
    tmps: dict[str, str] = {}
    for path, n in counts.items():
        if n >= 3:
            tmps[path] = g.tmp("_h")
            g.em(f"{tmps[path]} = {path}")

    def short(code: str | None) -> str | None:
        p = split(code)
        return f"{tmps[p[0]]}.{p[1]}" if p is not None and p[0] in tmps else code

    return [(short(c) or c, w, short(gd)) for c, w, gd in leaves]


def _csum16_inline(g: Any, code: str) -> str:
    """``csum16_int(code)`` as an expression without the call: the ones' complement
    sum is ``code % 0xFFFF``, or 0xFFFF for non-zero data that leaves no remainder."""
    t = g.tmp("_cv")
    return f"(~((({t} := {code}) % 65535) or (65535 if {t} else 0)) & 65535)"


def _flush_run(g: Any, acc: str, after: str, run: list[tuple[str, int]]) -> None:
    """Add a run of fixed-width leaves (the last ones not yet added) to the word sum."""
    if run:
        g.em(f"{acc} += {_word_terms(run, 0)} << ({after} & 15)")
        g.em(f"{after} += {sum(w for _c, w in run)}")


class V1Hooks:
    """Code generation for v1model externs (``ArchHooks``)."""

    packet_length = "_X.plen"

    def __init__(self, program: Program, state: ExternState, ctx: PacketCtx):
        self.program = program
        self.state = state
        self.ctx = ctx
        self.used: set[str] = set()  # the extern functions the program calls

    # ------------------------------------------------------------ helpers

    @property
    def globals(self) -> dict[str, Any]:
        """Names the generated code uses besides those it binds itself."""
        return {"_X": self.ctx}

    def _x(self, g: Any) -> str:
        return "_X"

    def _field_list_from_data(self, g: Any, data: A.Expr | None) -> FieldList:
        if data is None:
            return FieldList([])
        items = data.elements if isinstance(data, A.ListExpr) else [data]
        paths = []
        for it in items:
            p = self._path(g, it)
            if p is None:
                raise UnsupportedError("field list element that is not a metadata field", it.pos)
            paths.append(p)
        return FieldList(paths)

    def _path(self, g: Any, e: A.Expr) -> tuple[int, tuple[str, ...]] | None:
        names: list[str] = []
        while isinstance(e, A.Member):
            names.append(attr(e.name))
            e = e.expr
        if not isinstance(e, A.Name) or g.block is None:
            return None
        for i, p in enumerate(g.block.decl.params):
            if p is e.decl:
                return (i, tuple(reversed(names)))
        return None

    def _field_list_by_id(self, g: Any, idx: int) -> FieldList:
        if g.block is None:
            return FieldList([])
        paths: list[tuple[int, tuple[str, ...]]] = []
        for i, p in enumerate(g.block.decl.params):
            t = strip(p.type_ref.resolved)
            if isinstance(t, T.Struct):
                self._collect(t, idx, i, (), paths)
        return FieldList(paths)

    def _collect(self, t: T.Struct, idx: int, pidx: int, prefix: tuple[str, ...],
                 out: list[tuple[int, tuple[str, ...]]]) -> None:
        decl = t.decl
        fields = getattr(decl, "fields", None) or []
        for f in fields:
            for ann in getattr(f, "annotations", []):
                if ann.name == "field_list":
                    ids = [b.value for b in ann.body if isinstance(b, A.IntLit)]
                    if idx in ids:
                        out.append((pidx, prefix + (attr(f.name),)))
            ft = next((x.type for x in t.fields if x.name == f.name), None)
            if isinstance(strip(ft), T.Struct):  # type: ignore[arg-type]
                self._collect(strip(ft), idx, pidx, prefix + (attr(f.name),), out)  # type: ignore[arg-type]

    def _const(self, e: A.Expr | None) -> int:
        if isinstance(e, A.IntLit):
            return e.value
        if isinstance(e, A.EnumValue):
            return e.value
        raise UnsupportedError("a non-constant field list index", e.pos if e else None)

    def _algo(self, g: Any, e: A.Expr | None) -> tuple[str, str]:
        """(member name, bound hash function) for a HashAlgorithm argument."""
        if not isinstance(e, A.EnumValue):
            raise UnsupportedError("a non-constant hash algorithm", e.pos if e else None)
        name = e.member
        if name == "random":
            fn: Any = lambda data: self.state.rng.getrandbits(32)  # noqa: E731
        else:
            factory = ALGORITHMS.get(name)
            if factory is None:
                raise UnsupportedError(f"hash algorithm {name}", e.pos)
            fn = factory()
        return name, g.mod.bind(fn, f"hash_{name}")

    # ------------------------------------------------------- extern functions

    def extern_function(self, g: Any, call: A.Call, fn: A.ExternFunctionDecl) -> str | None:
        name = fn.name
        self.used.add(name)
        args = g.args_of(call)
        X = self._x(g)
        if name == "mark_to_drop":
            sm = g.expr(args[0]) if args and args[0] is not None else f"{X}.sm"
            g.em(f"{sm}.f_egress_spec = 511")
            g.em(f"{sm}.f_mcast_grp = 0")
            return None
        if name == "hash":
            out, algo, base, data, mx = args[:5]
            _n, h = self._algo(g, algo)
            b = g.expr(base)
            ser = g.serialize(data)
            if isinstance(mx, A.IntLit) and mx.value == 0:
                code = b
            else:
                m = g.expr(mx)
                hv = g.tmp("_hv")
                g.em(f"{hv} = {h}({ser})")
                if isinstance(mx, A.IntLit):
                    code = f"{b} + {hv} % {m}"
                else:
                    mv = g.tmp("_mx")
                    g.em(f"{mv} = {m}")
                    code = f"{b} + ({hv} % {mv} if {mv} else 0)"
            g.assign(out, g.wrap(code, g.ty(out)))
            return None
        if name == "random":
            out, lo, hi = args[:3]
            rng = g.mod.bind(self.state.rng, "rng")
            lv, hv = g.expr(lo), g.expr(hi)
            g.assign(out, f"{rng}.randint(min({lv}, {hv}), max({lv}, {hv}))")
            return None
        if name == "digest":
            data = args[1]
            dt = g.ty(data)
            leaves = g.flatten(data)
            vals = "".join(f"{c}, " for c, _w, _g in leaves)
            dname = getattr(dt, "name", "digest")
            g.em(f"{X}.digests.append(({dname!r}, ({vals})))")
            return None
        if name in ("clone", "clone3", "clone_preserving_field_list"):
            session = g.expr(args[1])
            if name == "clone":
                fl = FieldList([])
            elif name == "clone3":
                fl = self._field_list_from_data(g, args[2])
            else:
                fl = self._field_list_by_id(g, self._const(args[2]))
            g.em(f"{X}.clone_session = {session}")
            g.em(f"{X}.clone_fl = {g.mod.bind(fl, 'fl')}")
            return None
        if name in ("resubmit", "recirculate", "resubmit_preserving_field_list",
                    "recirculate_preserving_field_list"):
            if name.endswith("field_list"):
                fl = self._field_list_by_id(g, self._const(args[0]))
            else:
                fl = self._field_list_from_data(g, args[0] if args else None)
            what = name.split("_")[0]
            g.em(f"{X}.{what} = {g.mod.bind(fl, 'fl')}")
            return None
        if name == "truncate":
            g.em(f"{X}.truncate = {g.expr(args[0])}")
            return None
        if name in ("assert", "assume"):
            c = g.expr(args[0])
            sid = g.mod.stmt_id(call.pos)
            g.em(f"if not {c}:")
            g.em(f"    raise _PacketAbort({name + ' failed'!r}, {sid})")
            return None
        if name == "log_msg":
            msg = g.expr(args[0])
            vals = ""
            if len(args) > 1 and args[1] is not None:
                d = args[1]
                if isinstance(d, A.ListExpr):
                    vals = "".join(f"{g.expr(x)}, " for x in d.elements)
                else:
                    vals = f"{g.expr(d)}, "
            fmt = g.mod.bind(log_format, "log_format")
            g.em(f"{X}.log({fmt}({msg}, ({vals})))")
            return None
        if name in ("verify_checksum", "verify_checksum_with_payload",
                    "update_checksum", "update_checksum_with_payload"):
            cond, data, cks, algo = args[:4]
            algo_name, h = self._algo(g, algo)
            payload = f"{X}.payload" if name.endswith("with_payload") else None
            c = g.expr(cond)

            def data_code() -> str:
                if algo_name == "csum16" and payload is None:
                    code, guard = _word_sum(g, _read_headers_once(g, g.flatten(data)))
                    v = _csum16_inline(g, code)
                    return v if guard is None else f"({v} if {guard} else 0xFFFF)"
                return f"{h}({g.serialize(data, payload)})"

            if name.startswith("verify"):
                g.em(f"if {c}:")
                with g.em.indent():
                    val = data_code()
                    cur = g.expr(cks)
                    w = scalar_width(g.ty(cks))
                    g.em(f"if ({val} & {(1 << w) - 1}) != {cur}:")
                    g.em(f"    {X}.checksum_error = 1")
            else:
                g.em(f"if {c}:")
                with g.em.indent():
                    g.assign(cks, g.wrap(data_code(), g.ty(cks)))
            return None
        raise UnsupportedError(f"extern function {name}", call.pos)

    # --------------------------------------------------------- extern methods

    @staticmethod
    def _index(g: Any, code: str, keep: bool = False) -> str:
        """An index's code, in a temporary unless it is a local's name (and ``keep``
        does not ask for its value now)."""
        if not keep and (code.isidentifier() or code.isdigit()):
            return code
        i: str = g.tmp("_i")
        g.em(f"{i} = {code}")
        return i

    def extern_method(self, g: Any, call: A.Call, target: A.CallExternMethod,
                      instance: ExternInstance | None) -> str | None:
        ext, m = target.extern, target.method
        args = g.args_of(call)
        X = self._x(g)
        fqn = instance.fqn if instance is not None else ""
        if ext == "register":
            reg = self.state.registers[fqn]
            vals = g.mod.bind(reg.values, "reg_" + fqn)
            if m == "read":
                i = self._index(g, g.expr(args[1]))
                elem = f"{vals}.item({i})" if reg.bank is not None else f"{vals}[{i}]"
                g.assign(args[0], f"({elem} if {i} < {reg.size} else 0)")
                return None
            if m == "write":
                index = g.expr(args[0])
                with g.em.capture() as before:  # what evaluating the value runs first
                    v = g.expr(args[1])
                i = self._index(g, index) if not before else self._index(g, index, True)
                g.em.extend(before)
                if isinstance(g.ty(args[1]), T.InfInt):
                    v = g.wrap(v, T.Bits(reg.width, reg.signed))
                g.em(f"if {i} < {reg.size}:")
                g.em(f"    {vals}[{i}] = {v}")
                return None
        if ext == "counter" and m == "count":
            c = self.state.counters[fqn]
            p = g.mod.bind(c.packets, "cp_" + fqn)
            b = g.mod.bind(c.bytes, "cb_" + fqn)
            i = g.tmp("_i")
            g.em(f"{i} = {g.expr(args[0])}")
            g.em(f"if {i} < {c.size}:")
            g.em(f"    {p}[{i}] += 1")
            g.em(f"    {b}[{i}] += {X}.plen")
            return None
        if ext == "direct_counter" and m == "count":
            return None
        if ext == "meter" and m == "execute_meter":
            ma = self.state.meters[fqn]
            ms = g.mod.bind(ma.meters, "mt_" + fqn)
            i = g.tmp("_i")
            g.em(f"{i} = {g.expr(args[0])}")
            g.em(f"if {i} < {ma.size}:")
            with g.em.indent():
                g.assign(args[1], f"{ms}[{i}].execute({X}.plen)")
            return None
        if ext == "direct_meter" and m == "read":
            g.assign(args[0], g.direct_meter_var.get(fqn, "0"))
            return None
        if ext == "Checksum16" and m == "get":
            h = g.mod.bind(ALGORITHMS["csum16"](), "csum16")
            return f"{h}({g.serialize(args[0])})"
        raise UnsupportedError(f"extern method {ext}.{m}", call.pos)

    # ------------------------------------------------------------ lane fusion

    def array_access(self, g: Any, call: A.Call, target: A.CallExternMethod,
                     instance: ExternInstance) -> ArrayAccess | None:
        """A register read or write, for lane fusion (``switch.engine.lanes``)."""
        reg = self.state.registers.get(instance.fqn)
        if target.extern != "register" or target.method not in ("read", "write") \
                or reg is None:
            return None
        args = g.args_of(call)
        if len(args) != 2 or args[0] is None or args[1] is None:
            return None
        element = T.Bits(reg.width, reg.signed)
        if target.method == "read":
            return ArrayAccess(reg.name, reg.size, element, False, args[1], args[0])
        return ArrayAccess(reg.name, reg.size, element, True, args[0], args[1])

    def prepare_lane_banks(self, runs: list[tuple[str, ...]]) -> None:
        for keys in runs:
            self.state.bank_registers(keys)

    def lane_bank(self, g: Any, keys: tuple[str, ...]) -> tuple[str, int] | None:
        regs = [self.state.registers.get(k) for k in keys]
        r0 = regs[0]
        if r0 is None or r0.bank is None or not all(
                r is not None and r.bank is r0.bank and r.column == r0.column + i
                for i, r in enumerate(regs)):
            return None
        return g.mod.bind(r0.bank, "bank_" + r0.name), r0.column


__all__ = ["ExternState", "FieldList", "PacketCtx", "V1Hooks", "apply_snapshot"]
