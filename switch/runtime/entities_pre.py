"""``PacketReplicationEngineEntry``: multicast groups and clone sessions.

Replica ports may be given as ``egress_port`` (uint32, what p4runtime-shell sends) or
``port`` (an SDN port byte string); ``SDN_PORT_CPU`` stands for the switch's CPU port.
Reads give entries back exactly as written; id 0 reads every entry, and reading a given
id that does not exist is NOT_FOUND, as on BMv2. Clone sessions accept a
``class_of_service`` (0..7) and give it back, but v1model has no classes of service, so
it has no effect on the copies.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4.v1 import p4runtime_pb2

from switch.runtime.codec import decode_uint
from switch.runtime.errors import already_exists, invalid_argument, not_found
from switch.runtime.state import PipelineState

Update = p4runtime_pb2.Update

PORT_BITS = 9  # v1model's standard_metadata.egress_spec
INSTANCE_BITS = 16  # v1model's standard_metadata.egress_rid
MAX_CLASS_OF_SERVICE = 7
# the proto enum holds the int32 view (-3) of the uint32 port number 0xfffffffd
SDN_PORT_CPU = p4runtime_pb2.SDN_PORT_CPU & 0xFFFFFFFF


def _port(r: p4runtime_pb2.Replica, cpu_port: int | None, what: str) -> int:
    kind = r.WhichOneof("port_kind")
    if kind is None:
        raise invalid_argument(f"{what}: a replica needs a port")
    port = r.egress_port if kind == "egress_port" else decode_uint(r.port, 32, f"{what} port")
    if port == SDN_PORT_CPU:
        if cpu_port is None:
            raise invalid_argument(f"{what}: SDN_PORT_CPU given, but the switch has no CPU "
                                   "port")
        return cpu_port
    if port >> PORT_BITS:
        raise invalid_argument(f"{what}: port {port} does not fit in {PORT_BITS} bits")
    return port


def _replicas(replicas: list[p4runtime_pb2.Replica], cpu_port: int | None,
              what: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for r in replicas:
        if r.instance >> INSTANCE_BITS:
            raise invalid_argument(f"{what}: instance {r.instance} does not fit in "
                                   f"{INSTANCE_BITS} bits")
        pair = (_port(r, cpu_port, what), r.instance)
        if pair in out:
            raise invalid_argument(f"{what}: replica (port {pair[0]}, instance {pair[1]}) is "
                                   "listed twice")
        out.append(pair)
    return out


def write_pre_entry(state: PipelineState, utype: int,
                    e: p4runtime_pb2.PacketReplicationEngineEntry, cpu_port: int | None) -> None:
    kind = e.WhichOneof("type")
    if kind == "multicast_group_entry":
        _write_group(state, utype, e.multicast_group_entry, cpu_port)
    elif kind == "clone_session_entry":
        _write_session(state, utype, e.clone_session_entry, cpu_port)
    else:
        raise invalid_argument("the packet replication engine entry is empty")


def _write_group(state: PipelineState, utype: int, g: p4runtime_pb2.MulticastGroupEntry,
                 cpu_port: int | None) -> None:
    gid = g.multicast_group_id
    what = f"multicast group {gid}"
    if gid == 0:
        raise invalid_argument("multicast group id 0 is not valid in a write")
    exists = gid in state.mc_groups
    if utype == Update.DELETE:
        if not exists:
            raise not_found(f"{what} does not exist")
        state.switch.mc_group_delete(gid)
        del state.mc_groups[gid]
        return
    if utype == Update.INSERT and exists:
        raise already_exists(f"{what} already exists")
    if utype == Update.MODIFY and not exists:
        raise not_found(f"{what} does not exist")
    replicas = _replicas(list(g.replicas), cpu_port, what)
    state.switch.mc_group_set(gid, replicas)
    stored = p4runtime_pb2.MulticastGroupEntry()
    stored.CopyFrom(g)
    state.mc_groups[gid] = stored


def _write_session(state: PipelineState, utype: int, c: p4runtime_pb2.CloneSessionEntry,
                   cpu_port: int | None) -> None:
    sid = c.session_id
    what = f"clone session {sid}"
    if sid == 0:
        raise invalid_argument("clone session id 0 is not valid in a write")
    exists = sid in state.clone_sessions
    if utype == Update.DELETE:
        if not exists:
            raise not_found(f"{what} does not exist")
        state.switch.clone_session_delete(sid)
        del state.clone_sessions[sid]
        return
    if utype == Update.INSERT and exists:
        raise already_exists(f"{what} already exists")
    if utype == Update.MODIFY and not exists:
        raise not_found(f"{what} does not exist")
    if c.class_of_service > MAX_CLASS_OF_SERVICE:
        raise invalid_argument(f"{what}: class of service {c.class_of_service} not in "
                               f"[0, {MAX_CLASS_OF_SERVICE}]")
    if c.packet_length_bytes < 0:
        raise invalid_argument(f"{what}: packet_length_bytes {c.packet_length_bytes} is "
                               "negative (0: no truncation)")
    replicas = _replicas(list(c.replicas), cpu_port, what)
    state.switch.clone_session_set(sid, replicas, c.packet_length_bytes or None)
    stored = p4runtime_pb2.CloneSessionEntry()
    stored.CopyFrom(c)
    state.clone_sessions[sid] = stored


def read_pre_entries(state: PipelineState, e: p4runtime_pb2.PacketReplicationEngineEntry
                     ) -> Iterator[p4runtime_pb2.Entity]:
    """Multicast groups and/or clone sessions; id 0 reads all of them, and an empty
    entry reads both kinds."""
    kind = e.WhichOneof("type")
    if kind in ("multicast_group_entry", None):
        gid = e.multicast_group_entry.multicast_group_id
        if gid and gid not in state.mc_groups:
            raise not_found(f"multicast group {gid} does not exist")
        for g in sorted(state.mc_groups) if gid == 0 else [gid]:
            ent = p4runtime_pb2.Entity()
            ent.packet_replication_engine_entry.multicast_group_entry.CopyFrom(
                state.mc_groups[g])
            yield ent
    if kind in ("clone_session_entry", None):
        sid = e.clone_session_entry.session_id
        if sid and sid not in state.clone_sessions:
            raise not_found(f"clone session {sid} does not exist")
        for s in sorted(state.clone_sessions) if sid == 0 else [sid]:
            ent = p4runtime_pb2.Entity()
            ent.packet_replication_engine_entry.clone_session_entry.CopyFrom(
                state.clone_sessions[s])
            yield ent
