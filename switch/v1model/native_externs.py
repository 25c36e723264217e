"""C code for the v1model externs the native engine supports: ``mark_to_drop``,
``hash`` (crc16, crc32, csum16, xor16, identity), ``verify_checksum`` and
``update_checksum`` (without payload), register ``read``/``write`` and counter
``count``. Anything else is an ``UnsupportedError`` (the switch runs the Python
engine then).

Registers are numpy arrays shared with the Python engine (see ``native.py``): a
register's slots hold its element pointer and its stride in elements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from switch.engine.codegen import UnsupportedError
from switch.engine.layout import strip
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.program import ExternInstance
from switch.native.c_tables import Slots
from switch.v1model.externs import ExternState

HASHES = {"crc16": "hash_crc16", "crc32": "hash_crc32", "csum16": "hash_csum16",
          "xor16": "hash_xor16", "identity": "hash_identity"}


def register_ctype(dtype: np.dtype) -> str:
    kind = "int" if dtype.kind == "i" else "uint"
    return f"{kind}{dtype.itemsize * 8}_t"


class NativeHooks:
    def __init__(self, state: ExternState, slots: Slots):
        self.state = state
        self.slots = slots
        self.registers: dict[str, int] = {}  # fqn -> first slot
        self.counters: dict[str, int] = {}

    # ------------------------------------------------------------ functions

    def _algo(self, e: A.Expr | None) -> str:
        if not isinstance(e, A.EnumValue):
            raise UnsupportedError("a non-constant hash algorithm", e.pos if e else None)
        fn = HASHES.get(e.member)
        if fn is None:
            raise UnsupportedError(f"hash algorithm {e.member}", e.pos)
        return fn

    def extern_function(self, g: Any, call: A.Call, fn: A.ExternFunctionDecl) -> str | None:
        name = fn.name
        args = g.args_of(call)
        if name == "mark_to_drop":
            if not args or args[0] is None:
                raise UnsupportedError("mark_to_drop without standard_metadata", call.pos)
            sm = g.expr(args[0])
            g.em(f"{sm}.f_egress_spec = 511; {sm}.f_mcast_grp = 0;")
            return None
        if name == "hash":
            out, algo, base, data, mx = args[:5]
            h = self._algo(algo)
            b = g.expr(base)
            if isinstance(mx, A.IntLit) and mx.value == 0:
                code = b
            else:
                buf, n = g.serialize(data)
                hv, mv = g.tmp("hv"), g.tmp("mx")
                g.em(f"u64 {hv} = {h}({buf}, {n});")
                g.em(f"u64 {mv} = (u64)({g.expr(mx)});")
                code = f"(u64)({b}) + ({mv} ? {hv} % {mv} : (u64)0)"
            v = g.tmp("hr")
            g.em(f"u64 {v} = {g.wrap(code, g.ty(out))};")
            g.assign(out, v)
            return None
        if name in ("verify_checksum", "update_checksum"):
            cond, data, cks, algo = args[:4]
            h = self._algo(algo)
            c = g.expr(cond)
            with g.em.block(f"if ({c})"):
                buf, n = g.serialize(data)
                val = g.tmp("ck")
                g.em(f"u64 {val} = {h}({buf}, {n});")
                ct = g.ty(cks)
                if name.startswith("verify"):
                    from switch.native.c_base import width
                    w = width(ct, cks)
                    m = (1 << w) - 1
                    g.em(f"if (({val} & 0x{m:x}ull) != (u64)({g.expr(cks)})) "
                         "P->checksum_error = 1;")
                else:
                    g.assign(cks, g.wrap(val, ct))
            return None
        raise UnsupportedError(f"extern function {name}", call.pos)

    # -------------------------------------------------------------- methods

    def extern_method(self, g: Any, call: A.Call, target: A.CallExternMethod,
                      instance: ExternInstance | None) -> str | None:
        ext, m = target.extern, target.method
        args = g.args_of(call)
        fqn = instance.fqn if instance is not None else ""
        if ext == "register" and m in ("read", "write"):
            reg = self.state.registers[fqn]
            if not isinstance(reg.values, np.ndarray) or reg.bank is None:
                raise UnsupportedError(f"register {fqn}: not an array", call.pos)
            base = self.registers.get(fqn)
            if base is None:
                base = self.registers[fqn] = self.slots.alloc(f"register {fqn}", 2)
            ct = register_ctype(reg.values.dtype)
            elem = f"PTR({ct}, {base})[{{i}} * S[{base + 1}]]"
            if m == "read":
                i = g.tmp("i")
                g.em(f"u64 {i} = (u64)({g.expr(args[1])});")
                t = strip(g.ty(args[0]))
                cv = "i64" if isinstance(t, T.Bits) and t.signed else "u64"
                v = g.tmp("r")
                g.em(f"{cv} {v} = {i} < {reg.size} ? ({cv}){elem.format(i=i)} : 0;")
                g.assign(args[0], v)
                return None
            i = g.tmp("i")
            g.em(f"u64 {i} = (u64)({g.expr(args[0])});")
            v = g.expr(args[1])
            if isinstance(g.ty(args[1]), T.InfInt):
                v = g.wrap(v, T.Bits(reg.width, reg.signed))
            g.em(f"if ({i} < {reg.size}) {elem.format(i=i)} = ({ct})({v});")
            return None
        if ext == "counter" and m == "count":
            c = self.state.counters[fqn]
            base = self.counters.get(fqn)
            if base is None:
                base = self.counters[fqn] = self.slots.alloc(f"counter {fqn}", 2)
            i = g.tmp("i")
            g.em(f"u64 {i} = (u64)({g.expr(args[0])});")
            g.em(f"if ({i} < {c.size}) {{ PTR(u64, {base})[{i}] += 1; "
                 f"PTR(u64, {base + 1})[{i}] += P->plen; }}")
            return None
        raise UnsupportedError(f"extern method {ext}.{m}", call.pos)


__all__ = ["NativeHooks", "register_ctype"]
