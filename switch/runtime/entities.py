"""Dispatch of Write updates and Read requests to the entity modules.

v1model has no architecture-specific externs: writing an ``ExternEntry`` is
UNIMPLEMENTED, a wildcard read of them (``extern_type_id`` 0, as in the spec's "read the
whole forwarding state" request) finds nothing, and a read of a given type NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4.v1 import p4runtime_pb2

from switch.runtime import entities_externs as ext
from switch.runtime.entities_pre import read_pre_entries, write_pre_entry
from switch.runtime.entities_profiles import read_groups, read_members, write_group, write_member
from switch.runtime.entities_table import read_table_entries, write_table_entry
from switch.runtime.errors import invalid_argument, not_found, unimplemented
from switch.runtime.state import PipelineState

Update = p4runtime_pb2.Update

NO_EXTERNS = "v1model has no architecture-specific externs (ExternEntry)"


def apply_update(state: PipelineState, update: p4runtime_pb2.Update,
                 cpu_port: int | None) -> None:
    utype = update.type
    if utype not in (Update.INSERT, Update.MODIFY, Update.DELETE):
        raise invalid_argument("the update type must be INSERT, MODIFY or DELETE")
    entity = update.entity
    kind = entity.WhichOneof("entity")
    if kind == "table_entry":
        write_table_entry(state, utype, entity.table_entry)
    elif kind == "packet_replication_engine_entry":
        write_pre_entry(state, utype, entity.packet_replication_engine_entry, cpu_port)
    elif kind == "counter_entry":
        ext.write_counter(state, utype, entity.counter_entry)
    elif kind == "direct_counter_entry":
        ext.write_direct_counter(state, utype, entity.direct_counter_entry)
    elif kind == "meter_entry":
        ext.write_meter(state, utype, entity.meter_entry)
    elif kind == "direct_meter_entry":
        ext.write_direct_meter(state, utype, entity.direct_meter_entry)
    elif kind == "register_entry":
        ext.write_register(state, utype, entity.register_entry)
    elif kind == "value_set_entry":
        ext.write_value_set(state, utype, entity.value_set_entry)
    elif kind == "digest_entry":
        ext.write_digest_entry(state, utype, entity.digest_entry)
    elif kind == "action_profile_member":
        write_member(state, utype, entity.action_profile_member)
    elif kind == "action_profile_group":
        write_group(state, utype, entity.action_profile_group)
    elif kind == "extern_entry":
        raise unimplemented(NO_EXTERNS)
    else:
        raise invalid_argument("the update has no entity")


def read_entity(state: PipelineState, entity: p4runtime_pb2.Entity
                ) -> Iterator[p4runtime_pb2.Entity]:
    kind = entity.WhichOneof("entity")
    if kind == "table_entry":
        return read_table_entries(state, entity.table_entry)
    if kind == "packet_replication_engine_entry":
        return read_pre_entries(state, entity.packet_replication_engine_entry)
    if kind == "counter_entry":
        return ext.read_counters(state, entity.counter_entry)
    if kind == "direct_counter_entry":
        return ext.read_direct_counters(state, entity.direct_counter_entry)
    if kind == "meter_entry":
        return ext.read_meters(state, entity.meter_entry)
    if kind == "direct_meter_entry":
        return ext.read_direct_meters(state, entity.direct_meter_entry)
    if kind == "register_entry":
        return ext.read_registers(state, entity.register_entry)
    if kind == "value_set_entry":
        return ext.read_value_sets(state, entity.value_set_entry)
    if kind == "digest_entry":
        return ext.read_digest_entries(state, entity.digest_entry)
    if kind == "action_profile_member":
        return read_members(state, entity.action_profile_member)
    if kind == "action_profile_group":
        return read_groups(state, entity.action_profile_group)
    if kind == "extern_entry":
        ext_type = entity.extern_entry.extern_type_id
        if ext_type == 0:  # every instance of every extern type: there are none
            return iter(())
        raise not_found(f"no extern type with id {ext_type} in the P4Info ({NO_EXTERNS})")
    raise invalid_argument("the read request has an empty entity")
