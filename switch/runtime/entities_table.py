"""``TableEntry``: insert, modify, delete and read match-action table entries.

Every update is checked completely before the engine is touched, so that a failed
update leaves the table as it was. Rules followed (P4Runtime 1.x):

* priority > 0 for tables with a ternary, range or optional field, 0 otherwise;
* the default entry (``is_default_action``) can only be modified: without an action it
  is reset to the program's default; a const default action is PERMISSION_DENIED;
* const tables (``const entries``) and const entries: INSERT, DELETE and a MODIFY with
  an action are PERMISSION_DENIED; MODIFY of direct resources is allowed;
* a MODIFY with an action replaces the entry's action, controller_metadata and metadata;
  one without an action changes only the direct resources (the spec calls it a no-op
  otherwise), so the entry keeps its cookies;
* ``idle_timeout_ns`` on a table with ``support_timeout`` is UNIMPLEMENTED (the switch
  has no idle timeout), elsewhere INVALID_ARGUMENT;
* per-color meter counters (``meter_counter_data``) are UNIMPLEMENTED;
* indirect tables (``implementation`` = an action profile or selector) take an
  ``action_profile_member_id`` or, with a selector, an ``action_profile_group_id``
  (INVALID_ARGUMENT otherwise; an unknown member or group is NOT_FOUND, a member whose
  action the table lacks INVALID_ARGUMENT, an empty group FAILED_PRECONDITION as BMv2
  refuses it); one-shot programming (``action_profile_action_set``) is UNIMPLEMENTED;
  their default entry is the program's default action: writing one is INVALID_ARGUMENT
  (P4Runtime 1.x has no default member or group);
* reads: ``table_id`` 0 selects every table and takes no other filter (match, action,
  priority, controller_metadata, metadata: INVALID_ARGUMENT); ``is_default_action``
  selects the default entry, which has no match and priority 0 (INVALID_ARGUMENT).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from switch.engine.runtime import ActionCall, EntrySpec, GroupRef, MatchValue, MemberRef
from switch.runtime.codec import decode_match, decode_params, encode_match, encode_params
from switch.runtime.errors import (
    invalid_argument,
    not_found,
    permission_denied,
    unimplemented,
)
from switch.runtime.meters import meter_rates
from switch.runtime.schema import TableInfo
from switch.runtime.state import EntryExtras, PipelineState

Update = p4runtime_pb2.Update
ActionRef = p4info_pb2.ActionRef

ONE_SHOT = ("one-shot action selector programming (action_profile_action_set) is not "
            "supported by the built-in switch: write members and a group, then point the "
            "entry at the group")

Action = str | MemberRef | GroupRef


# ------------------------------------------------------------------------------ helpers


def entry_is_const(sw: Any, table: str, handle: int) -> bool:
    """Whether the engine marks an entry const (an entry of ``const entries`` or a const
    entry of ``entries``); switches without that notion have no const entries."""
    try:
        return bool(sw.table(table).entry(handle).const)
    except Exception:  # noqa: BLE001 - an engine without per-entry const flags
        return False


def decode_priority(t: TableInfo, priority: int) -> int | None:
    if t.needs_priority:
        if priority <= 0:
            raise invalid_argument(f"table {t.name} has ternary, range or optional fields: "
                                   f"entries need a priority > 0 (got {priority})")
        return priority
    if priority != 0:
        raise invalid_argument(f"table {t.name} has no ternary, range or optional field: the "
                               f"priority must be 0 (got {priority})")
    return None


def decode_key(t: TableInfo, te: p4runtime_pb2.TableEntry) -> tuple[tuple[MatchValue, ...],
                                                                     int | None]:
    return decode_match(t.fields, te.match, f"table {t.name}"), decode_priority(t, te.priority)


def find_entry(state: PipelineState, t: TableInfo, te: p4runtime_pb2.TableEntry) -> int:
    """The engine handle of the entry ``te``'s match and priority name (NOT_FOUND)."""
    keys, prio = decode_key(t, te)
    handle = state.switch.table_find(t.name, keys, prio)
    if handle is None:
        raise not_found(f"table {t.name} has no entry with this match key")
    return handle


def decode_action(state: PipelineState, t: TableInfo, ta: p4runtime_pb2.TableAction,
                  *, default: bool) -> tuple[Action, tuple[int, ...]]:
    """(action name or member/group reference, parameter values) of a TableAction,
    checked against the table."""
    kind = ta.WhichOneof("type")
    if kind is None:
        raise invalid_argument(f"table {t.name}: the table action is empty")
    if t.indirect:
        return _decode_indirect(state, t, ta, kind, default), ()
    if kind != "action":
        raise invalid_argument(f"table {t.name} is a direct table: its entries take an "
                               f"action, not {kind}")
    aid = ta.action.action_id
    scope = t.action_scopes.get(aid)
    if scope is None:
        known = state.schema.actions.get(aid)
        what = f"action {known.preamble.name}" if known else f"action id {aid}"
        raise invalid_argument(f"{what} is not an action of table {t.name}")
    action = state.schema.actions[aid]
    name = action.preamble.name
    if default and scope == ActionRef.TABLE_ONLY:
        raise permission_denied(f"action {name} is @tableonly in {t.name}: it cannot be the "
                                "default action")
    if not default and scope == ActionRef.DEFAULT_ONLY:
        raise permission_denied(f"action {name} is @defaultonly in {t.name}: entries cannot "
                                "use it")
    return name, decode_params(action, ta.action.params)


def _decode_indirect(state: PipelineState, t: TableInfo, ta: p4runtime_pb2.TableAction,
                     kind: str, default: bool) -> MemberRef | GroupRef:
    if default:
        raise invalid_argument(f"table {t.name} is an indirect table: its default action is "
                               "the program's and cannot be written (P4Runtime 1.x)")
    profile = state.schema.action_profiles.get(t.info.implementation_id)
    selector = profile is not None and profile.with_selector
    if kind == "action_profile_member_id":
        return MemberRef(ta.action_profile_member_id)
    if kind == "action_profile_group_id":
        if not selector:
            raise invalid_argument(f"table {t.name}: its action profile has no selector, so "
                                   "entries take a member id, not a group id")
        return GroupRef(ta.action_profile_group_id)
    if kind == "action_profile_action_set":
        raise unimplemented(f"table {t.name}: {ONE_SHOT}")
    raise invalid_argument(f"table {t.name} is an indirect table: its entries take an action "
                           f"profile member id{' or group id' if selector else ''}, not {kind}")


def _check_common(t: TableInfo, utype: int, te: p4runtime_pb2.TableEntry) -> None:
    if te.is_const:
        raise invalid_argument("is_const must be false in a write")
    if utype == Update.DELETE:
        return  # only the key is considered
    if te.HasField("time_since_last_hit"):
        raise invalid_argument("time_since_last_hit must be unset in a write")
    if te.idle_timeout_ns:
        if te.is_default_action:
            raise invalid_argument("default entries have no idle timeout")
        if t.supports_idle_timeout:
            raise unimplemented(f"table {t.name}: idle timeout not supported by the built-in "
                                "switch")
        raise invalid_argument(f"table {t.name} does not support idle timeout")
    if te.HasField("meter_counter_data"):
        raise unimplemented("per-color meter counters (meter_counter_data) are not supported")
    if te.HasField("counter_data") and t.direct_counter is None:
        raise invalid_argument(f"table {t.name} has no direct counter")
    if te.HasField("meter_config") and t.direct_meter is None:
        raise invalid_argument(f"table {t.name} has no direct meter")


def _direct_meter_rates(t: TableInfo, te: p4runtime_pb2.TableEntry) -> list | None:
    if t.direct_meter is None or not te.HasField("meter_config"):
        return None
    return meter_rates(te.meter_config, t.direct_meter.spec, f"table {t.name} direct meter")


# -------------------------------------------------------------------------------- write


def write_table_entry(state: PipelineState, utype: int, te: p4runtime_pb2.TableEntry) -> None:
    t = state.schema.table(te.table_id)
    _check_common(t, utype, te)
    if te.is_default_action:
        _write_default(state, t, utype, te)
    elif utype == Update.INSERT:
        _insert(state, t, te)
    elif utype == Update.MODIFY:
        _modify(state, t, te)
    elif utype == Update.DELETE:
        _delete(state, t, te)
    else:
        raise invalid_argument(f"unsupported update type {utype}")


def _insert(state: PipelineState, t: TableInfo, te: p4runtime_pb2.TableEntry) -> None:
    if t.is_const:
        raise permission_denied(f"table {t.name} has const entries: it cannot be changed")
    if not t.fields:
        raise invalid_argument(f"table {t.name} has no key: only its default entry can be "
                               "modified")
    keys, prio = decode_key(t, te)
    if not te.HasField("action"):
        raise invalid_argument(f"table {t.name}: an INSERT needs an action")
    name, args = decode_action(state, t, te.action, default=False)
    rates = _direct_meter_rates(t, te)
    sw = state.switch
    handle = sw.table_add(t.name, keys, name, args, prio)
    try:
        if te.HasField("counter_data"):
            sw.direct_counter_write(t.name, handle, te.counter_data.packet_count,
                                    te.counter_data.byte_count)
        if rates is not None:
            sw.direct_meter_set_rates(t.name, handle, rates)
    except Exception:
        sw.table_delete(t.name, handle)  # the update fails as a whole
        raise
    extras = EntryExtras(te.controller_metadata, te.metadata, 0,
                         _copy_config(te) if rates is not None else None)
    state.entries[(t.name, handle)] = extras


def _copy_config(te: p4runtime_pb2.TableEntry) -> p4runtime_pb2.MeterConfig:
    c = p4runtime_pb2.MeterConfig()
    c.CopyFrom(te.meter_config)
    return c


def _modify(state: PipelineState, t: TableInfo, te: p4runtime_pb2.TableEntry) -> None:
    handle = find_entry(state, t, te)
    sw = state.switch
    const = t.is_const or entry_is_const(sw, t.name, handle)
    action = None
    if te.HasField("action"):
        if const:
            raise permission_denied(f"table {t.name}: the action of a const entry cannot be "
                                    "changed")
        action = decode_action(state, t, te.action, default=False)
    rates = _direct_meter_rates(t, te)
    if action is not None:
        sw.table_modify(t.name, handle, *action)
    if te.HasField("counter_data"):
        sw.direct_counter_write(t.name, handle, te.counter_data.packet_count,
                                te.counter_data.byte_count)
    old = state.extras(t.name, handle)
    config = old.meter_config
    if t.direct_meter is not None:
        # MODIFY has assign semantics: an unset meter_config means the default config
        sw.direct_meter_set_rates(t.name, handle, rates or [])
        config = _copy_config(te) if rates is not None else None
    if action is None:  # only the direct resources change (no action: "a no-op")
        cookie, metadata = old.controller_metadata, old.metadata
    else:
        cookie, metadata = te.controller_metadata, te.metadata
    state.entries[(t.name, handle)] = EntryExtras(cookie, metadata, 0, config)


def _delete(state: PipelineState, t: TableInfo, te: p4runtime_pb2.TableEntry) -> None:
    if t.is_const:
        raise permission_denied(f"table {t.name} has const entries: it cannot be changed")
    handle = find_entry(state, t, te)
    if entry_is_const(state.switch, t.name, handle):
        raise permission_denied(f"table {t.name}: const entries cannot be deleted")
    state.switch.table_delete(t.name, handle)
    state.entries.pop((t.name, handle), None)


def _check_default_key(te: p4runtime_pb2.TableEntry) -> None:
    if len(te.match) or te.priority:
        raise invalid_argument("the default entry has no match and priority 0")


def _write_default(state: PipelineState, t: TableInfo, utype: int,
                   te: p4runtime_pb2.TableEntry) -> None:
    if utype != Update.MODIFY:
        raise invalid_argument(f"table {t.name}: the default entry can only be modified "
                               f"(got {Update.Type.Name(utype)})")
    _check_default_key(te)
    if t.const_default:
        raise permission_denied(f"table {t.name} has a const default action")
    if te.HasField("counter_data") or te.HasField("meter_config"):
        raise unimplemented("direct resources of default entries are not supported")
    sw = state.switch
    if te.HasField("action"):
        name, args = decode_action(state, t, te.action, default=True)
        assert isinstance(name, str)
        sw.table_set_default(t.name, name, args)
        state.defaults[t.name] = EntryExtras(te.controller_metadata, te.metadata)
    else:
        sw.table_reset_default(t.name)
        state.defaults.pop(t.name, None)


# --------------------------------------------------------------------------------- read


def _check_read(t: TableInfo, te: p4runtime_pb2.TableEntry) -> None:
    if te.HasField("meter_counter_data"):
        raise unimplemented("per-color meter counters (meter_counter_data) are not supported")
    if te.HasField("time_since_last_hit"):
        if t.supports_idle_timeout:
            raise unimplemented(f"table {t.name}: idle timeout not supported by the built-in "
                                "switch")
        raise invalid_argument(f"table {t.name} does not support idle timeout")


def read_table_entries(state: PipelineState, te: p4runtime_pb2.TableEntry
                       ) -> Iterator[p4runtime_pb2.Entity]:
    """The entries a TableEntry read request selects (wildcards as the spec defines)."""
    if te.table_id == 0:
        if (len(te.match) or te.HasField("action") or te.priority or te.controller_metadata
                or te.metadata):
            raise invalid_argument("a read of all tables (table_id 0) takes no other filter")
        tables = list(state.schema.tables.values())
    else:
        tables = [state.schema.table(te.table_id)]
    if te.is_default_action:
        _check_default_key(te)
    for t in tables:
        _check_read(t, te)
        if te.is_default_action:
            yield _default_entity(state, t)
            continue
        yield from _read_entries(state, t, te)


def _read_entries(state: PipelineState, t: TableInfo, te: p4runtime_pb2.TableEntry
                  ) -> Iterator[p4runtime_pb2.Entity]:
    sw = state.switch
    specs = sw.table_entries(t.name)
    if len(te.match):
        # an exact filter on the match key: compare canonical encodings
        wanted = _canonical(t, decode_match(t.fields, te.match, f"table {t.name}"))
        specs = [(h, s) for h, s in specs if _canonical(t, s.keys) == wanted]
    for handle, spec in specs:
        extras = state.extras(t.name, handle)
        if te.priority and (spec.priority or 0) != te.priority:
            continue
        if te.controller_metadata and extras.controller_metadata != te.controller_metadata:
            continue
        if te.metadata and extras.metadata != te.metadata:
            continue
        if te.HasField("action") and not _action_matches(state, spec, te.action):
            continue
        yield _entity(state, t, handle, spec, extras, te)


def _canonical(t: TableInfo, keys: tuple[MatchValue, ...]) -> list[bytes]:
    return [fm.SerializeToString() for fm in encode_match(t.fields, keys)]


def _entity(state: PipelineState, t: TableInfo, handle: int, spec: EntrySpec,
            extras: EntryExtras, req: p4runtime_pb2.TableEntry) -> p4runtime_pb2.Entity:
    sw = state.switch
    ent = p4runtime_pb2.Entity()
    e = ent.table_entry
    e.table_id = t.id
    e.match.extend(encode_match(t.fields, spec.keys))
    encode_table_action(state, spec.action, e.action)
    if t.needs_priority:
        e.priority = spec.priority or 0
    e.controller_metadata = extras.controller_metadata
    e.metadata = extras.metadata
    e.idle_timeout_ns = extras.idle_timeout_ns
    if t.is_const or entry_is_const(sw, t.name, handle):
        e.is_const = True
    if req.HasField("counter_data") and t.direct_counter is not None:
        packets, nbytes = sw.direct_counter_read(t.name, handle)
        e.counter_data.packet_count = packets
        e.counter_data.byte_count = nbytes
    if req.HasField("meter_config") and extras.meter_config is not None:
        e.meter_config.CopyFrom(extras.meter_config)
    return ent


def encode_table_action(state: PipelineState, action: ActionCall | MemberRef | GroupRef,
                        out: p4runtime_pb2.TableAction) -> None:
    if isinstance(action, MemberRef):
        out.action_profile_member_id = action.id
    elif isinstance(action, GroupRef):
        out.action_profile_group_id = action.id
    else:
        aid = state.schema.action_id(action.action)
        out.action.action_id = aid
        out.action.params.extend(encode_params(state.schema.actions[aid], action.args))


def _action_matches(state: PipelineState, spec: EntrySpec,
                    want: p4runtime_pb2.TableAction) -> bool:
    """Whether an entry passes a read's action filter (the filter's set fields)."""
    a = spec.action
    kind = want.WhichOneof("type")
    if kind == "action_profile_member_id":
        return isinstance(a, MemberRef) and a.id == want.action_profile_member_id
    if kind == "action_profile_group_id":
        return isinstance(a, GroupRef) and a.id == want.action_profile_group_id
    if kind == "action" and want.action.action_id:
        return (isinstance(a, ActionCall)
                and state.schema.action_id(a.action) == want.action.action_id)
    return True


def _default_entity(state: PipelineState, t: TableInfo) -> p4runtime_pb2.Entity:
    ent = p4runtime_pb2.Entity()
    e = ent.table_entry
    e.table_id = t.id
    e.is_default_action = True
    call = state.switch.table_get_default(t.name)
    aid = state.schema.action_id(call.action)
    e.action.action.action_id = aid
    e.action.action.params.extend(encode_params(state.schema.actions[aid], call.args))
    extras = state.defaults.get(t.name)
    if extras is not None:
        e.controller_metadata = extras.controller_metadata
        e.metadata = extras.metadata
    return ent
