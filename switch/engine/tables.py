"""Match-action tables at run time: entries, default action, direct resources.

Generated code calls ``table.lookup(key)`` (bound once, never rebound) and runs the
action of the returned entry, or of ``table.default`` when it returns None. The key
is a scalar for a one-key table and a tuple otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from switch.engine.match import KeySpec, make_index, needs_priority, normalize
from switch.engine.meters import Meter
from switch.engine.profiles import ActionProfile, ActionView, Group, Member
from switch.engine.runtime import (
    ActionCall,
    EntrySpec,
    ErrorCode,
    GroupRef,
    MatchValue,
    MemberRef,
    SwitchRuntimeError,
)

Action = str | MemberRef | GroupRef


@dataclass
class ActionSpec:
    """An action a table may run. ``params`` are the control-plane parameters:
    (name, width, signed)."""

    fqn: str
    params: list[tuple[str, int, bool]]
    default_only: bool = False
    table_only: bool = False


class Entry:
    __slots__ = ("aidx", "args", "handle", "keys", "priority", "ident", "seq", "counter",
                 "meter", "masked", "ranges", "const", "cp_args", "ref")

    def __init__(self, aidx: int, args: tuple, cp_args: tuple[int, ...]):
        self.aidx = aidx
        self.args = args  # data-plane values (signed for int<W> parameters)
        self.cp_args = cp_args  # as the control plane gave them
        self.handle = -1
        self.keys: tuple[MatchValue, ...] = ()
        self.priority: int | None = None
        self.ident: Any = None
        self.seq = 0
        self.counter: list[int] | None = None
        self.meter: Meter | None = None
        self.const = False
        # indirect entries: the profile member or group (aidx is then -1)
        self.ref: Member | Group | None = None


@dataclass
class TableConfig:
    name: str
    keys: list[KeySpec]
    actions: list[ActionSpec]
    default_action: str
    default_args: list[int]
    default_is_const: bool = False
    size: int = 1024
    entries_const: bool = False
    direct_counter: str | None = None
    direct_meter: str | None = None
    direct_meter_bytes: bool = False
    # how the program numbered its own entries; the table itself always lets the
    # larger priority win (P4Runtime's rule), the compiler converts the program's
    largest_priority_wins: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def _to_signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) else v


class Table:
    def __init__(self, cfg: TableConfig, meter_clock: Callable[[], int] | None = None):
        self.cfg = cfg
        self.name = cfg.name
        self.keys = cfg.keys
        if cfg.default_action not in {a.fqn for a in cfg.actions}:
            # a table that names no default action runs NoAction on a miss
            cfg.actions = [*cfg.actions, ActionSpec(cfg.default_action, [], default_only=True)]
        self.actions = cfg.actions
        self.action_index = {a.fqn: i for i, a in enumerate(cfg.actions)}
        self.needs_priority = needs_priority(cfg.keys)
        self.index = make_index(cfg.keys)
        self.lookup = self.index.lookup
        self.entries: dict[int, Entry] = {}
        self._handles = itertools.count()
        self._seq = itertools.count()
        self._meter_clock = meter_clock
        self.default = self._make_default(cfg.default_action, cfg.default_args)
        self.initial_default = self.default
        self.profile: ActionProfile | None = None  # set for indirect tables
        #: counts the changes of entries and default action (a copy of the table, such
        #: as the native engine's arrays, is up to date while this stays the same)
        self.version = 0

    # ------------------------------------------------------------ name helpers

    def _action(self, name: str, *, for_default: bool) -> int:
        idx = self.action_index.get(name)
        if idx is None:
            matches = [i for fqn, i in self.action_index.items()
                       if fqn.endswith("." + name) or fqn == name.lstrip(".")]
            if len(matches) == 1:
                idx = matches[0]
            elif len(matches) > 1:
                raise SwitchRuntimeError(ErrorCode.BAD_ACTION,
                                         f"action name {name!r} is ambiguous in {self.name}")
        if idx is None:
            raise SwitchRuntimeError(ErrorCode.BAD_ACTION,
                                     f"action {name!r} is not an action of table {self.name}")
        spec = self.actions[idx]
        if for_default and spec.table_only:
            raise SwitchRuntimeError(ErrorCode.BAD_ACTION,
                                     f"action {spec.fqn} is @tableonly in {self.name}")
        if not for_default and spec.default_only:
            raise SwitchRuntimeError(ErrorCode.BAD_ACTION,
                                     f"action {spec.fqn} is @defaultonly in {self.name}")
        return idx

    def _args(self, aidx: int, args: Sequence[int] | Mapping[str, int]) -> tuple[tuple, tuple]:
        spec = self.actions[aidx]
        if isinstance(args, Mapping):
            names = [p[0] for p in spec.params]
            unknown = set(args) - set(names)
            if unknown:
                raise SwitchRuntimeError(ErrorCode.BAD_ACTION_DATA,
                                         f"{spec.fqn} has no parameter {sorted(unknown)[0]!r}")
            missing = [n for n in names if n not in args]
            if missing:
                raise SwitchRuntimeError(ErrorCode.BAD_ACTION_DATA,
                                         f"{spec.fqn}: missing parameter {missing[0]!r}")
            values = [args[n] for n in names]
        else:
            values = list(args)
        if len(values) != len(spec.params):
            raise SwitchRuntimeError(
                ErrorCode.BAD_ACTION_DATA,
                f"{spec.fqn} takes {len(spec.params)} parameters, got {len(values)}")
        cp = []
        dp = []
        for (pname, w, signed), v in zip(spec.params, values, strict=True):
            if isinstance(v, bool):
                v = int(v)
            if not isinstance(v, int):
                raise SwitchRuntimeError(ErrorCode.BAD_ACTION_DATA,
                                         f"{spec.fqn}: parameter {pname} is not an int")
            if signed and -(1 << (w - 1)) <= v < 0:
                v += 1 << w
            if v < 0 or v >> w:
                raise SwitchRuntimeError(
                    ErrorCode.BAD_ACTION_DATA,
                    f"{spec.fqn}: value {v} of parameter {pname} does not fit in {w} bits")
            cp.append(v)
            dp.append(_to_signed(v, w) if signed else v)
        return tuple(cp), tuple(dp)

    def _make_default(self, action: str, args: Sequence[int] | Mapping[str, int]) -> Entry:
        aidx = self._action(action, for_default=True)
        cp, dp = self._args(aidx, args)
        return Entry(aidx, dp, cp)

    def _keys(self, keys: Sequence[Any] | Mapping[str, Any]) -> tuple[MatchValue, ...]:
        specs = self.keys
        if isinstance(keys, Mapping):
            by_pos: dict[int, Any] = {}
            for name, v in keys.items():
                pos = self._key_pos(name)
                if pos in by_pos:
                    raise SwitchRuntimeError(ErrorCode.BAD_MATCH_KEY,
                                             f"key {specs[pos].name} given twice")
                by_pos[pos] = v
            values = []
            for i, spec in enumerate(specs):
                if i in by_pos:
                    values.append(by_pos[i])
                elif spec.kind in ("ternary", "optional", "lpm", "range"):
                    values.append(_wildcard(spec))  # omitted = don't care (P4Runtime)
                else:
                    raise SwitchRuntimeError(ErrorCode.BAD_MATCH_KEY,
                                             f"{self.name}: missing exact key {spec.name}")
        else:
            values = list(keys)
        if len(values) != len(specs):
            raise SwitchRuntimeError(
                ErrorCode.BAD_MATCH_KEY,
                f"{self.name} has {len(specs)} key fields, got {len(values)}")
        return tuple(normalize(s, v) for s, v in zip(specs, values, strict=True))

    def _key_pos(self, name: str) -> int:
        for i, s in enumerate(self.keys):
            if s.name == name:
                return i
        matches = [i for i, s in enumerate(self.keys)
                   if s.name.endswith("." + name) or s.name.split("[")[0] == name]
        if len(matches) == 1:
            return matches[0]
        raise SwitchRuntimeError(ErrorCode.BAD_MATCH_KEY,
                                 f"{self.name} has no (unique) key named {name!r}")

    def _priority(self, priority: int | None) -> int | None:
        if not self.needs_priority:
            return None
        if priority is None:
            priority = 0
        if not isinstance(priority, int):
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT, "priority must be an int")
        return priority

    def _check_mutable(self) -> None:
        if self.cfg.entries_const:
            raise SwitchRuntimeError(ErrorCode.CONST_TABLE,
                                     f"table {self.name} has const entries")

    def _get(self, handle: int) -> Entry:
        e = self.entries.get(handle)
        if e is None:
            raise SwitchRuntimeError(ErrorCode.NOT_FOUND,
                                     f"table {self.name} has no entry with handle {handle}")
        return e

    # ---------------------------------------------------------------- mutation

    def add(self, keys: Sequence[Any] | Mapping[str, Any], action: Action,
            args: Sequence[int] | Mapping[str, int] = (), priority: int | None = None,
            *, const: bool = False) -> int:
        """Add an entry running ``action``: an action name, or for an indirect table a
        ``MemberRef``/``GroupRef`` (an action name there stands for an implicit member of
        its own, as p4c's STF tests write entries of such tables)."""
        if not const:
            self._check_mutable()
        if not self.keys:
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT,
                                     f"table {self.name} has no key: only its default "
                                     "action can be set")
        mvs = self._keys(keys)
        prio = self._priority(priority)
        if isinstance(action, str):
            aidx = self._action(action, for_default=False)
            cp, dp = self._args(aidx, args)
            ref = None
        else:
            aidx, cp, dp = -1, (), ()
            ref = self._ref(action)
        ident = self.index.ident(mvs, prio)
        if self.index.find(ident) is not None:
            raise SwitchRuntimeError(ErrorCode.ALREADY_EXISTS,
                                     f"table {self.name} already has an entry with this key")
        if len(self.entries) >= self.cfg.size and not const:
            raise SwitchRuntimeError(ErrorCode.TABLE_FULL,
                                     f"table {self.name} is full ({self.cfg.size} entries)")
        e = Entry(aidx, dp, cp)
        e.keys = mvs
        e.priority = prio
        e.ident = ident
        e.seq = next(self._seq)
        e.handle = next(self._handles)
        e.const = const
        if self.cfg.direct_counter:
            e.counter = [0, 0]
        if self.cfg.direct_meter:
            e.meter = (Meter(self.cfg.direct_meter_bytes, self._meter_clock)
                       if self._meter_clock else Meter(self.cfg.direct_meter_bytes))
        self.index.add(e)  # ordered by priority, higher first, then oldest first
        self.entries[e.handle] = e
        self._set_ref(e, ref)
        self.version += 1
        return e.handle

    def modify(self, handle: int, action: Action,
               args: Sequence[int] | Mapping[str, int] = ()) -> None:
        self._check_mutable()
        e = self._get(handle)
        if isinstance(action, str):
            aidx = self._action(action, for_default=False)
            cp, dp = self._args(aidx, args)
            self._set_ref(e, None)
            e.aidx, e.args, e.cp_args = aidx, dp, cp
        else:
            ref = self._ref(action)
            self._set_ref(e, ref)
            e.aidx, e.args, e.cp_args = -1, (), ()
        self.version += 1

    # ----------------------------------------------------------- indirect tables

    def _ref(self, action: MemberRef | GroupRef) -> Member | Group:
        """The profile member or group ``action`` names, checked for this table."""
        prof = self.profile
        if prof is None:
            raise SwitchRuntimeError(ErrorCode.INVALID_ARGUMENT,
                                     f"table {self.name} is a direct table: its entries "
                                     "take an action, not a member or group")
        if isinstance(action, MemberRef):
            m = prof.member(action.id)
            self._check_member(m)
            return m
        if isinstance(action, GroupRef):
            if not prof.with_selector:
                raise SwitchRuntimeError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"table {self.name}: action profile {prof.name} has no selector, so "
                    "no groups")
            g = prof.group(action.id)
            if not g.order:
                raise SwitchRuntimeError(
                    ErrorCode.FAILED_PRECONDITION,
                    f"table {self.name}: group {g.gid} of {prof.name} is empty")
            for mid in g.weights:
                self._check_member(prof.members[mid])
            return g
        raise SwitchRuntimeError(ErrorCode.BAD_ACTION, f"table {self.name}: {action!r} is not "
                                 "an action name, a MemberRef or a GroupRef")

    def _check_member(self, m: Member) -> None:
        spec = self.actions[self._action(m.action, for_default=False)]
        if spec.fqn != m.action:
            raise SwitchRuntimeError(ErrorCode.BAD_ACTION,
                                     f"member {m.mid}: action {m.action} is not an action "
                                     f"of table {self.name}")

    @staticmethod
    def _set_ref(e: Entry, ref: Member | Group | None) -> None:
        if e.ref is not None:
            e.ref.refs -= 1
        if ref is not None:
            ref.refs += 1
        e.ref = ref

    def action_index_for(self, name: str) -> int:
        """The index of the action ``name`` entries may run (BAD_ACTION otherwise)."""
        return self._action(name, for_default=False)

    def check_args(self, aidx: int, args: Sequence[int] | Mapping[str, int]
                   ) -> tuple[tuple, tuple]:
        """(control-plane, data-plane) values of the arguments of action ``aidx``."""
        return self._args(aidx, args)

    def uses_member(self, m: Member) -> bool:
        return any(e.ref is m or (isinstance(e.ref, Group) and m.mid in e.ref.weights)
                   for e in self.entries.values())

    def resolve(self, e: Entry, sel: tuple[int, ...]) -> Entry | ActionView:
        """What a hit on ``e`` runs; ``sel`` are the selector key values."""
        ref = e.ref
        if ref is None:
            return e
        prof = self.profile
        assert prof is not None
        if isinstance(ref, Member):
            return prof.view(self, ref)
        return prof.select(self, ref, sel)

    def delete(self, handle: int) -> None:
        self._check_mutable()
        e = self._get(handle)
        self.index.remove(e)
        self._set_ref(e, None)
        del self.entries[handle]
        self.version += 1

    def clear(self) -> None:
        """Remove every entry the control plane added (const entries stay)."""
        for h, e in list(self.entries.items()):
            if not e.const:
                self.index.remove(e)
                self._set_ref(e, None)
                del self.entries[h]
        self.version += 1

    def set_default(self, action: str, args: Sequence[int] | Mapping[str, int] = ()) -> None:
        if self.cfg.default_is_const:
            raise SwitchRuntimeError(ErrorCode.CONST_TABLE,
                                     f"table {self.name} has a const default action")
        self.default = self._make_default(action, args)
        self.version += 1

    def reset_default(self) -> None:
        self.default = self.initial_default
        self.version += 1

    # ------------------------------------------------------------------- reads

    def spec(self, e: Entry) -> EntrySpec:
        ref = e.ref
        action: ActionCall | MemberRef | GroupRef
        if isinstance(ref, Member):
            action = MemberRef(ref.mid)
        elif isinstance(ref, Group):
            action = GroupRef(ref.gid)
        else:
            action = ActionCall(self.actions[e.aidx].fqn, e.cp_args)
        return EntrySpec(e.keys, action, e.priority)

    def list(self) -> list[tuple[int, EntrySpec]]:
        return [(h, self.spec(e)) for h, e in self.entries.items()]

    def find(self, keys: Sequence[Any] | Mapping[str, Any],
             priority: int | None = None) -> int | None:
        mvs = self._keys(keys)
        prio = self._priority(priority)
        e = self.index.find(self.index.ident(mvs, prio))
        return None if e is None else e.handle

    def get_default(self) -> ActionCall:
        return ActionCall(self.actions[self.default.aidx].fqn, self.default.cp_args)

    def entry(self, handle: int) -> Entry:
        return self._get(handle)


def _wildcard(spec: KeySpec) -> MatchValue:
    from switch.engine.runtime import Lpm, Optional, Range, Ternary

    if spec.kind == "ternary":
        return Ternary(0, 0)
    if spec.kind == "lpm":
        return Lpm(0, 0)
    if spec.kind == "optional":
        return Optional(None)
    return Range(0, (1 << spec.width) - 1)
