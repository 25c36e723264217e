"""``V1Switch``: a v1model program running on the engine, with the runtime API the
STF runner and the P4Runtime server use (see ``switch.engine.runtime`` for the value
types and errors).

Every method takes the switch's lock, so packets and table updates from different
threads are serialised.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from switch.engine.codegen import UnsupportedError
from switch.engine.compiler import (
    CompiledProgram,
    build_profiles,
    build_tables,
    build_value_sets,
    compile_program,
    format_event,
)
from switch.engine.match import ValueSet
from switch.engine.meters import now_us
from switch.engine.pre import Pre
from switch.engine.profiles import ActionProfile
from switch.engine.runtime import (
    ActionCall,
    EntrySpec,
    ErrorCode,
    GroupRef,
    MatchValue,
    MemberRef,
    ProfileGroup,
    ProfileMember,
    SwitchRuntimeError,
)
from switch.engine.tables import Table
from switch.frontend.program import Program
from switch.v1model.externs import ExternState, PacketCtx, V1Hooks
from switch.v1model.fastpath import GENERAL_ONLY
from switch.v1model.pipeline import Pipeline

log = logging.getLogger("switch.v1model")

#: ``engine`` values: ``auto`` runs the native engine when the program compiles to C
#: and a C compiler exists (the Python engine otherwise), ``native`` insists on it
ENGINES = ("auto", "native", "python")


def _resolve(kind: str, name: str, names: Sequence[str]) -> str:
    if name in names:
        return name
    n = name.lstrip(".")
    if n in names:
        return n
    matches = [x for x in names if x.endswith("." + n)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise SwitchRuntimeError(ErrorCode.NOT_FOUND,
                                 f"{kind} name {name!r} is ambiguous: {', '.join(sorted(matches))}")
    raise SwitchRuntimeError(ErrorCode.NOT_FOUND, f"no {kind} named {name!r}")


def _members(members: Sequence[int] | Mapping[int, int]) -> list[int] | dict[int, int]:
    return dict(members) if isinstance(members, Mapping) else list(members)


class V1Switch:
    def __init__(self, program: Program, *, seed: int = 0,
                 trace: Callable[[str], None] | None = None, cpu_port: int | None = None,
                 meter_clock: Callable[[], int] | None = None, lane_fusion: bool = True,
                 engine: str = "python"):
        """``lane_fusion=False`` runs every statement as written (see
        ``switch.engine.codegen_lanes``), for comparisons. ``engine``: see ``ENGINES``;
        the native engine runs only while packets are not traced."""
        if program.arch not in ("v1model", "", None):
            raise SwitchRuntimeError(ErrorCode.UNSUPPORTED,
                                     f"architecture {program.arch} is not v1model")
        self.program = program
        self.cpu_port = cpu_port
        self.lane_fusion = lane_fusion
        self.lock = threading.RLock()
        self.log: list[str] = []
        self.digests: deque[tuple[str, tuple[int, ...]]] = deque()
        self.pre = Pre()
        clock = meter_clock or now_us
        try:
            self.tables: dict[str, Table] = build_tables(program, clock)
            self.profiles: dict[str, ActionProfile] = build_profiles(program, self.tables)
            self.value_sets: dict[str, ValueSet] = build_value_sets(program)
            self.externs = ExternState(program, seed, clock)
            self.ctx = PacketCtx(self._log)
            self.hooks = V1Hooks(program, self.externs, self.ctx)
            self._compiled: dict[bool, CompiledProgram] = {}
            self._trace = trace
            self._set_pipeline()
        except UnsupportedError as e:
            raise SwitchRuntimeError(ErrorCode.UNSUPPORTED, self._where(e)) from None
        if engine not in ENGINES:
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT,
                                     f"engine {engine!r} is not one of {', '.join(ENGINES)}")
        self.native: Any = None
        #: why the native engine does not run this program (None when it does)
        self.native_error: str | None = None
        if engine != "python":
            self._start_native(engine == "native")

    def _start_native(self, required: bool) -> None:
        from switch.native.build import BuildError
        from switch.v1model.native import NativeEngine, prepare_state

        try:
            prepare_state(self.externs)
            # the Python engine compiled so far bound the registers' and counters' old
            # storage: it is compiled again when it runs next
            self._compiled.clear()
            self._python_stale = True
            self.native = NativeEngine(self.program, self.tables, self.externs, self.pre,
                                       self.hooks.used, self.pipeline.t0)
        except UnsupportedError as e:
            self.native_error = self._where(e)
        except BuildError as e:
            self.native_error = str(e)
        if self.native_error is None:
            return
        self._set_pipeline()
        if required:
            raise SwitchRuntimeError(ErrorCode.UNSUPPORTED,
                                     "the native engine cannot run this program: "
                                     f"{self.native_error}")
        log.warning("%s runs on the Python engine: the native engine cannot run it: %s",
                    self.program.filename, self.native_error)

    @property
    def engine(self) -> str:
        """The engine that runs the next packet: native or python."""
        return "native" if self.native is not None and self._trace is None else "python"

    def _where(self, e: UnsupportedError) -> str:
        if e.pos is None or not e.pos.line:
            return f"not supported: {e.what}"
        try:
            o = self.program.source.origin(e.pos.line)  # type: ignore[attr-defined]
            return f"{o.file}({o.line}): not supported: {e.what}"
        except Exception:  # noqa: BLE001 - a position outside the source
            return f"not supported: {e.what}"

    # ------------------------------------------------------------ compilation

    def compiled(self, traced: bool = False) -> CompiledProgram:
        c = self._compiled.get(traced)
        if c is None:
            c = compile_program(self.program, self.hooks, self.tables, self.value_sets,
                                trace=traced, lane_fusion=self.lane_fusion)
            self._compiled[traced] = c
        return c

    def _set_pipeline(self) -> None:
        traced = self._trace is not None
        c = self.compiled(traced)
        if traced:
            user = self._trace
            stmts = c.stmts

            def event(kind: str, sid: int, data: Any) -> None:
                user(format_event(stmts, kind, sid, data))  # type: ignore[misc]

            c.set_trace(event)
        fast = not self.hooks.used & GENERAL_ONLY
        self._python_stale = False
        self.pipeline = Pipeline(c, self.pre, self.ctx, self.digests, self._log, self._trace,
                                 fast=fast)

    def set_trace(self, trace: Callable[[str], None] | None) -> None:
        """Turn packet tracing on (a callback receiving one line per event) or off."""
        with self.lock:
            self._trace = trace
            self._set_pipeline()

    def _log(self, msg: str) -> None:
        self.log.append(msg)
        if self._trace is not None:
            self._trace(f"log: {msg}")

    # ---------------------------------------------------------------- packets

    def inject(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Process one packet arriving on ``port``; returns every packet sent out, in
        order, as (port, bytes)."""
        with self.lock:
            return self._inject(port, data)

    def _inject(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        if self.native is not None and self._trace is None:
            return self.native.process_batch([(port, bytes(data))])[0]
        return self._python().inject(port, data)

    def _python(self) -> Pipeline:
        """The Python engine's pipeline (compiled again if the state moved)."""
        if self._python_stale:
            self._set_pipeline()
        return self.pipeline

    @contextlib.contextmanager
    def batch(self) -> Iterator[Callable[[int, bytes], list[tuple[int, bytes]]]]:
        """Hold the switch for a batch of packets: yields ``inject`` that does not take
        the lock for each packet."""
        with self.lock:
            yield self._inject if self.engine == "native" else self._python().inject

    def process_batch(self, frames: list[tuple[int, bytes]]
                      ) -> tuple[list[tuple[int, bytes]], list[int]]:
        """Process received frames ((port, bytes) each) in order: every packet sent
        out, in order, and how many each frame made. The native engine runs them in
        one call, the Python engine one by one (an exception it raises ends the
        batch: ``Dataplane`` gives the Python engine its frames one by one instead)."""
        with self.lock:
            if self.engine == "native":
                return self.native.process_batch(frames)  # type: ignore[no-any-return]
            outputs: list[tuple[int, bytes]] = []
            counts = []
            inject = self._python().inject
            for port, frame in frames:
                out = inject(port, frame)
                outputs += out
                counts.append(len(out))
            return outputs, counts

    # ----------------------------------------------------------------- tables

    def table(self, name: str) -> Table:
        return self.tables[_resolve("table", name, list(self.tables))]

    def table_add(self, table: str, keys: Sequence[MatchValue] | Mapping[str, MatchValue],
                  action: str | MemberRef | GroupRef, args: Sequence[int] | Mapping[str, int] = (),
                  priority: int | None = None) -> int:
        """Add an entry; returns its handle. Priorities: a larger value wins. Entries of
        indirect tables name a ``MemberRef`` or ``GroupRef`` (an action name there makes
        an implicit member of the entry's own)."""
        with self.lock:
            return self.table(table).add(keys, self._action(action), args, priority)

    def _action(self, name: str | MemberRef | GroupRef) -> str | MemberRef | GroupRef:
        if not isinstance(name, str):
            return name
        try:
            return _resolve("action", name, list(self.program.actions))
        except SwitchRuntimeError as e:
            raise SwitchRuntimeError(ErrorCode.BAD_ACTION, e.message) from None

    def table_modify(self, table: str, handle: int, action: str | MemberRef | GroupRef,
                     args: Sequence[int] | Mapping[str, int] = ()) -> None:
        with self.lock:
            self.table(table).modify(handle, self._action(action), args)

    def table_delete(self, table: str, handle: int) -> None:
        with self.lock:
            self.table(table).delete(handle)

    def table_clear(self, table: str) -> None:
        with self.lock:
            self.table(table).clear()

    def table_entries(self, table: str) -> list[tuple[int, EntrySpec]]:
        with self.lock:
            return self.table(table).list()

    def table_find(self, table: str, keys: Sequence[MatchValue] | Mapping[str, MatchValue],
                   priority: int | None = None) -> int | None:
        with self.lock:
            return self.table(table).find(keys, priority)

    def table_set_default(self, table: str, action: str,
                          args: Sequence[int] | Mapping[str, int] = ()) -> None:
        with self.lock:
            self.table(table).set_default(_resolve("action", action,
                                                   list(self.program.actions)), args)

    def table_get_default(self, table: str) -> ActionCall:
        with self.lock:
            return self.table(table).get_default()

    def table_reset_default(self, table: str) -> None:
        with self.lock:
            self.table(table).reset_default()

    # -------------------------------------------------- action profiles/selectors

    def profile(self, name: str) -> ActionProfile:
        return self.profiles[_resolve("action profile", name, list(self.profiles))]

    def profile_member_add(self, profile: str, member_id: int, action: str,
                           args: Sequence[int] | Mapping[str, int] = ()) -> None:
        with self.lock:
            self.profile(profile).member_add(member_id, self._action_name(action), args)

    def profile_member_modify(self, profile: str, member_id: int, action: str,
                              args: Sequence[int] | Mapping[str, int] = ()) -> None:
        with self.lock:
            self.profile(profile).member_modify(member_id, self._action_name(action), args)

    def profile_member_delete(self, profile: str, member_id: int) -> None:
        with self.lock:
            self.profile(profile).member_delete(member_id)

    def profile_members(self, profile: str) -> list[ProfileMember]:
        with self.lock:
            return [ProfileMember(m.mid, ActionCall(m.action, m.cp_args))
                    for m in self.profile(profile).members.values()]

    def profile_group_add(self, profile: str, group_id: int,
                          members: Sequence[int] | Mapping[int, int] = (),
                          max_size: int = 0) -> None:
        """``members``: member ids, or member id -> weight."""
        with self.lock:
            self.profile(profile).group_add(group_id, _members(members), max_size)

    def profile_group_modify(self, profile: str, group_id: int,
                             members: Sequence[int] | Mapping[int, int]) -> None:
        with self.lock:
            self.profile(profile).group_modify(group_id, _members(members))

    def profile_group_delete(self, profile: str, group_id: int) -> None:
        with self.lock:
            self.profile(profile).group_delete(group_id)

    def profile_groups(self, profile: str) -> list[ProfileGroup]:
        with self.lock:
            return [ProfileGroup(g.gid, dict(g.weights), g.max_size)
                    for g in self.profile(profile).groups.values()]

    def _action_name(self, name: str) -> str:
        a = self._action(name)
        assert isinstance(a, str)
        return a

    # ------------------------------------------------------------------- PRE

    def mc_group_set(self, gid: int, replicas: Sequence[tuple[int, int]]) -> None:
        with self.lock:
            self.pre.group_set(gid, replicas)

    def mc_group_delete(self, gid: int) -> None:
        with self.lock:
            self.pre.group_delete(gid)

    def mc_groups(self) -> dict[int, list[tuple[int, int]]]:
        with self.lock:
            return {g: list(r) for g, r in self.pre.groups.items()}

    def clone_session_set(self, session: int, replicas: Sequence[tuple[int, int]],
                          truncate: int | None = None) -> None:
        with self.lock:
            self.pre.session_set(session, replicas, truncate)

    def clone_session_delete(self, session: int) -> None:
        with self.lock:
            self.pre.session_delete(session)

    def clone_session_get(self, session: int) -> tuple[list[tuple[int, int]], int | None] | None:
        with self.lock:
            s = self.pre.session(session)
            return None if s is None else (list(s.replicas), s.truncate)

    # -------------------------------------------------------------- registers

    def _register(self, name: str) -> Any:
        return self.externs.registers[_resolve("register", name, list(self.externs.registers))]

    def _index(self, size: int, index: int, what: str) -> None:
        if not isinstance(index, int) or not 0 <= index < size:
            raise SwitchRuntimeError(ErrorCode.OUT_OF_RANGE,
                                     f"{what}: index {index!r} not in [0, {size})")

    def register_read(self, name: str, index: int) -> int:
        """The value as the program sees it (signed for int<W> registers)."""
        with self.lock:
            r = self._register(name)
            self._index(r.size, index, r.name)
            return r.read(index)

    def register_write(self, name: str, index: int, value: int) -> None:
        with self.lock:
            r = self._register(name)
            self._index(r.size, index, r.name)
            w = r.width
            if not isinstance(value, int) or not -(1 << w) < value < (1 << w):
                raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT,
                                         f"{r.name}: value {value!r} does not fit in {w} bits")
            value &= (1 << w) - 1
            if r.signed and value >> (w - 1):
                value -= 1 << w
            r.write(index, value)

    def register_reset(self, name: str) -> None:
        with self.lock:
            self._register(name).reset()

    def register_fqn(self, name: str) -> str:
        """The full name of register ``name`` (which may be a unique suffix of it)."""
        with self.lock:
            return str(self._register(name).name)

    def register_size(self, name: str) -> int:
        with self.lock:
            return self._register(name).size

    # --------------------------------------------------------------- counters

    def _counter(self, name: str) -> Any:
        return self.externs.counters[_resolve("counter", name, list(self.externs.counters))]

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        with self.lock:
            c = self._counter(name)
            self._index(c.size, index, c.name)
            return int(c.packets[index]), int(c.bytes[index])

    def counter_write(self, name: str, index: int, packets: int, nbytes: int) -> None:
        with self.lock:
            c = self._counter(name)
            self._index(c.size, index, c.name)
            c.packets[index] = packets
            c.bytes[index] = nbytes

    def counter_reset(self, name: str) -> None:
        with self.lock:
            c = self._counter(name)
            c.packets[:] = [0] * c.size
            c.bytes[:] = [0] * c.size

    def counter_size(self, name: str) -> int:
        with self.lock:
            return self._counter(name).size

    def _direct(self, table: str, handle: int, what: str) -> Any:
        t = self.table(table)
        e = t.entry(handle)
        if what == "counter" and e.counter is None:
            raise SwitchRuntimeError(ErrorCode.NOT_FOUND, f"table {t.name} has no direct counter")
        if what == "meter" and e.meter is None:
            raise SwitchRuntimeError(ErrorCode.NOT_FOUND, f"table {t.name} has no direct meter")
        return e

    def direct_counter_read(self, table: str, handle: int) -> tuple[int, int]:
        with self.lock:
            e = self._direct(table, handle, "counter")
            return e.counter[0], e.counter[1]

    def direct_counter_write(self, table: str, handle: int, packets: int, nbytes: int) -> None:
        with self.lock:
            e = self._direct(table, handle, "counter")
            e.counter[0], e.counter[1] = packets, nbytes

    # ----------------------------------------------------------------- meters

    def _meter(self, name: str) -> Any:
        return self.externs.meters[_resolve("meter", name, list(self.externs.meters))]

    def meter_set_rates(self, name: str, index: int, rates: list[tuple[float, int]]) -> None:
        """``rates`` = [(CIR, CBS), (PIR, PBS)], rates in bytes (or packets) per
        microsecond as BMv2 takes them; [] unconfigures the meter."""
        with self.lock:
            m = self._meter(name)
            self._index(m.size, index, m.name)
            self._check_rates(rates)
            m.meters[index].set_rates(rates)

    def meter_get_rates(self, name: str, index: int) -> list[tuple[float, int]]:
        with self.lock:
            m = self._meter(name)
            self._index(m.size, index, m.name)
            return m.meters[index].get_rates()

    def direct_meter_set_rates(self, table: str, handle: int,
                               rates: list[tuple[float, int]]) -> None:
        with self.lock:
            e = self._direct(table, handle, "meter")
            self._check_rates(rates)
            e.meter.set_rates(rates)

    @staticmethod
    def _check_rates(rates: list[tuple[float, int]]) -> None:
        if len(rates) not in (0, 2):
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT,
                                     "meter rates are [(CIR, CBS), (PIR, PBS)]")
        if rates and rates[0][0] > rates[1][0]:
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT, "CIR is larger than PIR")

    # ------------------------------------------------------------- value sets

    def value_set_set(self, name: str, members: Sequence[Sequence[MatchValue]]) -> None:
        with self.lock:
            vs = self.value_sets[_resolve("value set", name, list(self.value_sets))]
            vs.set(list(members))
