"""Action profiles and action selectors: the shared action store of indirect tables.

An entry of an indirect table names a *member* (an action with its arguments) or, for
a selector, a *group* of members. Members and groups belong to the profile, so tables
sharing a profile share them. Ids are the control plane's (P4Runtime member and group
ids); each member also gets an internal handle, the lowest free one, as BMv2 allocates
them.

Member choice in a group follows BMv2 (``ActionProfile::GroupMgr::get_from_hash``):
the selector's hash algorithm runs over the ``selector`` key fields serialised MSB first
(BMv2's field-list serialisation); the member is ``members[hash % len(members)]`` with
the group's members ordered by handle. A member of weight W appears W times in a row
(BMv2 behind a P4Runtime server gets weights through W copies of the member).
The selector's ``outputWidth`` is not applied: BMv2's JSON does not carry it.
Entries may not point at an empty group (BMv2's EMPTY_GRP); a group emptied later makes
its entries run no action (BMv2's ``empty_action``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from switch.engine.hashes import ALGORITHMS, pack_bits
from switch.engine.runtime import ErrorCode, SwitchRuntimeError


class ActionView:
    """What a hit runs: the table's action index and the data-plane arguments."""

    __slots__ = ("aidx", "args")

    def __init__(self, aidx: int, args: tuple):
        self.aidx = aidx
        self.args = args


NO_ACTION = ActionView(-1, ())  # an empty group: no action runs


@dataclass
class Member:
    mid: int
    handle: int
    action: str  # fqn
    cp_args: tuple[int, ...]
    dp_args: tuple
    refs: int = 0  # table entries and groups naming it
    views: dict[int, ActionView] = field(default_factory=dict)  # id(table) -> view


@dataclass
class Group:
    gid: int
    weights: dict[int, int] = field(default_factory=dict)  # member id -> weight, as given
    max_size: int = 0
    refs: int = 0  # table entries naming it
    order: list[Member] = field(default_factory=list)  # the selection list


def _hash_fn(algo: str | None) -> Callable[[bytes], int]:
    if algo == "random":
        rng = random.Random(0)
        return lambda data: rng.getrandbits(32)
    factory = ALGORITHMS.get(algo or "")
    if factory is None:
        raise SwitchRuntimeError(ErrorCode.UNSUPPORTED, f"selector hash algorithm {algo}")
    return factory()


class ActionProfile:
    """``action_profile(size)`` or, with ``algo``, ``action_selector(algo, size, w)``."""

    def __init__(self, name: str, size: int, algo: str | None = None):
        self.name = name
        self.size = size
        self.with_selector = algo is not None
        self.algo = algo
        self._hash = _hash_fn(algo) if algo is not None else None
        self.widths: tuple[int, ...] = ()  # of the selector key fields
        self.members: dict[int, Member] = {}
        self.groups: dict[int, Group] = {}
        self.tables: list[Any] = []  # the Tables using this profile

    # ------------------------------------------------------------------ helpers

    def _err(self, code: ErrorCode, msg: str) -> SwitchRuntimeError:
        return SwitchRuntimeError(code, f"action profile {self.name}: {msg}")

    def member(self, mid: int) -> Member:
        m = self.members.get(mid)
        if m is None:
            raise self._err(ErrorCode.NOT_FOUND, f"no member {mid}")
        return m

    def group(self, gid: int) -> Group:
        g = self.groups.get(gid)
        if g is None:
            raise self._err(ErrorCode.NOT_FOUND, f"no group {gid}")
        return g

    def _check_id(self, oid: Any, what: str) -> None:
        if isinstance(oid, bool) or not isinstance(oid, int) or oid < 0:
            raise self._err(ErrorCode.INVALID_ARGUMENT, f"{what} id {oid!r} is not an int >= 0")

    def _action(self, action: str, args: Any) -> tuple[str, tuple, tuple]:
        """(fqn, control-plane args, data-plane args), checked by a table that has the
        action (tables sharing a profile may list different actions)."""
        err: SwitchRuntimeError | None = None
        for t in self.tables:
            try:
                aidx = t.action_index_for(action)
            except SwitchRuntimeError as e:
                err = err or e
                continue
            cp, dp = t.check_args(aidx, args)
            return t.actions[aidx].fqn, cp, dp
        if err is not None:
            raise SwitchRuntimeError(err.code, f"action profile {self.name}: {err.message}")
        raise self._err(ErrorCode.BAD_ACTION, "no table uses this profile")

    def _free_handle(self) -> int:
        used = {m.handle for m in self.members.values()}
        h = 0
        while h in used:
            h += 1
        return h

    # ------------------------------------------------------------------ members

    def member_add(self, mid: int, action: str, args: Any = ()) -> None:
        self._check_id(mid, "member")
        if mid in self.members:
            raise self._err(ErrorCode.ALREADY_EXISTS, f"member {mid} already exists")
        if len(self.members) >= self.size:
            raise self._err(ErrorCode.TABLE_FULL, f"holds at most {self.size} members")
        fqn, cp, dp = self._action(action, args)
        self.members[mid] = Member(mid, self._free_handle(), fqn, cp, dp)

    def member_modify(self, mid: int, action: str, args: Any = ()) -> None:
        m = self.member(mid)
        fqn, cp, dp = self._action(action, args)
        if fqn != m.action and m.refs:
            for t in self.tables:
                if fqn not in t.action_index and t.uses_member(m):
                    raise self._err(ErrorCode.BAD_ACTION,
                                    f"member {mid} is used by table {t.name}, which has no "
                                    f"action {fqn}")
        m.action, m.cp_args, m.dp_args = fqn, cp, dp
        m.views.clear()

    def member_delete(self, mid: int) -> None:
        m = self.member(mid)
        if m.refs:
            raise self._err(ErrorCode.IN_USE, f"member {mid} is still used by "
                                              f"{m.refs} group(s) or table entries")
        del self.members[mid]

    # ------------------------------------------------------------------- groups

    def _need_selector(self) -> None:
        if not self.with_selector:
            raise self._err(ErrorCode.INVALID_ARGUMENT,
                            "an action profile without a selector has no groups")

    def group_add(self, gid: int, members: Sequence[int] | dict[int, int] = (),
                  max_size: int = 0) -> None:
        self._need_selector()
        self._check_id(gid, "group")
        if gid in self.groups:
            raise self._err(ErrorCode.ALREADY_EXISTS, f"group {gid} already exists")
        weights = self._weights(members)
        g = Group(gid, max_size=max_size)
        self._set_members(g, weights)
        self.groups[gid] = g

    def group_modify(self, gid: int, members: Sequence[int] | dict[int, int]) -> None:
        g = self.group(gid)
        self._set_members(g, self._weights(members))

    def group_delete(self, gid: int) -> None:
        g = self.group(gid)
        if g.refs:
            raise self._err(ErrorCode.IN_USE,
                            f"group {gid} is still used by {g.refs} table entries")
        self._set_members(g, {})
        del self.groups[gid]

    def _weights(self, members: Sequence[int] | dict[int, int]) -> dict[int, int]:
        """Member id -> weight, checked (members exist, weights >= 1, no duplicate)."""
        if isinstance(members, dict):
            pairs = list(members.items())
        else:
            pairs = [(m, 1) for m in members]
        out: dict[int, int] = {}
        for mid, w in pairs:
            self.member(mid)
            if mid in out:
                raise self._err(ErrorCode.INVALID_ARGUMENT,
                                f"member {mid} is listed twice (use a weight)")
            if isinstance(w, bool) or not isinstance(w, int) or w < 1:
                raise self._err(ErrorCode.INVALID_ARGUMENT,
                                f"member {mid}: weight {w!r} is not a positive int")
            out[mid] = w
        return out

    def _set_members(self, g: Group, weights: dict[int, int]) -> None:
        for mid in g.weights:
            self.members[mid].refs -= 1
        for mid in weights:
            self.members[mid].refs += 1
        g.weights = dict(weights)
        ordered = sorted((self.members[mid] for mid in weights), key=lambda m: m.handle)
        g.order = [m for m in ordered for _ in range(weights[m.mid])]

    # ------------------------------------------------------------------- lookup

    def view(self, table: Any, m: Member) -> ActionView:
        v = m.views.get(id(table))
        if v is None:
            v = m.views[id(table)] = ActionView(table.action_index[m.action], m.dp_args)
        return v

    def select(self, table: Any, g: Group, sel: tuple[int, ...]) -> ActionView:
        order = g.order
        if not order:
            return NO_ACTION
        assert self._hash is not None
        h = self._hash(pack_bits(list(zip(sel, self.widths, strict=True))))
        return self.view(table, order[h % len(order)])
