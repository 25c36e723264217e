"""The v1model pipeline as BMv2 simple_switch runs it: parser -> verify checksum ->
ingress -> traffic manager (clone, digest, resubmit, multicast, unicast/drop) ->
egress -> egress clone / drop -> compute checksum -> deparser -> recirculate or out.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from switch.engine.compiler import CompiledProgram
from switch.engine.layout import strip
from switch.engine.pre import Pre
from switch.engine.rt import P4Exit, PacketAbort, ParserError
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.v1model import metadata as M
from switch.v1model.externs import PacketCtx, apply_snapshot
from switch.v1model.fastpath import build_fast_process

Job = tuple  # (hdr, meta, sm, payload, plen, truncate)


def _block_args(decl: A.ParserDecl | A.ControlDecl, h_t: T.Type, m_t: T.Type,
                sm_t: T.Type) -> list[str]:
    """Which object goes in each parameter of a pipeline block: 'hdr', 'meta', 'sm'
    or 'out' (packet_out); packet_in is implicit."""
    out = []
    for p in decl.params:
        t = strip(p.type_ref.resolved)  # type: ignore[arg-type]
        if isinstance(t, T.Extern):
            if t.name == "packet_out":
                out.append("out")
            continue
        if t == sm_t:
            out.append("sm")
        elif t == h_t:
            out.append("hdr")
        elif t == m_t:
            out.append("meta")
        else:
            out.append("?")
    return out


class Pipeline:
    def __init__(self, compiled: CompiledProgram, pre: Pre, ctx: PacketCtx,
                 digests: Any, log: Callable[[str], None],
                 trace: Callable[[str], None] | None, fast: bool = False):
        """``fast``: the program needs none of the paths ``fastpath`` leaves out, so
        ``inject`` may be the generated fast path (unless tracing)."""
        self.c = compiled
        self.pre = pre
        self.ctx = ctx
        self.digests = digests
        self.log = log
        self.trace = trace
        self.t0 = time.monotonic_ns()
        prog = compiled.program
        parser = prog.pipeline["p"]
        params = parser.decl.params
        self.h_t = strip(params[1].type_ref.resolved)  # type: ignore[arg-type]
        self.m_t = strip(params[2].type_ref.resolved)  # type: ignore[arg-type]
        self.sm_t = strip(params[3].type_ref.resolved)  # type: ignore[arg-type]
        ns = compiled.namespace
        self.H = ns[compiled.types.cls(self.h_t)]
        self.Meta = ns[compiled.types.cls(self.m_t)]
        self.SM = ns[compiled.types.cls(self.sm_t)]
        self.fn = compiled.pipeline
        self.args = {k: _block_args(bi.decl, self.h_t, self.m_t, self.sm_t)
                     for k, bi in prog.pipeline.items()}
        self.param_order = {k: tuple(a for a in v if a in ("hdr", "meta", "sm"))
                            for k, v in self.args.items()}
        self.run = {}
        for k, spec in self.args.items():
            if k == "p":
                continue
            call_args = ", ".join(a if a in ("hdr", "meta", "sm", "out") else "None" for a in spec)
            self.run[k] = eval(  # noqa: S307 - a fixed argument shuffle
                f"lambda hdr, meta, sm, out: fn({call_args})", {"fn": self.fn[k]})
        #: process one packet: the fast path when it applies, else ``process``
        self.inject = build_fast_process(self) if fast and trace is None else self.process

    def now_us(self) -> int:
        return (time.monotonic_ns() - self.t0) // 1000

    def _call(self, which: str, hdr: Any, meta: Any, sm: Any,
              out: list[bytes] | None = None) -> None:
        try:
            self.run[which](hdr, meta, sm, out)
        except P4Exit:
            pass

    def _params(self, which: str, hdr: Any, meta: Any, sm: Any) -> tuple[Any, ...]:
        objs = {"hdr": hdr, "meta": meta, "sm": sm}
        return tuple(objs[a] for a in self.args[which] if a in objs)

    def _t(self, msg: str) -> None:
        if self.trace is not None:
            self.trace(msg)

    # ---------------------------------------------------------------- ingress

    def parse(self, data: bytes, hdr: Any, meta: Any, sm: Any) -> bytes:
        args = {"hdr": hdr, "meta": meta, "sm": sm}
        try:
            bo = self.fn["p"](data, 0, *[args.get(a) for a in self.args["p"]])
            err = 0
        except ParserError as e:
            bo, err = e.bit_offset, e.code
            if self.trace is not None:
                name = next((n for n, c in self.c.program.errors.items() if c == err), str(err))
                if self.trace is not None:
                    self.trace(f"parser error {name}")
        sm.f_parser_error = err
        return data[bo >> 3:]

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        outputs: list[tuple[int, bytes]] = []
        ingress_q: deque = deque([(bytes(data), port, M.NORMAL, None, None)])
        passes = 0
        while ingress_q:
            passes += 1
            if passes > M.MAX_PASSES:
                self.log(f"packet dropped after {M.MAX_PASSES} resubmit/recirculate passes")
                break
            item = ingress_q.popleft()
            egress_q: deque = deque()
            try:
                self.ingress(item, egress_q, ingress_q)
            except PacketAbort as e:
                self._abort(e)
                continue
            while egress_q:
                try:
                    self.egress(egress_q.popleft(), egress_q, ingress_q, outputs)
                except PacketAbort as e:
                    self._abort(e)
        return outputs

    def _abort(self, e: PacketAbort) -> None:
        where = ""
        if 0 <= e.sid < len(self.c.stmts):
            s = self.c.stmts[e.sid]
            where = f"{s.file}({s.line}): "
        self.log(f"error: {where}{e.message}; packet dropped")
        if self.trace is not None:
            self.trace(f"{where}{e.message}: packet dropped")

    def ingress(self, item: tuple, egress_q: deque, ingress_q: deque) -> None:
        data, port, itype, snap, snap_order = item
        X = self.ctx
        X.reset()
        X.plen = len(data)
        hdr, meta, sm = self.H(), self.Meta(), self.SM()
        sm.f_ingress_port = port
        sm.f_packet_length = len(data)
        sm.f_instance_type = itype
        sm.f_ingress_global_timestamp = self.now_us() & 0xFFFFFFFFFFFF
        if snap:
            objs = {"hdr": hdr, "meta": meta, "sm": sm}
            apply_snapshot(snap, tuple(objs[a] for a in snap_order))
        X.sm = sm
        if self.trace is not None:
            self.trace(f"ingress: packet of {len(data)} bytes on port {port}, "
                       f"instance type {itype}")
        payload = self.parse(data, hdr, meta, sm)
        X.payload = payload
        self._call("vr", hdr, meta, sm)
        sm.f_checksum_error = X.checksum_error
        self._call("ig", hdr, meta, sm)
        # ---- traffic manager
        if X.clone_session is not None:
            self._ingress_clone(X.clone_session, X.clone_fl, data, port, hdr, meta, sm, egress_q)
        if X.digests:
            self.digests.extend(X.digests)
        order = self.param_order["ig"]
        if X.resubmit is not None:
            snap = X.resubmit.snapshot(self._params("ig", hdr, meta, sm))
            self._t("resubmit")
            # as in BMv2 the copy starts with reset metadata: ingress_port too
            ingress_q.append((data, 0, M.RESUBMIT, snap, order))
            return
        mgid = sm.f_mcast_grp
        if mgid:
            sm.f_instance_type = M.REPLICATION
            reps = self.pre.replicate(mgid)
            if self.trace is not None:
                self.trace(f"multicast group {mgid}: {len(reps)} copies")
            for i, (p, rid) in enumerate(reps):
                last = i == len(reps) - 1
                h2, m2, s2 = (hdr, meta, sm) if last else (hdr.copy(), meta.copy(), sm.copy())
                s2.f_egress_rid = rid
                egress_q.append((h2, m2, s2, payload, X.plen, X.truncate, p))
            return
        es = sm.f_egress_spec
        if es == M.DROP_PORT:
            self._t("dropped at the end of ingress")
            return
        sm.f_instance_type = M.NORMAL
        egress_q.append((hdr, meta, sm, payload, X.plen, X.truncate, es))

    def _ingress_clone(self, session_id: int, fl: Any, data: bytes, port: int, hdr: Any,
                       meta: Any, sm: Any, egress_q: deque) -> None:
        session = self.pre.session(session_id)
        if session is None:
            if self.trace is not None:
                self.trace(f"clone session {session_id} is not configured")
            return
        snap = fl.snapshot(self._params("ig", hdr, meta, sm)) if fl is not None else []
        h2, m2, s2 = self.H(), self.Meta(), self.SM()
        s2.f_ingress_port = port
        X = self.ctx
        saved = (X.payload, X.sm)
        payload2 = self.parse(data, h2, m2, s2)
        X.payload, X.sm = saved
        m2, s2 = self.Meta(), self.SM()  # metadata are reset after the re-parse
        if snap:
            objs = {"hdr": h2, "meta": m2, "sm": s2}
            apply_snapshot(snap, tuple(objs[a] for a in self.param_order["ig"]))
        s2.f_instance_type = M.INGRESS_CLONE
        if self.trace is not None:
            self.trace(f"clone to session {session_id}")
        reps = session.replicas
        for i, (p, rid) in enumerate(reps):
            last = i == len(reps) - 1
            h3, m3, s3 = (h2, m2, s2) if last else (h2.copy(), m2.copy(), s2.copy())
            s3.f_egress_rid = rid
            egress_q.append((h3, m3, s3, payload2, len(data), session.truncate, p))

    # ----------------------------------------------------------------- egress

    def egress(self, job: tuple, egress_q: deque, ingress_q: deque,
               outputs: list[tuple[int, bytes]]) -> None:
        hdr, meta, sm, payload, plen, trunc, port = job
        X = self.ctx
        X.reset()
        X.plen = plen
        X.payload = payload
        X.sm = sm
        sm.f_egress_port = port
        sm.f_egress_spec = 0
        sm.f_packet_length = plen
        sm.f_egress_global_timestamp = self.now_us() & 0xFFFFFFFFFFFF
        if self.trace is not None:
            self.trace(f"egress: port {port}, instance type {sm.f_instance_type}")
        self._call("eg", hdr, meta, sm)
        if X.clone_session is not None:
            session = self.pre.session(X.clone_session)
            if session is None:
                if self.trace is not None:
                    self.trace(f"clone session {X.clone_session} is not configured")
            else:
                fl = X.clone_fl
                snap = fl.snapshot(self._params("eg", hdr, meta, sm)) if fl is not None else []
                if self.trace is not None:
                    self.trace(f"egress clone to session {X.clone_session}")
                for p, rid in session.replicas:
                    h2, m2, s2 = hdr.copy(), self.Meta(), self.SM()
                    if snap:
                        objs = {"hdr": h2, "meta": m2, "sm": s2}
                        apply_snapshot(snap, tuple(objs[a] for a in self.param_order["eg"]))
                    s2.f_instance_type = M.EGRESS_CLONE
                    s2.f_egress_rid = rid
                    egress_q.append((h2, m2, s2, payload, plen, session.truncate, p))
        if sm.f_egress_spec == M.DROP_PORT:
            self._t("dropped at the end of egress")
            return
        self._call("ck", hdr, meta, sm)
        out: list[bytes] = []
        self._call("dep", hdr, meta, sm, out)
        out.append(payload)
        data = b"".join(out)
        if X.truncate is not None and X.truncate < len(data):
            data = data[:X.truncate]
        if trunc is not None and trunc < len(data):
            data = data[:trunc]
        if X.recirculate is not None:
            snap = X.recirculate.snapshot(self._params("eg", hdr, meta, sm))
            self._t("recirculate")
            ingress_q.append((data, 0, M.RECIRC, snap, self.param_order["eg"]))
            return
        if self.trace is not None:
            self.trace(f"out: port {port}, {len(data)} bytes")
        outputs.append((port, data))
