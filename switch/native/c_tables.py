"""Match-action tables for the native engine: the lookup code generated per table and
the arrays it reads, packed from the run-time ``Table`` (which stays the control
plane's) whenever the table changed.

A table whose keys are all exact is a hash index (``ina_build_hash`` in the prelude);
any other is a scan of its entries in the order the Python engine's index tries them
(longest prefix first, or priority then age), each key compared under a mask (exact,
lpm, ternary, optional) or against a range. Slots (see ``c_runtime``), from the
table's base: entries, keys (or values), hash slots (or masks / range highs), hash
capacity mask, action per entry, arguments per entry, default action, default
arguments.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from switch.engine.match import ExactIndex, LpmIndex, OrderedIndex, is_wildcard
from switch.engine.runtime import Exact, Lpm, Optional, Range, Ternary
from switch.engine.tables import Table
from switch.frontend import ast as A
from switch.native.c_base import UnsupportedError, cname

NSLOTS = 8


class Slots:
    """Names of the state slots, in order (the architecture fills them)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def alloc(self, name: str, n: int = 1) -> int:
        base = len(self.names)
        self.names += [name if n == 1 else f"{name}[{i}]" for i in range(n)]
        return base


class TableCode:
    """The tables the generated code applies: their slots and lookup functions."""

    def __init__(self, program: Any, runtime_tables: dict[str, Table], slots: Slots):
        self.program = program
        self.runtime_tables = runtime_tables
        self.slots = slots
        self.base: dict[str, int] = {}
        self.functions: list[str] = []

    def runtime(self, g: Any, decl: A.TableDecl) -> Table:
        fqn = g.instance_fqn(decl)
        rt = self.runtime_tables.get(fqn or "")
        if rt is None:
            raise UnsupportedError(f"table {decl.name} has no instance", decl.pos)
        if fqn not in self.base:
            self._declare(rt, decl)
        return rt

    def _declare(self, rt: Table, decl: A.TableDecl) -> None:
        if rt.profile is not None or rt.cfg.direct_counter or rt.cfg.direct_meter:
            what = ("an action profile" if rt.profile is not None else
                    "a direct counter" if rt.cfg.direct_counter else "a direct meter")
            raise UnsupportedError(f"table {decl.name} with {what}", decl.pos)
        for k in rt.keys:
            if k.width > 64:
                raise UnsupportedError(f"table {decl.name}: key {k.name} is wider than 64 bits",
                                       decl.pos)
        base = self.slots.alloc(f"table {rt.name}", NSLOTS)
        self.base[rt.name] = base
        nk = len(rt.keys)
        fn = f"lk_{cname(rt.name)}"
        if nk == 0:
            self.functions.append(
                f"static inline int32_t {fn}(const u64 *S, const u64 *k) "
                "{ (void)S; (void)k; return -1; }")
        elif isinstance(rt.index, ExactIndex):
            self.functions.append(
                f"static inline int32_t {fn}(const u64 *S, const u64 *k) "
                f"{{ return exact_find(S, {base}, k, {nk}); }}")
        else:
            checks = []
            for i, k in enumerate(rt.keys):
                if k.kind == "range":
                    checks.append(f"if (k[{i}] < v[{i}] || k[{i}] > m[{i}]) continue;")
                else:
                    checks.append(f"if ((k[{i}] & m[{i}]) != v[{i}]) continue;")
            body = " ".join(checks)
            self.functions.append(
                f"static inline int32_t {fn}(const u64 *S, const u64 *k) {{\n"
                f"    u64 n = S[{base}];\n"
                f"    const u64 *v = PTR(const u64, {base + 1});\n"
                f"    const u64 *m = PTR(const u64, {base + 2});\n"
                f"    for (u64 e = 0; e < n; e++, v += {nk}, m += {nk}) "
                f"{{ {body} return (int32_t)e; }}\n"
                "    return -1;\n}")

    def lookup_code(self, g: Any, rt: Table, keys: list[str], hit: str, act: str,
                    args: str) -> None:
        base = self.base[rt.name]
        k, e = g.tmp("k"), g.tmp("e")
        g.em(f"u64 {k}[{max(1, len(keys))}] = {{{', '.join(keys) or '0'}}};")
        g.em(f"int32_t {e} = lk_{cname(rt.name)}(S, {k});")
        g.em(f"{hit} = (u64)({e} >= 0);")
        nargs = max_args(rt)
        g.em(f"if ({e} >= 0) {{ {act} = PTR(const int32_t, {base + 4})[{e}]; "
             f"{args} = PTR(const u64, {base + 5}) + (u64){e} * {nargs}; }}")
        g.em(f"else {{ {act} = (int32_t)S[{base + 6}]; {args} = PTR(const u64, {base + 7}); }}")


def max_args(rt: Table) -> int:
    return max([len(a.params) for a in rt.actions] + [1])


def _ordered_entries(rt: Table) -> list[Any]:
    idx = rt.index
    if isinstance(idx, ExactIndex):
        return list(idx.map.values())
    if isinstance(idx, LpmIndex):
        return [e for _plen, _m, d in idx.levels for e in d.values()]
    if isinstance(idx, OrderedIndex):
        return list(idx.entries)
    raise TypeError(f"table {rt.name}: unknown index {type(idx).__name__}")


def _u64(v: int) -> int:
    return v & 0xFFFFFFFFFFFFFFFF


def pack_table(rt: Table) -> tuple[list[int], list[np.ndarray]]:
    """The slot values of table ``rt`` (see the module docstring) and the arrays they
    point to (to be kept alive while they are in use)."""
    entries = _ordered_entries(rt)
    nk = max(1, len(rt.keys))
    na = max_args(rt)
    n = len(entries)
    keys = np.zeros(max(1, n) * nk, np.uint64)
    aux = np.zeros(max(1, n) * nk, np.uint64)
    action = np.zeros(max(1, n), np.int32)
    args = np.zeros(max(1, n) * na, np.uint64)
    scan = not isinstance(rt.index, ExactIndex)
    for i, e in enumerate(entries):
        for j, (spec, mv) in enumerate(zip(rt.keys, e.keys, strict=True)):
            full = (1 << spec.width) - 1
            value, m = 0, full
            if is_wildcard(mv, spec.width):
                value, m = (0, full) if isinstance(mv, Range) else (0, 0)
            elif isinstance(mv, Exact):
                value = mv.value
            elif isinstance(mv, Lpm):
                m = full ^ ((1 << (spec.width - mv.prefix_len)) - 1)
                value = mv.value & m
            elif isinstance(mv, Ternary):
                value, m = mv.value & mv.mask, mv.mask
            elif isinstance(mv, Optional):
                value = mv.value or 0
            elif isinstance(mv, Range):
                value, m = mv.low, mv.high
            keys[i * nk + j] = _u64(value)
            aux[i * nk + j] = _u64(m)
        action[i] = e.aidx
        for j, a in enumerate(e.args):
            args[i * na + j] = _u64(a)
    default = np.zeros(na, np.uint64)
    for j, a in enumerate(rt.default.args):
        default[j] = _u64(a)
    arrays: list[np.ndarray] = [keys, aux, action, args, default]
    if scan:
        return ([n, keys.ctypes.data, aux.ctypes.data, 0, action.ctypes.data,
                 args.ctypes.data, rt.default.aidx, default.ctypes.data], arrays)
    cap = 4
    while cap < 2 * n:
        cap *= 2
    hslots = np.full(cap, -1, np.int32)
    arrays.append(hslots)
    return ([n, keys.ctypes.data, hslots.ctypes.data, cap - 1, action.ctypes.data,
             args.ctypes.data, rt.default.aidx, default.ctypes.data], arrays)


__all__ = ["NSLOTS", "Slots", "TableCode", "pack_table"]
