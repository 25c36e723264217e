"""``ina bench engine PROG.p4``: packets per second through the engine, without I/O.

Without ``--packet`` the benchmark builds its own packets: it follows the parser's
longest path of states to ``accept`` (choosing, at each ``select``, a case that leads
further), fixes the fields the selects compare, and gives every other field a random
value below 256 (seeded); 64 such packets are injected in turn. Tables whose keys are
all lpm/ternary/range/optional get a match-all entry running their first action with
parameters (all parameters 1), so that e.g. an LPM router forwards instead of dropping.

With ``--stf FILE`` the STF file sets the switch up instead (its table entries, multicast
groups, register writes, ... run first; reads and checks are skipped) and its ``packet``
lines are the packets, injected in turn on their ports; ``expect`` lines are ignored. A
program whose tables need exact entries (an aggregation job, say) is measured this way.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from switch.engine.layout import scalar_width, strip
from switch.engine.runtime import Lpm, MatchValue, Optional, Range, Ternary
from switch.frontend import ast as A
from switch.frontend import types as T


def _path(e: A.Expr) -> str | None:
    if isinstance(e, A.Name):
        return e.name
    if isinstance(e, A.Member):
        p = _path(e.expr)
        return None if p is None else f"{p}.{e.name}"
    if isinstance(e, A.Index) and isinstance(e.index, A.IntLit):
        p = _path(e.expr)
        return None if p is None else f"{p}[{e.index.value}]"
    return None


def _const(e: A.Expr) -> int | None:
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.EnumValue):
        return e.value
    if isinstance(e, A.Binary) and e.op == "&&&":
        return _const(e.left)
    if isinstance(e, A.Binary) and e.op == "..":
        return _const(e.left)
    return None


def _state_steps(st: A.ParserState) -> list[tuple[str, T.Header]]:
    out = []
    for s in st.stmts:
        if isinstance(s, A.CallStmt) and isinstance(s.call.target, A.CallExternMethod) \
                and s.call.target.method == "extract":
            arg = s.call.resolved_args[0] if s.call.resolved_args else s.call.args[0].value
            t = strip(arg.type) if arg is not None and arg.type is not None else None
            p = _path(arg) if arg is not None else None
            if isinstance(t, T.Header) and p is not None:
                out.append((p.replace(".next", "[0]"), t))
    return out


def build_packet(program: object, rng: random.Random) -> bytes:
    """A packet the program's parser accepts, following its longest path of states."""
    parser = program.pipeline["p"].decl  # type: ignore[attr-defined]
    states = {s.name: s for s in parser.states}
    best: list = []

    def walk(name: str, path: list, constraints: dict, seen: set) -> None:
        nonlocal best
        if name == "accept":
            score = sum(h.width for _p, h in path)
            if not best or score > best[0][2]:
                best = [(list(path), dict(constraints), score)]
            return
        if name not in states or name in seen:
            return
        st = states[name]
        steps = _state_steps(st)
        path2 = path + steps
        tr = st.transition
        if isinstance(tr, str):
            walk(tr, path2, constraints, seen | {name})
            return
        if not isinstance(tr, A.Select):
            return
        keys = [_path(e) for e in tr.exprs]
        for case in tr.cases:
            ks = case.keyset
            vals = ks.elements if isinstance(ks, A.ListExpr) and len(keys) > 1 else [ks]
            c2 = dict(constraints)
            for k, v in zip(keys, vals, strict=False):
                cv = _const(v)
                if k is not None and cv is not None:
                    c2[k] = cv
            walk(case.state, path2, c2, seen | {name})

    walk("start", [], {}, set())
    if not best:
        return bytes(rng.getrandbits(8) for _ in range(64))
    steps, constraints, _score = best[0]
    data = bytearray()
    for hpath, ht in steps:
        acc = 0
        width = 0
        for f in ht.fields:
            ft = strip(f.type)
            if isinstance(ft, T.Varbit):
                continue
            w = scalar_width(ft)
            v = constraints.get(f"{hpath}.{f.name}")
            if v is None:
                # small values: indexes stay inside register arrays, TTLs vary
                v = rng.randrange(min(1 << w, 256))
            acc = (acc << w) | (v & ((1 << w) - 1))
            width += w
        data += acc.to_bytes((width + 7) // 8, "big")
    return bytes(data)


def prime_tables(sw: object) -> int:
    """Give each all-wildcardable table a match-all entry; returns how many."""
    n = 0
    for name, table in sw.tables.items():  # type: ignore[attr-defined]
        if not table.keys or any(k.kind == "exact" for k in table.keys):
            continue
        cands = [a for a in table.actions if a.params and not a.default_only] or \
                [a for a in table.actions if not a.default_only and a.fqn != "NoAction"]
        if not cands:
            continue
        keys: list[MatchValue] = []
        for k in table.keys:
            if k.kind == "lpm":
                keys.append(Lpm(0, 0))
            elif k.kind == "ternary":
                keys.append(Ternary(0, 0))
            elif k.kind == "range":
                keys.append(Range(0, (1 << k.width) - 1))
            else:
                keys.append(Optional(None))
        act = cands[0]
        try:
            sw.table_add(name, keys, act.fqn, [1] * len(act.params),  # type: ignore[attr-defined]
                         priority=1)
            n += 1
        except Exception:  # noqa: BLE001 - priming is best effort
            pass
    return n


class BenchError(Exception):
    """A benchmark that cannot run; the message says why."""


def bench_engine(program_path: str, packet_hex: str | None, count: int,
                 include_dirs: Sequence[str] = (),
                 defines: Mapping[str, str | None] | None = None,
                 stf_path: str | None = None, engine: str = "python") -> int:
    """Compile ``program_path``, inject ``count`` packets and print packets/s; returns
    the exit status."""
    from switch.engine.runtime import SwitchRuntimeError
    from switch.frontend import CompileError
    from switch.stf.parse_stf import StfError

    try:
        measure_pps(program_path, packet_hex, count, include_dirs, defines, stf_path=stf_path,
                    engine=engine)
    except SwitchRuntimeError as e:
        print(f"ina bench engine: {e.message}", file=sys.stderr)
        return 1
    except (CompileError, StfError, BenchError) as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def stf_setup(program: object, sw: object, stf_path: str) -> list[tuple[int, bytes]]:
    """Run an STF file's set-up commands on ``sw``; returns its packets as (port, bytes)."""
    from switch.stf import commands as S
    from switch.stf.parse_stf import parse_stf_file
    from switch.stf.run_stf import StfRunner

    stf = parse_stf_file(stf_path)
    packets = [(c.port, c.data) for c in stf.commands if isinstance(c, S.Packet)]
    checks = (S.Packet, S.Expect, S.RegisterRead, S.CounterRead, S.CheckCounter,
              S.MeterGetRates, S.MirroringGet, S.Wait)
    setup = [c for c in stf.commands if not isinstance(c, checks)]
    result = StfRunner(program, sw, stf_path).run(setup)
    if not result.passed:
        raise BenchError(f"{stf_path}: the set-up failed:\n{result.report}")
    if not packets:
        raise BenchError(f"{stf_path}: no 'packet' line to inject")
    return packets


def measure_pps(program_path: str, packet_hex: str | None, count: int,
                include_dirs: Sequence[str] = (),
                defines: Mapping[str, str | None] | None = None, *, quiet: bool = False,
                stf_path: str | None = None, engine: str = "python") -> float:
    """As ``bench_engine``, returning the packets/s figure."""
    from switch.frontend import compile_file
    from switch.v1model import V1Switch

    t0 = time.perf_counter()
    program = compile_file(program_path, include_dirs, defines or {})
    sw = V1Switch(program, engine=engine)
    t1 = time.perf_counter()
    rng = random.Random(1)
    ported: list[tuple[int, bytes]] | None = None
    if stf_path:
        ported = stf_setup(program, sw, stf_path)
        packets = [data for _port, data in ported]
        if not quiet:
            print(f"{Path(program_path).name}: {len(packets)} packet(s) from {stf_path}")
    elif packet_hex:
        packets = [bytes.fromhex("".join(packet_hex.split()))]
    else:
        primed = prime_tables(sw)
        packets = [build_packet(program, rng) for _ in range(64)]
        if not quiet:
            print(f"{Path(program_path).name}: {len(packets[0])}-byte packets, "
                  f"{primed} table(s) primed with a match-all entry")
    inject = sw.inject
    ports = [p for p, _d in ported] if ported else [1] * len(packets)
    npk = len(packets)
    for i in range(min(200, count)):  # warm-up
        inject(ports[i % npk], packets[i % npk])
    out = 0
    start, cpu = time.perf_counter(), time.process_time()
    if sw.engine == "native":  # as ina switch runs it: a batch at a time
        frames = [(ports[i % npk], packets[i % npk]) for i in range(count)]
        for i in range(0, count, 64):
            out += len(sw.process_batch(frames[i:i + 64])[0])
    else:
        for i in range(count):
            out += len(inject(ports[i % npk], packets[i % npk]))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    pps = count / elapsed if elapsed > 0 else float("inf")
    if not quiet:
        # on a busy machine the CPU-time rate is the steadier figure
        print(f"compile {t1 - t0:.2f} s; {count} packets in {elapsed:.2f} s: "
              f"{pps:,.0f} packets/s ({out} packets out; "
              f"{count / cpu if cpu > 0 else float('inf'):,.0f} packets per CPU-second)")
    return pps


if __name__ == "__main__":
    bench_engine(sys.argv[1], None, int(sys.argv[2]) if len(sys.argv) > 2 else 20000)
