"""RECONCILE_AND_COMMIT: carry the forwarding state over to a new switch.

Used when a controller pushes a new device config with the same P4Info (the program's
code changed, its control-plane interface did not): table entries (with their cookies,
direct counter values and direct meter configs), default actions the controller set,
action profile members and groups, multicast groups, clone sessions, value sets, meter
configs, digest configs, and the contents of registers and counters are copied from the
running switch into the new one.
Const entries come with the new program itself.

With another P4Info the state cannot be carried over (ids and names may mean other
things): ``written_state`` then lists what the controller wrote, and the server answers
INVALID_ARGUMENT unless that list is empty.
"""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from switch.engine.runtime import ActionCall
from switch.runtime.entities_externs import write_value_set
from switch.runtime.entities_pre import write_pre_entry
from switch.runtime.entities_table import entry_is_const
from switch.runtime.meters import meter_rates
from switch.runtime.state import EntryExtras, PipelineState

Update = p4runtime_pb2.Update


def carry_over(old: PipelineState, new: PipelineState, cpu_port: int | None) -> None:
    """Copy ``old``'s state into ``new`` (same P4Info); engine errors propagate."""
    src, dst = old.switch, new.switch
    schema = new.schema
    for p in schema.action_profiles.values():
        name = p.preamble.name
        for m in src.profile_members(name):
            dst.profile_member_add(name, m.id, m.action.action, m.action.args)
        if p.with_selector:
            for g in src.profile_groups(name):
                dst.profile_group_add(name, g.id, g.members, g.max_size)
    new.profile_groups.update(old.profile_groups)
    for t in schema.tables.values():
        for handle, spec in src.table_entries(t.name):
            if t.is_const or entry_is_const(src, t.name, handle):
                continue
            a = spec.action
            action, args = (a.action, a.args) if isinstance(a, ActionCall) else (a, ())
            h = dst.table_add(t.name, spec.keys, action, args,
                              spec.priority if t.needs_priority else None)
            extras = old.extras(t.name, handle)
            if t.direct_counter is not None:
                dst.direct_counter_write(t.name, h, *src.direct_counter_read(t.name, handle))
            if t.direct_meter is not None and extras.meter_config is not None:
                dst.direct_meter_set_rates(t.name, h, meter_rates(
                    extras.meter_config, t.direct_meter.spec, t.name))
            new.entries[(t.name, h)] = EntryExtras(extras.controller_metadata, extras.metadata,
                                                   extras.idle_timeout_ns, extras.meter_config)
        if t.name in old.defaults:
            call = src.table_get_default(t.name)
            dst.table_set_default(t.name, call.action, call.args)
            new.defaults[t.name] = old.defaults[t.name]
    for group in old.mc_groups.values():
        pre = p4runtime_pb2.PacketReplicationEngineEntry(multicast_group_entry=group)
        write_pre_entry(new, Update.INSERT, pre, cpu_port)
    for session in old.clone_sessions.values():
        pre = p4runtime_pb2.PacketReplicationEngineEntry(clone_session_entry=session)
        write_pre_entry(new, Update.INSERT, pre, cpu_port)
    for vid, members in old.value_sets.items():
        entry = p4runtime_pb2.ValueSetEntry(value_set_id=vid, members=members)
        write_value_set(new, Update.MODIFY, entry)
    for (name, index), config in old.meter_configs.items():
        meter = next(m for m in schema.meters.values() if m.preamble.name == name)
        dst.meter_set_rates(name, index, meter_rates(config, meter.spec, name))
        new.meter_configs[(name, index)] = config
    new.digest_configs.update(old.digest_configs)
    for r in schema.registers.values():
        name = r.preamble.name
        for i in range(r.size):
            dst.register_write(name, i, src.register_read(name, i))
    for c in schema.counters.values():
        name = c.preamble.name
        for i in range(c.size):
            dst.counter_write(name, i, *src.counter_read(name, i))


def written_state(state: PipelineState) -> list[str]:
    """What the controller wrote into ``state`` (empty for a pipeline as committed)."""
    out: list[str] = []
    sw = state.switch
    for t in state.schema.tables.values():
        if any(not (t.is_const or entry_is_const(sw, t.name, h))
               for h, _ in sw.table_entries(t.name)):
            out.append(f"entries of table {t.name}")
    out += [f"the default action of table {name}" for name in sorted(state.defaults)]
    for p in state.schema.action_profiles.values():
        if sw.profile_members(p.preamble.name):
            out.append(f"members of action profile {p.preamble.name}")
    kinds = (("multicast groups", state.mc_groups), ("clone sessions", state.clone_sessions),
             ("value set members", any(state.value_sets.values())),
             ("meter configs", state.meter_configs),
             ("digest configs", state.digest_configs))
    out += [what for what, written in kinds if written]
    return out
