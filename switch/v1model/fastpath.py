"""The v1model pipeline as one function generated for a program that needs none of
the traffic manager's extra paths (clone, resubmit, recirculate, truncate, digests)
and is not traced: the same steps as ``Pipeline.process`` in the same order, with
the block functions called directly and nothing checked that the program cannot
set. Everything else runs through ``Pipeline.process``.

Nor does it set what the program cannot read: the global timestamps of
``standard_metadata`` when no part of the program names them (nor uses the whole
``standard_metadata`` otherwise than through its fields), and the per-packet
context (``_X``) fields that no generated code refers to.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from switch.engine.layout import strip
from switch.engine.rt import P4Exit, PacketAbort, ParserError
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.v1model import metadata as M

#: extern functions whose effects only ``Pipeline.process`` carries out
GENERAL_ONLY = frozenset({
    "clone", "clone3", "clone_preserving_field_list", "resubmit", "recirculate",
    "resubmit_preserving_field_list", "recirculate_preserving_field_list", "truncate",
    "digest",
})

Process = Callable[[int, bytes], list[tuple[int, bytes]]]


def _call(fn: str, order: list[str], out: str = "None") -> str:
    objs = {"hdr": "hdr", "meta": "meta", "sm": "sm", "out": out}
    return f"{fn}({', '.join(objs.get(a, 'None') for a in order)})"


TIMESTAMPS = ("ingress_global_timestamp", "egress_global_timestamp")
#: extern functions that take standard_metadata whole but read none of its fields
METADATA_WRITERS = frozenset({"mark_to_drop"})


def read_fields(program: Any, struct: T.Type, names: tuple[str, ...]) -> set[str]:
    """Which of ``names`` the program may read in values of type ``struct``: those it
    names as a member of such a value, or all when such a value is used whole (passed,
    assigned, serialised) anywhere but in ``mark_to_drop``."""
    found: set[str] = set()

    def walk(node: object, parent: object) -> None:
        if isinstance(node, A.Call) and isinstance(node.target, A.CallExternFunction) \
                and node.target.function.name in METADATA_WRITERS:
            return
        if isinstance(node, A.Member) and node.name in names \
                and strip(node.expr.type) is struct:  # type: ignore[arg-type]
            found.add(node.name)
        elif isinstance(node, A.Name) and not isinstance(parent, A.Member) \
                and node.type is not None and strip(node.type) is struct:
            found.update(names)
        for slot in getattr(node, "__slots__", ()):
            child = getattr(node, slot, None)
            for c in child if isinstance(child, (list, tuple)) else (child,):
                if isinstance(c, A.Node) or (isinstance(c, tuple) and c):
                    walk(c, node)

    for d in program.decls:
        walk(d, None)
    return found


def _context_fields(source: str) -> set[str]:
    """The per-packet context fields the generated code refers to (as ``_X.<name>``)."""
    return {f for f in ("plen", "payload", "sm", "checksum_error") if f"_X.{f}" in source}


def does_nothing(block: Any) -> bool:
    """Whether applying control ``block`` (a block instance) can have no effect: an
    empty ``apply`` whose locals run no code (no variable with an initialiser)."""
    decl = block.decl
    return isinstance(decl, A.ControlDecl) and not decl.body.stmts and not any(
        isinstance(d, A.VarDecl) and d.init is not None for d in decl.locals)


def _headers_constructor(pipeline: Any) -> Callable[[], Any]:
    """What makes the parser's headers: the parser's own constructor of them where it
    builds some of them itself (``switch.engine.codegen_parser``)."""
    parser = pipeline.c.program.pipeline["p"]
    hdr = parser.decl.params[1].name
    made: Callable[[], Any] = pipeline.c.fresh_out.get(parser.fqn, {}).get(hdr, pipeline.H)
    return made


def build_fast_process(pipeline: Any) -> Process:
    """``pipeline.process`` for programs that need none of its extra paths."""
    a = pipeline.args
    parser_args = ", ".join({"hdr": "hdr", "meta": "meta", "sm": "sm"}.get(x, "None")
                            for x in a["p"])
    stamps = read_fields(pipeline.c.program, pipeline.sm_t, TIMESTAMPS)
    ctx_fields = _context_fields(pipeline.c.source)
    blocks = pipeline.c.program.pipeline

    def only(cond: bool, line: str) -> str:
        return line if cond else "pass"

    def apply(key: str, indent: str, out: str = "None") -> str:
        """The call of block ``key`` (none for a control that does nothing)."""
        if key != "dep" and does_nothing(blocks[key]):
            return "pass"
        return (f"try:\n{indent}    {_call(key, a[key], out)}\n"
                f"{indent}except P4Exit:\n{indent}    pass")

    src = f"""
def process(port, data):
    data = bytes(data)
    {only(bool(ctx_fields), "X = ctx")}
    {only("checksum_error" in ctx_fields, "X.checksum_error = 0")}
    plen = len(data)
    {only("plen" in ctx_fields, "X.plen = plen")}
    hdr = H()
    meta = Meta()
    sm = SM()
    sm.f_ingress_port = port
    sm.f_packet_length = plen
    {only(TIMESTAMPS[0] in stamps, "sm.f_ingress_global_timestamp = "
          "((monotonic_ns() - t0) // 1000) & 0xFFFFFFFFFFFF")}
    {only("sm" in ctx_fields, "X.sm = sm")}
    try:
        try:
            bo = parser(data, 0, {parser_args})
        except ParserError as e:
            bo = e.bit_offset
            sm.f_parser_error = e.code
        payload = data[bo >> 3:]
        {only("payload" in ctx_fields, "X.payload = payload")}
        {apply("vr", "        ")}
        {only("checksum_error" in ctx_fields, "sm.f_checksum_error = X.checksum_error")}
        {apply("ig", "        ")}
    except PacketAbort as e:
        abort(e)
        return []
    mgid = sm.f_mcast_grp
    if mgid:
        sm.f_instance_type = {M.REPLICATION}
        reps = replicate(mgid)
        outputs = []
        last = len(reps) - 1
        jobs = []
        for i, (p, rid) in enumerate(reps):
            if i == last:
                h2, m2, s2 = hdr, meta, sm
            else:
                h2, m2, s2 = hdr.copy(), meta.copy(), sm.copy()
            s2.f_egress_rid = rid
            jobs.append((h2, m2, s2, p))
        for h2, m2, s2, p in jobs:
            egress(h2, m2, s2, p, payload, plen, outputs)
        return outputs
    es = sm.f_egress_spec
    if es == {M.DROP_PORT}:
        return []
    outputs = []
    egress(hdr, meta, sm, es, payload, plen, outputs)
    return outputs

def egress(hdr, meta, sm, port, payload, plen, outputs):
    {only(bool(ctx_fields), "X = ctx")}
    {only("plen" in ctx_fields, "X.plen = plen")}
    {only("payload" in ctx_fields, "X.payload = payload")}
    {only("sm" in ctx_fields, "X.sm = sm")}
    sm.f_egress_port = port
    sm.f_egress_spec = 0
    sm.f_packet_length = plen
    {only(TIMESTAMPS[1] in stamps, "sm.f_egress_global_timestamp = "
          "((monotonic_ns() - t0) // 1000) & 0xFFFFFFFFFFFF")}
    try:
        {apply("eg", "        ")}
        {only(not does_nothing(blocks["eg"]), f"if sm.f_egress_spec == {M.DROP_PORT}: return")}
        {apply("ck", "        ")}
        out = []
        try:
            {_call("dep", a["dep"], "out")}
        except P4Exit:
            pass
    except PacketAbort as e:
        abort(e)
        return
    out.append(payload)
    outputs.append((port, b"".join(out)))
"""
    fn = pipeline.fn
    ns: dict[str, Any] = {
        "ctx": pipeline.ctx, "H": _headers_constructor(pipeline), "Meta": pipeline.Meta,
        "SM": pipeline.SM,
        "monotonic_ns": time.monotonic_ns, "t0": pipeline.t0, "parser": fn["p"],
        "vr": fn["vr"], "ig": fn["ig"], "eg": fn["eg"], "ck": fn["ck"], "dep": fn["dep"],
        "replicate": pipeline.pre.replicate, "abort": pipeline._abort,
        "ParserError": ParserError, "P4Exit": P4Exit, "PacketAbort": PacketAbort,
    }
    exec(compile(src, "<v1model fast path>", "exec"), ns)  # noqa: S102 - fixed template
    process: Process = ns["process"]
    return process
