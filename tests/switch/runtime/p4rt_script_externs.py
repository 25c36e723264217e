"""The script, part 3: direct counters and meters, counters, meters, registers, action
profile members and groups, the PRE (multicast groups, clone sessions), value sets and
digest configs."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2
from p4rt_entities import (
    acl_entry,
    acl_src,
    clone_session,
    counter_entry,
    digest_entry,
    direct_counter,
    direct_meter,
    ecmp_entry,
    fwd_entry,
    group,
    mac,
    mc_group,
    member,
    meter_entry,
    register_entry,
    route,
    table_entries,
    value_set,
    wildcard,
)
from p4rt_helpers import exact, table_entry, ternary, update
from p4rt_session import (
    CPU_PORT,
    Answer,
    Entity,
    Session,
    read,
    reads,
    refused_inserts,
    step,
    write,
    writes,
)

# ------------------------------------------------------------------ direct counters (fwd)


def direct_counter_on_routes(s: Session) -> Entity:
    """routes has no direct counter."""
    ent = Entity()
    ent.direct_counter_entry.table_entry.CopyFrom(route(s, 0x0A0000000000, 8).table_entry)
    ent.direct_counter_entry.table_entry.ClearField("action")
    ent.direct_counter_entry.data.packet_count = 1
    return ent


def with_table_id(ent: Entity, table_id: int) -> Entity:
    ent.direct_counter_entry.table_entry.table_id = table_id
    return ent


writes("INSERT", insert_with_counter_data=lambda s: fwd_entry(
    s, 0x0B, "clone_to", b"\x05", b"\x04",
    counter_data=p4runtime_pb2.CounterData(packet_count=3, byte_count=300)))
reads(read_entry_with_counter_data=lambda s: fwd_entry(
    s, 0x0B, "", counter_data=p4runtime_pb2.CounterData()))
writes("MODIFY", modify_direct_counter=lambda s: direct_counter(s, 0x0A, (5, 500)))
reads(read_direct_counter=lambda s: direct_counter(s, 0x0A),
      read_direct_counters_of_table=lambda s: direct_counter(s, None),
      read_direct_counters_of_all_tables=lambda s: wildcard("direct_counter_entry"),
      read_direct_counter_missing_entry=lambda s: direct_counter(s, 0x0E),
      read_direct_counter_unknown_table=lambda s: with_table_id(direct_counter(s, 0x0A),
                                                                0x02FFFFFF))
writes("MODIFY",
       modify_direct_counter_missing_entry=lambda s: direct_counter(s, 0x0E, (1, 1)),
       direct_counter_on_table_without_one=direct_counter_on_routes)
writes("INSERT", insert_direct_counter=lambda s: direct_counter(s, 0x0A, (1, 1)))

# ------------------------------------------------------------------ direct meters (acl)


def acl_meter_entry(s: Session, src: int = 0x0D00) -> Entity:
    return acl_entry(s, [ternary(acl_src(s), mac(src), mac(0xFF00))], 60)


def with_meter_config(ent: Entity, read: bool = False) -> Entity:
    c = ent.table_entry.meter_config
    if read:
        ent.table_entry.ClearField("action")
        c.SetInParent()
    else:
        c.cir, c.cburst, c.pir, c.pburst = 10, 20, 30, 40
    return ent


writes("INSERT", insert_with_meter_config=lambda s: with_meter_config(acl_meter_entry(s)))
reads(read_entry_with_meter_config=lambda s: with_meter_config(acl_meter_entry(s), read=True))
writes("MODIFY", modify_direct_meter=lambda s: direct_meter(s, acl_meter_entry(s),
                                                            (100, 200, 300, 400)))
reads(read_direct_meter=lambda s: direct_meter(s, acl_meter_entry(s)),
      read_direct_meters_of_table=lambda s: direct_meter(s, None))
writes("MODIFY",
       modify_direct_meter_cir_above_pir=lambda s: direct_meter(s, acl_meter_entry(s),
                                                                (300, 200, 100, 400)),
       modify_direct_meter_missing_entry=lambda s: direct_meter(s, acl_meter_entry(s, 0x0E00),
                                                                (1, 2, 3, 4)))


@step
def reset_direct_meter(s: Session) -> Answer:
    """A DirectMeterEntry without a config goes back to the default (all GREEN)."""
    answer = write(s, update("MODIFY", direct_meter(s, acl_meter_entry(s))))
    return answer.plus(*read(s, direct_meter(s, acl_meter_entry(s))).data)


# ------------------------------------------------------------------ counters, meters, registers


def unknown_id(ent: Entity, kind: str, field: str, value: int) -> Entity:
    setattr(getattr(ent, kind), field, value)
    return ent


writes("MODIFY", modify_counter=lambda s: counter_entry(s, "etype_counter", 3, (10, 1000)))
reads(read_counter=lambda s: counter_entry(s, "etype_counter", 3),
      read_counter_all_cells=lambda s: counter_entry(s, "etype_counter"),
      read_all_counters=lambda s: counter_entry(s, ""))


@step
def modify_counter_all_cells(s: Session) -> Answer:
    """No index: every cell (then each cell is zeroed again, one by one)."""
    answer = write(s, update("MODIFY", counter_entry(s, "etype_counter", None, (1, 2))))
    answer = answer.plus(*read(s, counter_entry(s, "etype_counter")).data)
    write(s, *(update("MODIFY", counter_entry(s, "etype_counter", i, (0, 0)))
               for i in range(8)))
    return answer


writes("MODIFY",
       modify_counter_index_out_of_range=lambda s: counter_entry(s, "etype_counter", 8,
                                                                 (1, 1)),
       modify_counter_negative_index=lambda s: counter_entry(s, "etype_counter", -1, (1, 1)),
       modify_unknown_counter=lambda s: unknown_id(
           counter_entry(s, "etype_counter", 1, (1, 1)), "counter_entry", "counter_id",
           0x12FFFFFF))
reads(read_counter_index_out_of_range=lambda s: counter_entry(s, "etype_counter", 8))
writes("INSERT", insert_counter=lambda s: counter_entry(s, "etype_counter", 1, (1, 1)))

writes("MODIFY", modify_meter=lambda s: meter_entry(s, "etype_meter", 1,
                                                    (1000, 100, 2000, 200)))
reads(read_meter=lambda s: meter_entry(s, "etype_meter", 1),
      read_meter_all_cells=lambda s: meter_entry(s, "etype_meter"),
      read_all_meters=lambda s: meter_entry(s, ""))


@step
def reset_meter(s: Session) -> Answer:
    answer = write(s, update("MODIFY", meter_entry(s, "etype_meter", 1)))
    return answer.plus(*read(s, meter_entry(s, "etype_meter", 1)).data)


writes("MODIFY",
       modify_meter_index_out_of_range=lambda s: meter_entry(s, "etype_meter", 4,
                                                             (1, 1, 2, 2)),
       modify_meter_cir_above_pir=lambda s: meter_entry(s, "etype_meter", 2,
                                                        (3000, 100, 2000, 200)),
       modify_unknown_meter=lambda s: unknown_id(
           meter_entry(s, "etype_meter", 1, (1, 1, 2, 2)), "meter_entry", "meter_id",
           0x14FFFFFF))
writes("INSERT", insert_meter=lambda s: meter_entry(s, "etype_meter", 2, (1, 1, 2, 2)))

reads(read_register=lambda s: register_entry(s, 0),
      read_unknown_register=lambda s: unknown_id(register_entry(s, 0), "register_entry",
                                                 "register_id", 0x16FFFFFF))
writes("MODIFY", modify_register=lambda s: register_entry(s, 1, b"\x07"))

# ------------------------------------------------------------------ action profile members, groups


def group_with_weight_two(s: Session) -> Entity:
    ent = group(s, 13, [1])
    ent.action_profile_group.members[0].weight = 2
    return ent


writes("INSERT",
       insert_members=lambda s: [member(s, m) for m in (1, 2, 3)],
       insert_member_duplicate=lambda s: member(s, 1))
writes("MODIFY",
       modify_member=lambda s: member(s, 3, "to_cpu", b"\x07"),
       modify_member_missing=lambda s: member(s, 9))
writes("INSERT",
       insert_member_action_not_in_table=lambda s: member(s, 4, "forward", b"\x01"),
       insert_member_unknown_profile=lambda s: member(s, 4, profile=0x11FFFFFF),
       insert_member_bad_param=lambda s: member(s, 4, "to_cpu", b"\x20"),
       insert_group=lambda s: group(s, 10, [1, 2]),
       insert_group_duplicate=lambda s: group(s, 10, [1]),
       insert_group_missing_member=lambda s: group(s, 11, [1, 9]))


@step
def insert_group_repeated_member(s: Session) -> Answer:
    answer = write(s, update("INSERT", group(s, 11, [1, 1])))
    write(s, update("DELETE", group(s, 11, [])))  # BMv2 keeps the group it began
    return answer


@step
def insert_group_larger_than_selector(s: Session) -> Answer:
    """max_size 17 in a selector of 16 members."""
    answer = write(s, update("INSERT", group(s, 11, [1], max_size=17)))
    write(s, update("DELETE", group(s, 11, [])))
    return answer


refused_inserts(insert_group_empty=lambda s: group(s, 12, []),
                insert_group_weight_two=group_with_weight_two)
writes("MODIFY",
       modify_group=lambda s: group(s, 10, [1, 2, 3]),
       modify_group_missing=lambda s: group(s, 14, [1]))
reads(read_members=lambda s: wildcard("action_profile_member"),
      read_groups=lambda s: wildcard("action_profile_group"),
      read_one_group=lambda s: group(s, 10, []))


def direct_entry_with_member(s: Session) -> Entity:
    ent = fwd_entry(s, 0x0E, "")
    ent.table_entry.action.action_profile_member_id = 1
    return ent


writes("INSERT",
       insert_entry_with_group=lambda s: ecmp_entry(s, 0x0A, group_id=10),
       insert_entry_with_member=lambda s: ecmp_entry(s, 0x0B, member_id=2),
       insert_entry_with_missing_group=lambda s: ecmp_entry(s, 0x0C, group_id=99),
       insert_entry_with_missing_member=lambda s: ecmp_entry(s, 0x0C, member_id=99),
       insert_indirect_entry_with_direct_action=lambda s: table_entry(
           s.table("ecmp"), [exact(s.field("ecmp", "hdr.ethernet.dst"), mac(0x0C))],
           s.action("to_cpu"), (b"\x01",)),
       insert_direct_entry_with_member=direct_entry_with_member)
reads(read_indirect_entries=lambda s: table_entries(s, "ecmp"))
writes("DELETE",
       delete_member_in_group=lambda s: member(s, 3),
       delete_member_used_by_entry=lambda s: member(s, 2),
       delete_group_used_by_entry=lambda s: group(s, 10, []),
       delete_member_missing=lambda s: member(s, 9))

# ------------------------------------------------------------------ multicast groups

writes("INSERT",
       insert_multicast_group=lambda s: mc_group(1, (CPU_PORT, 1), (CPU_PORT, 2)),
       insert_multicast_group_duplicate=lambda s: mc_group(1, (1, 1)),
       insert_multicast_group_zero=lambda s: mc_group(0, (1, 1)))
refused_inserts(insert_multicast_group_repeated_replica=lambda s: mc_group(2, (1, 1), (1, 1)))
writes("INSERT", insert_multicast_group_empty=lambda s: mc_group(3))
writes("MODIFY",
       modify_multicast_group=lambda s: mc_group(3, (2, 1), (3, 1), (3, 2)),
       modify_multicast_group_missing=lambda s: mc_group(4, (1, 1)))
writes("DELETE", delete_multicast_group_missing=lambda s: mc_group(4))
reads(read_multicast_groups=lambda s: mc_group(0),
      read_one_multicast_group=lambda s: mc_group(3))
writes("DELETE", delete_multicast_group=lambda s: mc_group(3))
reads(read_missing_multicast_group=lambda s: mc_group(3))

# ------------------------------------------------------------------ clone sessions

writes("INSERT",
       insert_clone_session=lambda s: clone_session(5, (CPU_PORT, 3)),
       insert_clone_session_duplicate=lambda s: clone_session(5, (1, 1)),
       insert_clone_session_zero=lambda s: clone_session(0, (1, 1)))
refused_inserts(insert_clone_session_several_replicas=lambda s: clone_session(6, (1, 1),
                                                                              (2, 1)),
                insert_clone_session_truncated=lambda s: clone_session(7, (1, 1), truncate=64),
                insert_clone_session_class_of_service=lambda s: clone_session(9, (1, 1),
                                                                              cos=1))
writes("INSERT", insert_second_clone_session=lambda s: clone_session(8, (1, 1)))
writes("MODIFY",
       modify_clone_session=lambda s: clone_session(8, (2, 1)),
       modify_clone_session_missing=lambda s: clone_session(9, (2, 1)))
reads(read_clone_sessions=lambda s: clone_session(0),
      read_one_clone_session=lambda s: clone_session(8))
writes("DELETE",
       delete_clone_session=lambda s: clone_session(8),
       delete_clone_session_missing=lambda s: clone_session(8))
reads(read_missing_clone_session=lambda s: clone_session(8))

# ------------------------------------------------------------------ value sets

writes("MODIFY", modify_value_set=lambda s: value_set(s, b"\x77\x77", b"\x77\x78"))
reads(read_value_set=lambda s: value_set(s))
writes("MODIFY",
       modify_value_set_too_many=lambda s: value_set(s, *(bytes([0x70, i]) for i in range(5))),
       modify_value_set_repeated_member=lambda s: value_set(s, b"\x70\x01", b"\x70\x01"),
       modify_value_set_value_too_wide=lambda s: value_set(s, b"\x01\x77\x77"),
       modify_unknown_value_set=lambda s: unknown_id(value_set(s, b"\x01"), "value_set_entry",
                                                     "value_set_id", 0x03FFFFFF))
writes("INSERT", insert_value_set=lambda s: value_set(s, b"\x77\x77"))


@step
def restore_value_set(s: Session) -> Answer:
    answer = write(s, update("MODIFY", value_set(s, b"\x77\x77")))
    return answer.plus(*read(s, value_set(s)).data)


# ------------------------------------------------------------------ digest configs (unset)

reads(read_digest_config_unset=lambda s: digest_entry(s, config=False),
      read_all_digest_configs_unset=lambda s: wildcard("digest_entry"),
      read_unknown_digest=lambda s: unknown_id(digest_entry(s, config=False), "digest_entry",
                                               "digest_id", 0x17FFFFFF))
writes("MODIFY", modify_digest_config_unset=lambda s: digest_entry(s))
writes("DELETE", delete_digest_config_unset=lambda s: digest_entry(s, config=False))
writes("INSERT", insert_digest_unknown_id=lambda s: unknown_id(
    digest_entry(s), "digest_entry", "digest_id", 0x17FFFFFF))
