"""The v1model pipeline on the native engine: the program's blocks as C
(``switch.native``) inside the steps of ``fastpath`` (parser, verify checksum,
ingress, multicast or unicast or drop, egress, compute checksum, deparser), compiled
into a shared object and called once per batch of received frames.

State stays where the control plane and the Python engine see it: registers are
numpy arrays (every register becomes a column of a bank, see ``ExternState``) and
counters numpy arrays, which the C code reads and writes through pointers; tables and
multicast groups stay Python objects, packed into arrays again before a batch when
they changed (``Table.version``, ``Pre.version``). So either engine can run the next
packet with nothing copied.

What the native engine does not run (clone, resubmit, recirculate, digests, meters,
header stacks and unions, sub-blocks, functions, ...) makes ``NativeEngine`` raise
``UnsupportedError`` for the first such construct: the switch keeps the Python
engine then.
"""

from __future__ import annotations

import ctypes
from array import array
from typing import Any

import numpy as np

from switch.engine.codegen import UnsupportedError
from switch.engine.layout import strip
from switch.frontend import types as T
from switch.native import build as B
from switch.native.c_codegen import ProgramCode, counter, gen_block, new_program_code
from switch.native.c_runtime import PRELUDE
from switch.native.c_tables import pack_table
from switch.v1model import metadata as M
from switch.v1model.fastpath import TIMESTAMPS, read_fields
from switch.v1model.native_externs import NativeHooks

KINDS = {"p": "parser", "vr": "control", "ig": "control", "eg": "control", "ck": "control",
         "dep": "deparser"}
MAX_GROUP = 0xFFFF


def _roles(decl: Any, h_t: T.Type, m_t: T.Type, sm_t: T.Type) -> list[str]:
    out = []
    for p in decl.params:
        t = strip(p.type_ref.resolved)
        out.append("ext" if isinstance(t, T.Extern) else "sm" if t == sm_t else
                   "hdr" if t == h_t else "meta" if t == m_t else "?")
    return out


def prepare_state(externs: Any) -> None:
    """Registers as bank columns and counters as numpy arrays (values kept), so that
    C code can use them in place. A Python engine compiled before must be compiled
    again (it bound the lists)."""
    for fqn, r in externs.registers.items():
        if r.bank is None:
            if r.width > 64:
                continue
            if not externs.bank_registers((fqn,)):
                _bank_any_width(r)
    for c in externs.counters.values():
        if not isinstance(c.packets, np.ndarray):
            c.packets = np.array([int(x) for x in c.packets], np.uint64)
            c.bytes = np.array([int(x) for x in c.bytes], np.uint64)


def _bank_any_width(r: Any) -> None:
    """A one-column bank in the smallest container of the register's width."""
    size = next(b for b in (8, 16, 32, 64) if b >= r.width)
    dtype = np.dtype(f"{'i' if r.signed else 'u'}{size // 8}")
    bank = np.zeros((r.size, 1), dtype)
    bank[:, 0] = r.values
    r.values, r.bank, r.column = bank[:, 0], bank, 0


def generate(program: Any, tables: dict[str, Any], externs: Any,
             used: set[str]) -> tuple[str, ProgramCode, NativeHooks]:
    """The C source of ``program``'s pipeline (UnsupportedError when it uses what the
    native engine does not run)."""
    for fqn, ext in program.externs.items():
        if ext.extern in ("meter", "direct_meter", "action_profile", "action_selector",
                          "Checksum16", "Hash", "Random"):
            raise UnsupportedError(f"{ext.extern} {fqn}", ext.decl.pos)
    if program.value_sets:
        vs = next(iter(program.value_sets.values()))
        raise UnsupportedError("value sets", vs.decl.pos)
    code = new_program_code(program, tables)
    hooks = NativeHooks(externs, code.slots)
    parser = program.pipeline["p"]
    params = parser.decl.params
    h_t, m_t, sm_t = (strip(params[i].type_ref.resolved) for i in (1, 2, 3))
    cnt = counter()
    blocks = {}
    for key, bi in program.pipeline.items():
        roles = _roles(bi.decl, h_t, m_t, sm_t)
        if "?" in roles:
            p = bi.decl.params[roles.index("?")]
            raise UnsupportedError(f"{bi.decl.name}: parameter {p.name}", p.pos)
        blocks[key] = (gen_block(program, code, hooks, bi, KINDS[key], cnt, roles), roles)
    H, Mt, SM = (code.types.ctype(t) for t in (h_t, m_t, sm_t))
    t0 = code.slots.alloc("t0")
    mc = code.slots.alloc("multicast", 3)
    stamps = read_fields(program, sm_t, TIMESTAMPS)

    def call(key: str, extra: str = "") -> str:
        bc, roles = blocks[key]
        objs = {"hdr": "hdr", "meta": "meta", "sm": "sm"}
        args = ", ".join(f"{objs[r]}" for r in roles if r in objs)
        return f"{bc.name}(S, P{extra}{', ' if args else ''}{args})"

    def stamp(which: str) -> str:
        if which not in stamps:
            return ""
        return f"sm->f_{which} = (u64)now_us(S, {t0}) & 0xFFFFFFFFFFFFull;"

    pipeline = f"""
#define HDRMAX (2 * (sizeof({H}) + sizeof({Mt})) + 64)

typedef struct {{ uint8_t *buf; int64_t used; int64_t *meta; int64_t n; }} Out;

static void egress_one(u64 *S, Pkt *P, {H} *hdr, {Mt} *meta, {SM} *sm, u64 port,
                       const uint8_t *payload, u64 paylen, u64 plen, Out *o, int64_t idx) {{
    sm->f_egress_port = port;
    sm->f_egress_spec = 0;
    sm->f_packet_length = plen;
    {stamp("egress_global_timestamp")}
    P->plen = plen;
    {call("eg")};
    if (sm->f_egress_spec == {M.DROP_PORT}) return;
    {call("ck")};
    P->out = o->buf + o->used;
    P->obo = 0;
    {call("dep")};
    u64 hb = (P->obo + 7) >> 3;
    memcpy(P->out + hb, payload, paylen);
    int64_t *m = o->meta + 4 * o->n;
    m[0] = o->used; m[1] = (int64_t)(hb + paylen); m[2] = (int64_t)port; m[3] = idx;
    o->used += (int64_t)(hb + paylen);
    o->n += 1;
}}

static void process(u64 *S, const uint8_t *data, u64 len, u64 port, Out *o, int64_t idx) {{
    {H} hdr_v; {Mt} meta_v; {SM} sm_v;
    memset(&hdr_v, 0, sizeof hdr_v); memset(&meta_v, 0, sizeof meta_v);
    memset(&sm_v, 0, sizeof sm_v);
    {H} *hdr = &hdr_v; {Mt} *meta = &meta_v; {SM} *sm = &sm_v;
    Pkt Pv; memset(&Pv, 0, sizeof Pv); Pkt *P = &Pv;
    P->plen = len;
    sm->f_ingress_port = port;
    sm->f_packet_length = len;
    {stamp("ingress_global_timestamp")}
    u64 err = 0;
    u64 bo = {call("p", ", data, len, &err")};
    if (err) sm->f_parser_error = err;
    const uint8_t *payload = data + (bo >> 3);
    u64 paylen = len - (bo >> 3);
    {call("vr")};
    sm->f_checksum_error = P->checksum_error;
    {call("ig")};
    u64 mgid = sm->f_mcast_grp;
    if (mgid) {{
        sm->f_instance_type = {M.REPLICATION};
        if (mgid > {MAX_GROUP}) return;
        const int32_t *index = PTR(const int32_t, {mc});
        int32_t first = index[2 * mgid], count = index[2 * mgid + 1];
        const int32_t *ports = PTR(const int32_t, {mc + 1});
        const int32_t *rids = PTR(const int32_t, {mc + 2});
        for (int32_t r = 0; r < count; r++) {{
            {H} h2 = hdr_v; {Mt} m2 = meta_v; {SM} s2 = sm_v;
            s2.f_egress_rid = (u64)rids[first + r];
            egress_one(S, P, &h2, &m2, &s2, (u64)ports[first + r], payload, paylen, len, o,
                       idx);
        }}
        return;
    }}
    u64 es = sm->f_egress_spec;
    if (es == {M.DROP_PORT}) return;
    egress_one(S, P, hdr, meta, sm, es, payload, paylen, len, o, idx);
}}

/* Run frames [start, n) (in: their bytes; inmeta: offset, length, port each) until
 * the output buffer could be too small for the next one; res: [next frame, outputs]. */
void ina_batch(u64 *S, const uint8_t *in, const int64_t *inmeta, int64_t start, int64_t n,
               uint8_t *outbuf, int64_t cap, int64_t *outmeta, int64_t maxout,
               int64_t mcmax, int64_t *res) {{
    Out o = {{outbuf, 0, outmeta, 0}};
    int64_t i = start;
    for (; i < n; i++) {{
        int64_t len = inmeta[3 * i + 1];
        int64_t copies = 1 + mcmax;
        if (o.used + copies * (int64_t)(HDRMAX + len) > cap || o.n + copies > maxout) break;
        process(S, in + inmeta[3 * i], (u64)len, (u64)inmeta[3 * i + 2], &o, i);
    }}
    res[0] = i;
    res[1] = o.n;
}}

/* ina_batch with its arguments in one array (one argument to convert per call). */
void ina_run(int64_t *c) {{
    ina_batch((u64 *)c[0], (const uint8_t *)c[1], (const int64_t *)c[2], c[3], c[4],
              (uint8_t *)c[5], c[6], (int64_t *)c[7], c[8], c[9], (int64_t *)c[10]);
}}
"""
    pkt = "typedef struct { u64 plen; u64 checksum_error; uint8_t *out; u64 obo; } Pkt;\n"
    source = "\n".join([PRELUDE, *code.types.decls, pkt, *code.tables.functions,
                        *(bc.source for bc, _r in blocks.values()), pipeline])
    return source, code, hooks


class NativeEngine:
    """A v1model program compiled to C, run on the switch's own state."""

    def __init__(self, program: Any, tables: dict[str, Any], externs: Any, pre: Any,
                 used: set[str], t0_ns: int):
        source, code, hooks = generate(program, tables, externs, used)
        self.source = source
        self.lib = B.load(B.build(source))
        self.fn = self.lib.ina_run
        self.fn.restype = None
        self.fn.argtypes = [ctypes.c_void_p]
        self.build_hash = self.lib.ina_build_hash
        self.build_hash.restype = None
        self.build_hash.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                    ctypes.c_void_p, ctypes.c_uint64]
        self.S = np.zeros(max(1, len(code.slots.names)), np.uint64)
        self.tables = {name: tables[name] for name in code.tables.base}
        self.table_base = dict(code.tables.base)
        self.table_version: dict[str, int] = {}
        self.table_list = list(self.tables.values())
        self.table_versions: list[int] = []
        self.keep: dict[str, list[np.ndarray]] = {}
        self.pre = pre
        self.pre_version = -1
        self.mcmax = 0
        S = self.S
        for fqn, base in hooks.registers.items():
            r = externs.registers[fqn]
            bank = r.bank
            S[base] = bank.ctypes.data + r.column * bank.itemsize
            S[base + 1] = bank.shape[1]
        for fqn, base in hooks.counters.items():
            c = externs.counters[fqn]
            S[base] = c.packets.ctypes.data
            S[base + 1] = c.bytes.ctypes.data
        S[code.slots.names.index("t0")] = t0_ns & 0xFFFFFFFFFFFFFFFF
        self.mc_slot = code.slots.names.index("multicast[0]")
        # ina_run's arguments: S, in, inmeta, start, n, out, cap, outmeta, maxout,
        # mcmax, res (two more: the results)
        self.ctl = array("q", bytes(8 * 13))
        self.ctl_addr = self.ctl.buffer_info()[0]
        self.ctl[0] = self.S.ctypes.data
        self.ctl[10] = self.ctl_addr + 8 * 11
        self._inputs(1 << 16, 256)
        self._buffers(1 << 16, 256)
        self.sync()

    # ------------------------------------------------------------------ state

    def sync(self) -> None:
        """Pack the tables and multicast groups that changed since the last batch."""
        versions = [t.version for t in self.table_list]
        if versions != self.table_versions:
            for name, t in self.tables.items():
                if self.table_version.get(name) != t.version:
                    self._pack(name, t)
            self.table_versions = versions
        if self.pre.version != self.pre_version:
            self._pack_groups()

    def _pack(self, name: str, t: Any) -> None:
        values, arrays = pack_table(t)
        base = self.table_base[name]
        if len(arrays) == 6:  # an exact index: build its hash slots
            keys, hslots = arrays[0], arrays[5]
            self.build_hash(keys.ctypes.data, values[0], max(1, len(t.keys)),
                            hslots.ctypes.data, values[3])
        self.keep[name] = arrays
        for i, v in enumerate(values):
            self.S[base + i] = v & 0xFFFFFFFFFFFFFFFF
        self.table_version[name] = t.version

    def _pack_groups(self) -> None:
        groups = self.pre.groups
        index = np.zeros(2 * (MAX_GROUP + 1), np.int32)
        ports: list[int] = []
        rids: list[int] = []
        for gid, reps in groups.items():
            index[2 * gid] = len(ports)
            index[2 * gid + 1] = len(reps)
            ports += [p for p, _r in reps]
            rids += [r for _p, r in reps]
        parr = np.array(ports or [0], np.int32)
        rarr = np.array(rids or [0], np.int32)
        self.keep["#multicast"] = [index, parr, rarr]
        self.S[self.mc_slot] = index.ctypes.data
        self.S[self.mc_slot + 1] = parr.ctypes.data
        self.S[self.mc_slot + 2] = rarr.ctypes.data
        self.mcmax = max((len(r) for r in groups.values()), default=0)
        self.pre_version = self.pre.version

    # ---------------------------------------------------------------- packets

    def _inputs(self, nbytes: int, frames: int) -> None:
        """Input buffers for at least ``nbytes`` bytes and ``frames`` frames."""
        self.inbuf = bytearray(nbytes)
        self.ctl[1] = ctypes.addressof((ctypes.c_char * nbytes).from_buffer(self.inbuf))
        self.inmeta = array("q", bytes(24 * frames))
        self.ctl[2] = self.inmeta.buffer_info()[0]

    def _buffers(self, out_bytes: int, outputs: int) -> None:
        """Output buffers for at least ``out_bytes`` bytes and ``outputs`` frames."""
        self.out = bytearray(out_bytes)
        self.out_view = memoryview(self.out)
        self.ctl[5] = ctypes.addressof((ctypes.c_char * out_bytes).from_buffer(self.out))
        self.ctl[6] = out_bytes
        self.outmeta = array("q", bytes(32 * outputs))
        self.ctl[7] = self.outmeta.buffer_info()[0]
        self.ctl[8] = outputs

    def process_batch(self, frames: list[tuple[int, bytes]]
                      ) -> tuple[list[tuple[int, bytes]], list[int]]:
        """Run ``frames`` ((port, bytes) each); returns the outputs in order, as
        (port, bytes), and how many outputs each frame made. (Small batches are the
        rule in a network: the per-batch work is plain lists and arrays.)"""
        self.sync()
        n = len(frames)
        total = sum(map(len, [f for _p, f in frames]))
        if total > len(self.inbuf) or 3 * n > len(self.inmeta):
            self._inputs(max(total, 2 * len(self.inbuf)), max(n, len(self.inmeta) // 3 * 2))
        flat: list[int] = []
        off = 0
        inbuf = self.inbuf
        for port, f in frames:
            ln = len(f)
            inbuf[off:off + ln] = f
            flat += (off, ln, port)
            off += ln
        self.inmeta[:3 * n] = array("q", flat)
        outputs: list[tuple[int, bytes]] = []
        counts = [0] * n
        ctl = self.ctl
        ctl[4] = n
        ctl[9] = self.mcmax
        copies = 1 + self.mcmax
        start = 0
        while start < n:
            need = copies * (flat[3 * start + 1] + 4096 + 64)
            if len(self.out) < need or ctl[8] < copies:
                self._buffers(max(need, len(self.out)), max(2 * copies, ctl[8]))
            ctl[3] = start
            self.fn(self.ctl_addr)
            done, nout = ctl[11], ctl[12]
            if done == start:  # the next frame did not fit: larger buffers
                self._buffers(2 * len(self.out), 2 * ctl[8])
                continue
            if nout:
                om = self.outmeta
                buf = self.out_view
                for j in range(0, 4 * nout, 4):
                    o = om[j]
                    outputs.append((om[j + 2], buf[o:o + om[j + 1]].tobytes()))
                    counts[om[j + 3]] += 1
            start = done
        return outputs, counts
