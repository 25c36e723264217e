"""Compile a checked ``Program`` into a Python module: one function per parser and
control instance (actions inlined, tables applied through their runtime objects),
plus the classes of the program's aggregate types.

The architecture supplies ``ArchHooks`` (code for its externs) and runs the block
functions. Run-time state (tables, value sets, the architecture's extern objects)
lives outside the generated module, so the program can be compiled again (e.g. with
tracing) and keep its state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from switch.engine import rt
from switch.engine.codegen import ArchHooks, ModuleBuilder, StmtInfo, UnsupportedError
from switch.engine.codegen_emits import EmitMixin
from switch.engine.codegen_expr import is_aggregate
from switch.engine.codegen_lanes import LaneMixin, plan_lane_storage
from switch.engine.codegen_parser import ParserMixin
from switch.engine.layout import TypeGen, is_signed, scalar_width, strip
from switch.engine.match import KeySpec, ValueSet
from switch.engine.profiles import ActionProfile
from switch.engine.runtime import Exact, Lpm, MatchValue, Optional, Range, Ternary
from switch.engine.tables import ActionSpec, Table, TableConfig
from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.program import BlockInstance, Program

__all__ = ["CompiledProgram", "FuncGen", "UnsupportedError", "build_profiles", "build_tables",
           "build_value_sets", "compile_program"]


class FuncGen(LaneMixin, EmitMixin, ParserMixin):
    """Code generator for one Python function (all mixins together)."""


@dataclass
class CompiledProgram:
    program: Program
    namespace: dict[str, Any]
    blocks: dict[str, Callable[..., Any]]  # block fqn -> function
    pipeline: dict[str, Callable[..., Any]]  # architecture parameter -> function
    types: TypeGen
    stmts: list[StmtInfo]
    source: str
    traced: bool
    classes: dict[str, type] = field(default_factory=dict)
    #: parser block fqn -> out parameter -> a constructor of the value the architecture
    #: passes in (see ``codegen_parser``: the parser builds some of its headers itself)
    fresh_out: dict[str, dict[str, Callable[[], Any]]] = field(default_factory=dict)

    def new(self, t: T.Type) -> Any:
        """A fresh value of aggregate type ``t`` (headers invalid, fields zero)."""
        return self.cls(t)()

    def cls(self, t: T.Type) -> type:
        """The class of aggregate type ``t`` (generated now if the program had no use
        for it yet)."""
        name = self.types.cls(t)
        c = self.namespace.get(name)
        if c is None:
            start = self.namespace.get("_N_SOURCE", 0)
            self.namespace.update(self.types.globals)
            exec("\n".join(self.types.source[start:]), self.namespace)  # noqa: S102
            self.namespace["_N_SOURCE"] = len(self.types.source)
            c = self.namespace[name]
        return c

    def set_trace(self, fn: Callable[[str, int, Any], None] | None) -> None:
        self.namespace["_T"] = fn or _no_trace


def _no_trace(kind: str, sid: int, data: Any) -> None:
    pass


# --------------------------------------------------------------- run-time objects


def _bool_expr(e: A.Expr | None, default: bool) -> bool:
    if isinstance(e, A.BoolLit):
        return e.value
    return default


def _has_annotation(node: Any, name: str) -> bool:
    return any(a.name == name for a in getattr(node, "annotations", []) or [])


def _cp_params(decl: A.ActionDecl) -> list[tuple[str, int, bool]]:
    out = []
    for p in decl.params:
        if p.direction:
            continue
        t = strip(p.type_ref.resolved)  # type: ignore[arg-type]
        out.append((p.name, scalar_width(t), is_signed(t)))
    return out


def _int_value(e: A.Expr) -> int:
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.BoolLit):
        return int(e.value)
    if isinstance(e, A.EnumValue):
        return e.value
    if isinstance(e, A.Cast):
        return _int_value(e.expr)
    if isinstance(e, A.Unary) and e.op == "-":
        return -_int_value(e.expr)
    raise UnsupportedError(f"non-constant value in a table entry ({type(e).__name__})", e.pos)


def _entry_key(e: A.Expr, key: KeySpec) -> MatchValue:
    w = key.width
    full = (1 << w) - 1
    if isinstance(e, (A.DefaultExpr, A.DontCare)):
        if key.kind == "lpm":
            return Lpm(0, 0)
        if key.kind == "range":
            return Range(0, full)
        if key.kind == "optional":
            return Optional(None)
        return Ternary(0, 0)
    if isinstance(e, A.Binary) and e.op == "&&&":
        return Ternary(_int_value(e.left) & full, _int_value(e.right) & full)
    if isinstance(e, A.Binary) and e.op == "..":
        return Range(_int_value(e.left) & full, _int_value(e.right) & full)
    return Exact(_int_value(e) & full)


# p4c's STF runner hands BMv2 ``BMV2_PRIORITY_BASE - PRIO`` for an STF priority, so an
# entry that BMv2 ranks with priority b ranks like STF/P4Runtime priority BASE - b.
BMV2_PRIORITY_BASE = 10000


def _entry_priorities(decl: A.TableDecl, largest_wins: bool) -> list[int]:
    """The entries' priorities in the engine's (and P4Runtime's) terms: larger wins.

    * ``@priority(N)`` on some entry: the table is ranked as p4c-bm2-ss ranks it for
      BMv2, where the smaller number wins: N for an annotated entry, its 1-based
      position for the others.
    * Otherwise the priorities the front end assigned (``priority = N`` entries, or
      positions so that the first entry wins), turned around when the table says
      ``largest_priority_wins = false``.
    """
    entries = decl.entries
    if any(_has_annotation(e, "priority") for e in entries):
        bmv2 = [_int_value(e.priority) if _has_annotation(e, "priority") and e.priority
                is not None else i + 1 for i, e in enumerate(entries)]
        base = max(BMV2_PRIORITY_BASE, max(bmv2) + 1)
        return [base - b for b in bmv2]
    n = len(entries)
    given = [_int_value(e.priority) if e.priority is not None else None for e in entries]
    if largest_wins:
        return [n - i if p is None else p for i, p in enumerate(given)]
    smallest = [i + 1 if p is None else p for i, p in enumerate(given)]
    top = max(smallest, default=0) + 1
    return [top - p for p in smallest]


def build_tables(program: Program,
                 meter_clock: Callable[[], int] | None = None) -> dict[str, Table]:
    tables: dict[str, Table] = {}
    for fqn, ti in program.tables.items():
        decl = ti.decl
        # Selector keys are not matched: they feed the selector's hash (see profiles.py).
        keys = [KeySpec(k.name, k.match_kind, k.width) for k in ti.keys
                if k.match_kind != "selector"]
        refs: dict[str, A.ActionRef] = {}
        for r in decl.actions:
            for afqn in ti.actions:
                ai = program.actions.get(afqn)
                if ai is not None and ai.decl is r.action:
                    refs[afqn] = r
        actions = []
        for afqn in ti.actions:
            ai = program.actions[afqn]
            ref = refs.get(afqn)
            actions.append(ActionSpec(afqn, _cp_params(ai.decl),
                                      default_only=ref is not None
                                      and _has_annotation(ref, "defaultonly"),
                                      table_only=ref is not None
                                      and _has_annotation(ref, "tableonly")))
        meter_bytes = False
        if ti.direct_meter:
            ext = program.externs.get(ti.direct_meter)
            if ext is not None and ext.args:
                meter_bytes = str(ext.args[0]).endswith("bytes")
        cfg = TableConfig(
            name=fqn, keys=keys, actions=actions, default_action=ti.default_action,
            default_args=list(ti.default_args), default_is_const=ti.default_is_const,
            size=ti.size or 1024, entries_const=bool(decl.entries) and decl.entries_const,
            direct_counter=ti.direct_counter, direct_meter=ti.direct_meter,
            direct_meter_bytes=meter_bytes,
            largest_priority_wins=_bool_expr(decl.largest_priority_wins, True))
        table = Table(cfg, meter_clock)
        priorities = _entry_priorities(decl, cfg.largest_priority_wins)
        match_pos = [i for i, k in enumerate(ti.keys) if k.match_kind != "selector"]
        for i, ent in enumerate(decl.entries):
            ekeys = [ent.keys[j] for j in match_pos] if len(ent.keys) == len(ti.keys) else ent.keys
            kvals = [_entry_key(k, ks) for k, ks in zip(ekeys, keys, strict=True)]
            act = ent.action.action
            found = next((f for f in ti.actions if program.actions[f].decl is act), None)
            if found is None:
                raise UnsupportedError(f"table {fqn}: entry action not in the table", ent.pos)
            ncp = len(table.actions[table.action_index[found]].params)
            vals = [a.value for a in ent.action.args if a.value is not None]
            args = [_int_value(v) for v in vals[len(vals) - ncp:]] if ncp else []
            table.add(kvals, found, args, priorities[i], const=cfg.entries_const)
        tables[fqn] = table
    return tables


def build_profiles(program: Program, tables: dict[str, Table]) -> dict[str, ActionProfile]:
    """The action profiles and selectors of the program's indirect tables, attached to
    their tables (a profile named by several tables is shared)."""
    profiles: dict[str, ActionProfile] = {}
    for fqn, ti in program.tables.items():
        name = ti.implementation
        if name is None:
            continue
        prof = profiles.get(name)
        if prof is None:
            ext = program.externs.get(name)
            if ext is None:
                raise UnsupportedError(f"table {fqn}: no instance of {name}", ti.decl.pos)
            args = list(ext.args)
            if ext.extern == "action_selector":
                algo = str(args[0]).rsplit(".", 1)[-1] if args else "crc16"
                size = args[1] if len(args) > 1 else 0
                prof = ActionProfile(name, int(size), algo)  # type: ignore[call-overload]
            else:
                prof = ActionProfile(name, int(args[0]) if args else 0)  # type: ignore[call-overload]
            profiles[name] = prof
        table = tables[fqn]
        table.profile = prof
        prof.tables.append(table)
        widths = tuple(k.width for k in ti.keys if k.match_kind == "selector")
        if prof.with_selector and not prof.widths:
            prof.widths = widths
        elif prof.with_selector and widths != prof.widths:
            raise UnsupportedError(f"table {fqn}: selector keys differ from the other tables "
                                   f"sharing {name}", ti.decl.pos)
    return profiles


def build_value_sets(program: Program) -> dict[str, ValueSet]:
    out = {}
    for fqn, vi in program.value_sets.items():
        et = strip(vi.element)
        fields = [(f.name, strip(f.type)) for f in et.fields] if isinstance(et, T.Struct) \
            else [(fqn, et)]
        if not all(isinstance(ft, _VALUE_SET_SCALARS) for _n, ft in fields):
            raise UnsupportedError(f"value set {vi.decl.name} of {vi.element}: its elements "
                                   "must be bit<W>, a serializable enum or a struct of them",
                                   vi.decl.pos)
        keys = [KeySpec(name, "ternary", scalar_width(ft)) for name, ft in fields]
        out[fqn] = ValueSet(fqn, keys, vi.size)
    return out


_VALUE_SET_SCALARS = (T.Bits, T.Bool, T.SerEnum)


# --------------------------------------------------------------------- blocks


def _params(g: FuncGen, decl: A.ParserDecl | A.ControlDecl | A.FunctionDecl,
            parser: bool) -> tuple[list[str], list[str]]:
    """Python parameters and the names returned as out values."""
    params: list[str] = ["_d", "_bo"] if parser else []
    outs: list[str] = []
    inits: list[str] = []
    for p in decl.params:
        pt = strip(p.type_ref.resolved)  # type: ignore[arg-type]
        if isinstance(pt, T.Extern) and pt.name == "packet_in":
            continue
        if isinstance(pt, T.Extern) and pt.name == "packet_out":
            params.append("_out")
            g.packet_out = "_out"
            continue
        name = g.declare(p, p.name)
        if isinstance(pt, T.Varbit):  # a value and a width; out as a (value, width) pair
            if p.direction == "out":
                inits.append(f"{name}, {name}_w = 0, 0")
            else:
                params += [name, f"{name}_w"]
            if p.direction in ("out", "inout"):
                outs.append(f"({name}, {name}_w)")
        elif is_aggregate(pt):
            params.append(name)
        elif p.direction == "out":
            inits.append(f"{name} = {g.types.default(pt)}")
            outs.append(name)
        else:
            params.append(name)
            if p.direction == "inout":
                outs.append(name)
    for ln in inits:
        g.em(ln)
    return params, outs


def _function_source(name: str, params: list[str], g: FuncGen) -> str:
    body = g.em.lines or ["pass"]
    return f"def {name}({', '.join(params)}):\n" + "\n".join("    " + ln for ln in body) + "\n"


def gen_control(mod: ModuleBuilder, hooks: ArchHooks, bi: BlockInstance, name: str) -> str:
    g = FuncGen(mod, hooks, bi, "control")
    decl = bi.decl
    assert isinstance(decl, A.ControlDecl)
    params, outs = _params(g, decl, parser=False)
    if not outs:
        g.return_stack.append(("return", ""))
        for d in decl.locals:
            g.local_decl(d)
        g.stmt(decl.body)
        return _function_source(name, params, g)
    # with out values, `exit` is caught here so that the caller can still copy them
    # out: the last element of the returned tuple says whether the control exited
    ret = ", ".join(outs)
    g.return_stack.append(("return", ret + ", False"))
    g.em("try:")
    with g.em.indent():
        for d in decl.locals:
            g.local_decl(d)
        g.stmt(decl.body)
    g.em("except _P4Exit:")
    g.em(f"    return ({ret}, True)")
    g.em(f"return ({ret}, False)")
    return _function_source(name, params, g)


def gen_parser(mod: ModuleBuilder, hooks: ArchHooks, bi: BlockInstance, name: str) -> str:
    g = FuncGen(mod, hooks, bi, "parser")
    decl = bi.decl
    assert isinstance(decl, A.ParserDecl)
    params, outs = _params(g, decl, parser=True)
    ret = "_bo" if not outs else "(_bo, " + ", ".join(outs) + ",)"
    g.parser_body(decl, ret)
    return _function_source(name, params, g)


def gen_function(mod: ModuleBuilder, hooks: ArchHooks, fn: A.FunctionDecl, name: str) -> str:
    g = FuncGen(mod, hooks, None, "function")
    params, outs = _params(g, fn, parser=False)
    ret = ", ".join(outs)
    g.return_stack.append(("return", ret))
    g.stmt(fn.body)
    if outs:
        g.em(f"return ({ret},)")
    return _function_source(name, params, g)


def _all_blocks(bi: BlockInstance) -> list[BlockInstance]:
    out = [bi]
    for c in bi.children.values():
        out += _all_blocks(c)
    return out


def compile_program(program: Program, hooks: ArchHooks, tables: dict[str, Table],
                    value_sets: dict[str, ValueSet], *, trace: bool = False,
                    extra_globals: dict[str, Any] | None = None,
                    lane_fusion: bool = True) -> CompiledProgram:
    """``lane_fusion=False`` compiles every statement as it stands (``codegen_lanes``);
    tracing does too, but keeps the storage laid out for fusion."""
    types = TypeGen()
    mod = ModuleBuilder(program, types, trace)
    mod.fuse_lanes = lane_fusion and not trace
    mod.runtime_tables = tables  # type: ignore[attr-defined]
    mod.value_sets = value_sets  # type: ignore[attr-defined]
    blocks: list[BlockInstance] = []
    seen: set[str] = set()
    for bi in program.pipeline.values():
        for b in _all_blocks(bi):
            if b.fqn not in seen:
                seen.add(b.fqn)
                blocks.append(b)
    from switch.engine.layout import ident

    mod.block_names = {b.fqn: f"blk_{ident(b.fqn)}" for b in blocks}  # type: ignore[attr-defined]
    if lane_fusion:
        plan_lane_storage([(FuncGen(mod, hooks, b, "control"), b) for b in blocks])
    sources = []
    for b in blocks:
        name = mod.block_names[b.fqn]  # type: ignore[attr-defined]
        if isinstance(b.decl, A.ParserDecl):
            sources.append(gen_parser(mod, hooks, b, name))
        else:
            sources.append(gen_control(mod, hooks, b, name))
    done: set[int] = set()
    while mod.pending_functions:
        fn = mod.pending_functions.pop()
        if id(fn) in done:
            continue
        done.add(id(fn))
        sources.append(gen_function(mod, hooks, fn, mod.function_names[id(fn)]))
    for b in blocks:
        for p in b.decl.params:
            pt = p.type_ref.resolved
            if pt is not None and is_aggregate(pt):
                types.cls(pt)
    source = "\n".join(types.source) + "\n\n" + "\n".join(sources)
    ns: dict[str, Any] = {
        "_new": object.__new__,
        "_EXIT": rt.EXIT,
        "_P4Exit": rt.P4Exit,
        "_ParserError": rt.ParserError,
        "_PacketAbort": rt.PacketAbort,
        "_extract_generic": rt.extract_generic,
        "_complete": rt.complete_members,
        "_lookahead": rt.lookahead,
        "_stack_next": rt.stack_next,
        "_stack_last": rt.stack_last,
        "_stack_get": rt.stack_get,
        "_stack_push_front": rt.stack_push_front,
        "_stack_pop_front": rt.stack_pop_front,
        "_pack_generic": rt.pack_generic,
        "_pack_bits": rt.pack_bits,
        "_T": _no_trace,
        "_N_SOURCE": len(types.source),
    }
    ns.update(types.globals)
    ns.update(mod.globals)
    ns.update(getattr(hooks, "globals", {}) or {})
    if extra_globals:
        ns.update(extra_globals)
    code = compile(source, f"<p4 {program.filename}>", "exec")
    exec(code, ns)  # noqa: S102 - generated from the checked program
    fns = {b.fqn: ns[mod.block_names[b.fqn]] for b in blocks}  # type: ignore[attr-defined]
    pipeline = {k: fns[bi.fqn] for k, bi in program.pipeline.items()}
    fresh: dict[str, dict[str, Callable[[], Any]]] = {}
    for (fqn, param), fname in mod.out_factories.items():
        fresh.setdefault(fqn, {})[param] = ns[fname]
    return CompiledProgram(program, ns, fns, pipeline, types, mod.stmts, source, trace,
                           fresh_out=fresh)


def _show_key(k: MatchValue) -> str:
    if isinstance(k, Exact):
        return hex(k.value)
    if isinstance(k, Lpm):
        return f"{k.value:#x}/{k.prefix_len}"
    if isinstance(k, Ternary):
        return f"{k.value:#x}&&&{k.mask:#x}"
    if isinstance(k, Range):
        return f"{k.low:#x}..{k.high:#x}"
    return "*" if k.value is None else hex(k.value)


def format_event(stmts: list[StmtInfo], kind: str, sid: int, data: Any) -> str:
    """A trace event as text: ``file(line): what``."""
    info = stmts[sid] if 0 <= sid < len(stmts) else StmtInfo("<unknown>", 0, "")
    where = f"{info.file}({info.line})"
    if kind == "stmt":
        return f"{where}: {info.text}"
    if kind == "state":
        return f"{where}: parser state {data}"
    if kind == "extract":
        return f"{where}: extract {data}"
    if kind == "action":
        return f"{where}: action {data}"
    if kind == "exit":
        return f"{where}: exit"
    if kind == "table":
        table, entry, hit = data
        ref = getattr(entry, "ref", None)
        if ref is not None:
            call = f"member {ref.mid}" if hasattr(ref, "mid") else f"group {ref.gid}"
        else:
            action = table.actions[entry.aidx].fqn
            call = f"{action}({', '.join(str(a) for a in entry.cp_args)})"
        if hit:
            keys = ", ".join(_show_key(k) for k in entry.keys)
            return f"{where}: table {table.name}: hit entry {entry.handle} [{keys}] -> {call}"
        return f"{where}: table {table.name}: miss -> default {call}"
    return f"{where}: {kind} {data!r}"
