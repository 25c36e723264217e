"""The script, part 2: table entries of every match kind, default entries, const and
keyless tables, reads with filters, batches."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2
from p4rt_entities import (
    acl_dst,
    acl_entry,
    acl_etype,
    acl_src,
    default_entry,
    fwd_entry,
    mac,
    route,
    table_entries,
    too_wide,
)
from p4rt_helpers import exact, lpm, optional, range_, table_entry, ternary, update
from p4rt_session import (
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


def fwd_with_value(s: Session, value: bytes) -> Entity:
    """A fwd entry (drop) whose match value is ``value`` as given."""
    ent = fwd_entry(s, 0)
    ent.table_entry.match[0].exact.value = value
    return ent


def fwd_field(s: Session) -> int:
    return s.field("fwd", "hdr.ethernet.dst")


def fwd_match(s: Session, *matches: p4runtime_pb2.FieldMatch, action: str = "drop") -> Entity:
    return table_entry(s.table("fwd"), matches, s.action(action))


def fwd_param_id(s: Session, param_id: int) -> Entity:
    ent = fwd_entry(s, 0x0D, "forward", b"\x01")
    ent.table_entry.action.action.params[0].param_id = param_id
    return ent


def src_b00(s: Session) -> p4runtime_pb2.FieldMatch:
    """The ternary match of acl's entries at priorities 20 and 30."""
    return ternary(acl_src(s), mac(0x0B00), mac(0xFF00))


def consts_entry(s: Session, etype: bytes, action: str | None) -> Entity:
    return table_entry(s.table("consts"), [exact(s.field("consts", "hdr.ethernet.etype"),
                                                 etype)],
                       s.action(action) if action else None)


# ------------------------------------------------------------------ exact (fwd, 4 entries)

writes("INSERT", insert_exact=lambda s: fwd_entry(s, 0x0A, "forward", b"\x01"),
       insert_exact_duplicate=lambda s: fwd_entry(s, 0x0A, "forward", b"\x02"))
writes("MODIFY", modify_exact=lambda s: fwd_entry(s, 0x0A, "to_cpu", b"\x01"),
       modify_exact_missing=lambda s: fwd_entry(s, 0x0B, "to_cpu", b"\x01"))
writes("DELETE", delete_exact_missing=lambda s: fwd_entry(s, 0x0B, ""))
reads(read_exact=lambda s: table_entries(s, "fwd"))
# leading zero bytes beyond the field's width: the same key as 0x0C
writes("INSERT",
       insert_exact_padded_value=lambda s: fwd_with_value(s, (0x0C).to_bytes(8, "big")))
reads(read_padded_value_back=lambda s: fwd_entry(s, 0x0C, ""))
writes("INSERT",
       insert_exact_value_too_wide=lambda s: fwd_with_value(s, too_wide(0x0D)),
       insert_exact_missing_field=lambda s: fwd_match(s),
       insert_unknown_field_id=lambda s: fwd_match(s, exact(99, mac(0x0D))),
       insert_wrong_match_kind=lambda s: fwd_match(s, lpm(fwd_field(s), mac(0x0D), 48)),
       insert_duplicate_field=lambda s: fwd_match(s, exact(fwd_field(s), mac(0x0D)),
                                                  exact(fwd_field(s), mac(0x0D))),
       insert_exact_with_priority=lambda s: fwd_entry(s, 0x0D, priority=10),
       insert_unknown_table=lambda s: table_entry(0x02FFFFFF, [exact(1, b"\x01")],
                                                  s.action("drop")),
       insert_unknown_action=lambda s: table_entry(
           s.table("fwd"), [exact(fwd_field(s), mac(0x0D))], 0x01FFFFFF),
       insert_action_not_in_table=lambda s: fwd_entry(s, 0x0D, "learn"),
       insert_without_action=lambda s: fwd_entry(s, 0x0D, ""),
       insert_missing_param=lambda s: fwd_entry(s, 0x0D, "forward"),
       insert_extra_param=lambda s: fwd_entry(s, 0x0D, "forward", b"\x01", b"\x02"),
       insert_unknown_param_id=lambda s: fwd_param_id(s, 9),
       insert_param_out_of_range=lambda s: fwd_entry(s, 0x0D, "forward", b"\x02\x00"))
refused_inserts(insert_exact_empty_value=lambda s: fwd_with_value(s, b""),
                insert_param_empty=lambda s: fwd_entry(s, 0x0D, "forward", b""))
writes("INSERT",
       insert_param_padded=lambda s: fwd_entry(s, 0x0D, "forward", b"\x00\x00\x01\x02"))
reads(read_param_padded_back=lambda s: fwd_entry(s, 0x0D, ""))
# fwd holds 0x0A, 0x0C, 0x0D: the first of these two fills it, the second does not fit
writes("INSERT", insert_table_full=lambda s: [fwd_entry(s, 0x0E), fwd_entry(s, 0x0F)])
writes("DELETE", delete_exact=lambda s: [fwd_entry(s, 0x0E, ""), fwd_entry(s, 0x0D, "")])
writes("INSERT",
       insert_defaultonly_action_as_entry=lambda s: route(s, 0x0A0000000000, 8, "drop"))
writes("MODIFY", modify_default_tableonly_action=lambda s: default_entry(s, "acl", "drop"))

# ------------------------------------------------------------------ lpm (routes)

writes("INSERT",
       insert_lpm=lambda s: [route(s, 0x0A0000000000, 8),
                             route(s, 0x0A0B00000000, 16, "to_cpu", b"\x02")],
       insert_lpm_duplicate=lambda s: route(s, 0x0A0000000000, 8),
       insert_lpm_bits_past_prefix=lambda s: route(s, 0x0A0C01000000, 16),
       insert_lpm_prefix_too_long=lambda s: route(s, 0x0A0C00000000, 49),
       insert_lpm_prefix_zero=lambda s: route(s, 0, 0),
       insert_lpm_full_prefix=lambda s: route(s, 0x0A0C00000001, 48),
       # a prefix length of 0 is written by leaving the field out
       insert_lpm_default_route_omitted=lambda s: table_entry(
           s.table("routes"), [], s.action("forward"), (b"\x03",)))
writes("MODIFY", modify_lpm=lambda s: route(s, 0x0A0000000000, 8, "set_mcast", b"\x01"))
reads(read_lpm=lambda s: table_entries(s, "routes"))
writes("DELETE", delete_lpm=lambda s: [route(s, 0x0A0C00000001, 48),
                                       table_entry(s.table("routes"), [])])

# ------------------------------------------------------------------ ternary, range, optional (acl)

writes("INSERT",
       insert_ternary_range_optional=lambda s: acl_entry(s, [
           ternary(acl_src(s), mac(0x0A00), mac(0xFF00)),
           range_(acl_etype(s), b"\x08\x00", b"\x08\xff"),
           optional(acl_dst(s), mac(0x0A))], 10),
       insert_ternary_only=lambda s: acl_entry(s, [src_b00(s)], 20),
       insert_ternary_duplicate=lambda s: acl_entry(s, [src_b00(s)], 20),
       insert_ternary_same_key_other_priority=lambda s: acl_entry(s, [src_b00(s)], 30),
       insert_ternary_without_priority=lambda s: acl_entry(s, [
           ternary(acl_src(s), mac(0x0C00), mac(0xFF00))], None),
       insert_ternary_zero_mask=lambda s: acl_entry(s, [ternary(acl_src(s), mac(0), mac(0))],
                                                    40),
       insert_ternary_value_outside_mask=lambda s: acl_entry(s, [
           ternary(acl_src(s), mac(0x0C01), mac(0xFF00))], 40),
       insert_ternary_mask_too_wide=lambda s: acl_entry(s, [
           ternary(acl_src(s), mac(0x0C00), too_wide(0xFF00))], 40),
       insert_range_low_above_high=lambda s: acl_entry(s, [
           range_(acl_etype(s), b"\x09\x00", b"\x08\x00")], 40),
       insert_range_full=lambda s: acl_entry(s, [
           range_(acl_etype(s), b"\x00\x00", b"\xff\xff")], 40),
       insert_range_single_value=lambda s: acl_entry(s, [
           range_(acl_etype(s), b"\x88\x47", b"\x88\x47")], 40),
       insert_optional_only=lambda s: acl_entry(s, [optional(acl_dst(s), mac(0x0B))], 50),
       insert_all_wildcard_with_priority=lambda s: acl_entry(s, [], 1),
       insert_priority_zero=lambda s: acl_entry(s, [optional(acl_dst(s), mac(0x0C))], 0))
writes("MODIFY",
       modify_ternary=lambda s: acl_entry(s, [src_b00(s)], 20, "NoAction"),
       modify_ternary_wrong_priority=lambda s: acl_entry(s, [src_b00(s)], 21, "NoAction"))
reads(read_ternary=lambda s: table_entries(s, "acl"),
      read_ternary_by_priority=lambda s: table_entries(s, "acl", priority=20),
      read_ternary_one_entry=lambda s: acl_entry(s, [src_b00(s)], 30))
writes("DELETE", delete_ternary=lambda s: acl_entry(s, [src_b00(s)], 30))

# ------------------------------------------------------------------ default entries


def default_with_priority(s: Session) -> Entity:
    ent = default_entry(s, "acl", "NoAction")
    ent.table_entry.priority = 5
    return ent


writes("MODIFY", modify_default=lambda s: default_entry(s, "fwd", "forward", b"\x03"))
reads(read_default=lambda s: table_entries(s, "fwd", is_default_action=True))
writes("INSERT", insert_default=lambda s: default_entry(s, "routes", "drop"))
writes("DELETE", delete_default=lambda s: default_entry(s, "routes", None))
writes("MODIFY",
       modify_default_with_match=lambda s: fwd_entry(s, 0x0A, is_default_action=True),
       modify_default_with_priority=default_with_priority)


@step
def reset_default(s: Session) -> Answer:
    """A default entry without an action restores the program's default action."""
    answer = write(s, update("MODIFY", default_entry(s, "fwd", None)))
    return answer.plus(*read(s, table_entries(s, "fwd", is_default_action=True)).data)


writes("MODIFY",
       modify_const_default=lambda s: default_entry(s, "acl", "acl_mark"),
       modify_default_defaultonly_action=lambda s: default_entry(s, "routes", "drop"),
       modify_default_in_selector_table=lambda s: default_entry(s, "ecmp", "NoAction"))

# ------------------------------------------------------------------ const and keyless tables

writes("INSERT", insert_const_table=lambda s: consts_entry(s, b"\x08\x00", "drop"))
writes("DELETE", delete_const_entry=lambda s: consts_entry(s, b"\x08\x06", None))


@step
def modify_const_table_default(s: Session) -> Answer:
    """The default action of a table with const entries is not const; reset it after."""
    answer = write(s, update("MODIFY", default_entry(s, "consts", "drop")))
    write(s, update("MODIFY", default_entry(s, "consts", None)))
    return answer


reads(read_const_entries=lambda s: table_entries(s, "consts"))
writes("INSERT", insert_keyless_table=lambda s: table_entry(s.table("stats"), [],
                                                            s.action("count_etype")))
writes("MODIFY", modify_keyless_default=lambda s: default_entry(s, "stats", "count_etype"))

# ------------------------------------------------------------------ reads


@step
def entry_metadata(s: Session) -> Answer:
    """controller_metadata and metadata are kept and read back."""
    answer = write(s, update("MODIFY", fwd_entry(s, 0x0C, "drop", controller_metadata=77,
                                                  metadata=b"note")))
    return answer.plus(*read(s, fwd_entry(s, 0x0C, "")).data)


@step
def read_all_tables(s: Session) -> Answer:
    """Without the const entry (whose is_const flag is a known difference)."""
    consts = s.table("consts")
    return read(s, table_entries(s), keep=lambda e: e.table_entry.table_id != consts)


reads(read_two_tables_in_one_request=lambda s: [table_entries(s, "fwd"),
                                                table_entries(s, "routes")],
      read_unknown_table=lambda s: table_entry(0x02FFFFFF, []),
      read_with_match_missing=lambda s: fwd_entry(s, 0x0B, ""),
      read_with_action_set=lambda s: fwd_entry(s, 0x0A, "drop"),
      read_default_of_all_tables=lambda s: table_entries(s, is_default_action=True))

# ------------------------------------------------------------------ batches


@step
def batch_with_several_failures(s: Session) -> Answer:
    return write(s,
                 update("INSERT", route(s, 0x0A0D00000000, 16)),
                 update("INSERT", route(s, 0x0A0B00000000, 16)),  # exists
                 update("INSERT", route(s, 0x0A0E00000000, 16, "learn")),  # not in routes
                 update("DELETE", route(s, 0x0A0F00000000, 16)),  # missing
                 update("MODIFY", route(s, 0x0A0D00000000, 16, "to_cpu", b"\x04")),
                 update("INSERT", route(s, 0x0A0E00000000, 99)))  # prefix too long


reads(batch_state_after_failures=lambda s: table_entries(s, "routes"))


@step
def batch_unspecified_update_type(s: Session) -> Answer:
    return write(s, p4runtime_pb2.Update(type=p4runtime_pb2.Update.UNSPECIFIED,
                                         entity=route(s, 0x0A1000000000, 16)))


@step
def batch_empty(s: Session) -> Answer:
    return write(s)


@step
def batch_rollback_on_error(s: Session) -> Answer:
    return write(s, update("INSERT", route(s, 0x0A1100000000, 16)),
                 atomicity=p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR)


@step
def batch_dataplane_atomic(s: Session) -> Answer:
    return write(s, update("INSERT", route(s, 0x0A1200000000, 16)),
                 atomicity=p4runtime_pb2.WriteRequest.DATAPLANE_ATOMIC)


@step
def write_with_role(s: Session) -> Answer:
    """A role nobody arbitrated for (BMv2 takes the write: it is deleted again)."""
    ent = route(s, 0x0A1300000000, 16)
    answer = write(s, update("INSERT", ent), role="other")
    if answer.code == "OK":
        write(s, update("DELETE", ent))
    return answer
