"""Entities of the differential test program (``p4rt_diff.p4``), built by P4 name for
one session's target."""

from __future__ import annotations

from collections.abc import Iterable

from p4.v1 import p4runtime_pb2
from p4rt_helpers import eth, exact, lpm, table_entry
from p4rt_session import Entity, Session

FieldMatch = p4runtime_pb2.FieldMatch


def mac(n: int) -> bytes:
    """A 48-bit value as a careful client writes it: the shortest byte string."""
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")


def too_wide(n: int) -> bytes:
    """A 48-bit value with a 49th bit set."""
    return (n | 1 << 48).to_bytes(7, "big")


def frame(dst: int, src: int = 0xAA, etype: int = 0x1234) -> bytes:
    return eth(dst, src, etype, b"payload")


def table_entries(s: Session, table: str = "", **fields: object) -> Entity:
    """A read request for the entries of ``table`` (every table when empty)."""
    return table_entry(s.table(table) if table else 0, [], None, (), **fields)


def default_entry(s: Session, table: str, action: str | None, *params: bytes) -> Entity:
    return table_entry(s.table(table), [], s.action(action) if action else None, params,
                       is_default_action=True)


def fwd_entry(s: Session, dst: int, action: str = "drop", *params: bytes, **fields: object
              ) -> Entity:
    """An entry of the exact table fwd (no action when ``action`` is empty)."""
    return table_entry(s.table("fwd"), [exact(s.field("fwd", "hdr.ethernet.dst"), mac(dst))],
                       s.action(action) if action else None, params, **fields)


def route(s: Session, value: int, prefix_len: int, action: str = "forward",
          *params: bytes) -> Entity:
    """An entry of the lpm table routes (forward to port 1 unless told otherwise)."""
    if action == "forward" and not params:
        params = (b"\x01",)
    return table_entry(s.table("routes"),
                       [lpm(s.field("routes", "hdr.ethernet.dst"), mac(value), prefix_len)],
                       s.action(action), params)


def acl_entry(s: Session, matches: Iterable[FieldMatch], priority: int | None,
              action: str = "acl_mark", **fields: object) -> Entity:
    """An entry of the ternary/range/optional table acl."""
    if priority is not None:
        fields["priority"] = priority
    return table_entry(s.table("acl"), matches, s.action(action), (), **fields)


def acl_src(s: Session) -> int:
    return s.field("acl", "hdr.ethernet.src")


def acl_etype(s: Session) -> int:
    return s.field("acl", "hdr.ethernet.etype")


def acl_dst(s: Session) -> int:
    return s.field("acl", "hdr.ethernet.dst")


def counter_entry(s: Session, name: str, index: int | None = None,
                  data: tuple[int, int] | None = None) -> Entity:
    """A CounterEntry (every counter when ``name`` is empty); ``data`` is (packets,
    bytes)."""
    ent = Entity()
    ent.counter_entry.counter_id = s.names.counter_id(name) if name else 0
    if index is not None:
        ent.counter_entry.index.index = index
    if data is not None:
        ent.counter_entry.data.packet_count, ent.counter_entry.data.byte_count = data
    return ent


def meter_entry(s: Session, name: str, index: int | None = None,
                config: tuple[int, int, int, int] | None = None) -> Entity:
    """A MeterEntry; ``config`` is (cir, cburst, pir, pburst)."""
    ent = Entity()
    ent.meter_entry.meter_id = s.names.meter_id(name) if name else 0
    if index is not None:
        ent.meter_entry.index.index = index
    if config is not None:
        c = ent.meter_entry.config
        c.cir, c.cburst, c.pir, c.pburst = config
    return ent


def register_entry(s: Session, index: int | None, value: bytes | None = None) -> Entity:
    ent = Entity()
    ent.register_entry.register_id = s.names.register_id("reg32")
    if index is not None:
        ent.register_entry.index.index = index
    if value is not None:
        ent.register_entry.data.bitstring = value
    return ent


def direct_counter(s: Session, dst: int | None, data: tuple[int, int] | None = None
                   ) -> Entity:
    """The DirectCounterEntry of fwd's entry for ``dst`` (all of fwd's when None)."""
    ent = Entity()
    dc = ent.direct_counter_entry
    dc.table_entry.table_id = s.table("fwd")
    if dst is not None:
        dc.table_entry.match.append(exact(s.field("fwd", "hdr.ethernet.dst"), mac(dst)))
    if data is not None:
        dc.data.packet_count, dc.data.byte_count = data
    return ent


def direct_meter(s: Session, entry: Entity | None,
                 config: tuple[int, int, int, int] | None = None) -> Entity:
    """The DirectMeterEntry of the acl entry ``entry`` (all of acl's when None)."""
    ent = Entity()
    dm = ent.direct_meter_entry
    if entry is None:
        dm.table_entry.table_id = s.table("acl")
    else:
        dm.table_entry.CopyFrom(entry.table_entry)
        dm.table_entry.ClearField("action")
    if config is not None:
        c = dm.config
        c.cir, c.cburst, c.pir, c.pburst = config
    return ent


def member(s: Session, member_id: int, action: str = "to_cpu", *params: bytes,
           profile: int | None = None) -> Entity:
    """A member of the selector sel; its to_cpu tag is its id unless ``params`` say."""
    ent = Entity()
    m = ent.action_profile_member
    m.action_profile_id = s.profile("sel") if profile is None else profile
    m.member_id = member_id
    m.action.action_id = s.action(action)
    for i, value in enumerate(params or (bytes([member_id]),), 1):
        m.action.params.add(param_id=i, value=value)
    return ent


def group(s: Session, group_id: int, members: Iterable[int], max_size: int = 0) -> Entity:
    ent = Entity()
    g = ent.action_profile_group
    g.action_profile_id = s.profile("sel")
    g.group_id = group_id
    g.max_size = max_size
    for m in members:
        g.members.add(member_id=m, weight=1)
    return ent


def ecmp_entry(s: Session, dst: int, *, member_id: int | None = None,
               group_id: int | None = None) -> Entity:
    """An entry of the selector table ecmp, pointing at a member or a group."""
    ent = table_entry(s.table("ecmp"), [exact(s.field("ecmp", "hdr.ethernet.dst"), mac(dst))])
    if member_id is not None:
        ent.table_entry.action.action_profile_member_id = member_id
    if group_id is not None:
        ent.table_entry.action.action_profile_group_id = group_id
    return ent


def mc_group(group_id: int, *replicas: tuple[int, int]) -> Entity:
    """A multicast group of (port, instance) replicas."""
    ent = Entity()
    g = ent.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = group_id
    for port, rid in replicas:
        g.replicas.add(egress_port=port, instance=rid)
    return ent


def clone_session(session_id: int, *replicas: tuple[int, int], cos: int = 0,
                  truncate: int = 0) -> Entity:
    ent = Entity()
    c = ent.packet_replication_engine_entry.clone_session_entry
    c.session_id = session_id
    c.class_of_service = cos
    c.packet_length_bytes = truncate
    for port, rid in replicas:
        c.replicas.add(egress_port=port, instance=rid)
    return ent


def value_set(s: Session, *values: bytes) -> Entity:
    """The parser value set special_types with these members."""
    ent = Entity()
    vs = ent.value_set_entry
    vs.value_set_id = s.names.value_set_id("special_types")
    for v in values:
        vs.members.add().match.append(exact(1, v))
    return ent


def digest_entry(s: Session, max_list_size: int = 1, timeout_ns: int = 1_000_000,
                 ack_timeout_ns: int = 1_000_000_000, config: bool = True) -> Entity:
    ent = Entity()
    ent.digest_entry.digest_id = s.names.digest_id("learn_t")
    if config:
        c = ent.digest_entry.config
        c.max_list_size, c.max_timeout_ns, c.ack_timeout_ns = (max_list_size, timeout_ns,
                                                               ack_timeout_ns)
    return ent


def wildcard(kind: str) -> Entity:
    """An entity of ``kind`` with every field at its default: a read of all of them."""
    ent = Entity()
    getattr(ent, kind).SetInParent()
    return ent
