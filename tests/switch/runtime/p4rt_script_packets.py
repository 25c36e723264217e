"""The script, part 4: packet-out and packet-in through the state written so far (every
data-plane effect comes back as PacketIns, see ``p4rt_diff.p4``), counters after the
packets, digests, and last the reconciliation BMv2 fails half-way."""

from __future__ import annotations

from collections.abc import Callable

from p4.v1 import p4runtime_pb2
from p4rt_entities import (
    acl_entry,
    acl_etype,
    counter_entry,
    digest_entry,
    direct_counter,
    frame,
    table_entries,
    wildcard,
)
from p4rt_helpers import drain, range_
from p4rt_session import (
    CPU_PORT,
    Answer,
    GetType,
    Session,
    SetAction,
    digests,
    get_pipeline,
    packet_out,
    packets_in,
    read,
    reads,
    register,
    set_pipeline,
    step,
    stream_errors,
    through,
    writes,
)

DIGEST_WAIT_S = 5.0
NO_DIGEST_WAIT_S = 1.0


def packets(**frames: Callable[[Session], bytes]) -> None:
    """Steps that each send one frame through the tables and answer its PacketIns."""
    for name, build in frames.items():
        def run(s: Session, build: Callable[[Session], bytes] = build) -> Answer:
            return through(s, build(s))
        register(name, run)


writes("INSERT", insert_acl_drop=lambda s: acl_entry(
    s, [range_(acl_etype(s), b"\x88\xb5", b"\x88\xb5")], 70, "drop"))


@step
def packet_out_to_cpu(s: Session) -> Answer:
    return through(s, frame(0x0F), egress_port=CPU_PORT)


@step
def packet_out_to_port(s: Session) -> Answer:
    """To a port without an interface: nothing comes back."""
    return through(s, frame(0x0F), egress_port=1)


packets(packet_exact_hit=lambda s: frame(0x0A),  # fwd: to_cpu(1)
        packet_lpm_hit=lambda s: frame(0x0A0B00000001),  # routes /16: to_cpu(2)
        packet_miss=lambda s: frame(0x0F),
        packet_multicast=lambda s: frame(0x0A0000000005),  # routes /8: group 1
        packet_clone=lambda s: frame(0x0B),  # fwd: clone_to(session 5, tag 4)
        packet_acl_drop=lambda s: frame(0x0A, etype=0x88B5),
        packet_const_entry_drop=lambda s: frame(0x0A, etype=0x0806),
        packet_value_set=lambda s: frame(0x0A, etype=0x7777),
        packet_selector_member=lambda s: frame(0x0B, etype=0x9999),  # ecmp: member 2
        # dst's low byte goes through a register<int<8>>: -1 read back is negative
        packet_signed_register_negative=lambda s: frame(0x00FF, etype=0x5157),
        packet_signed_register_positive=lambda s: frame(0x0001, etype=0x5157))


@step
def packet_selector_group(s: Session) -> Answer:
    """Which member of group 10 each of 16 source addresses picks."""
    out = []
    code = "OK"
    for src in range(0x10, 0x20):
        answer = through(s, frame(0x0A, src=src, etype=0x9999))
        code = answer.code if answer.code != "OK" else code
        out.append(f"src {src:#x}: " + " ".join(answer.data))
    return Answer(code, data=tuple(out))


@step
def packet_in_only_to_primary(s: Session) -> Answer:
    return Answer(data=(f"backup got {len(drain(s.backup.packets))} packets",))


reads(read_counters_after_packets=lambda s: counter_entry(s, "etype_counter"),
      read_direct_counters_after_packets=lambda s: direct_counter(s, None))


# ------------------------------------------------------------------ packet-outs refused

def refused_packet_out(s: Session, send: Callable[[], None], backup_wait_s: float = 0.0
                       ) -> Answer:
    """The PacketIns and stream errors after a packet-out that must be dropped. An error
    for the primary comes on its stream before the marker's PacketIn; one for the backup
    comes on the backup's stream, in no order with the primary's: wait for that."""
    answer = packets_in(s, send)
    return answer.plus(*stream_errors(s.primary), *stream_errors(s.backup, backup_wait_s))


def raw_packet_out(s: Session, *metadata: tuple[int, bytes]) -> None:
    req = p4runtime_pb2.StreamMessageRequest()
    req.packet.payload = frame(0x0A)
    for mid, value in metadata:
        req.packet.metadata.add(metadata_id=mid, value=value)
    s.primary.send(req)


@step
def packet_out_from_backup(s: Session) -> Answer:
    return refused_packet_out(s, lambda: packet_out(s, CPU_PORT, frame(0x0F), s.backup),
                              backup_wait_s=1.0)


@step
def packet_out_without_metadata(s: Session) -> Answer:
    return refused_packet_out(s, lambda: raw_packet_out(s))


@step
def packet_out_metadata_too_wide(s: Session) -> Answer:
    return refused_packet_out(s, lambda: packet_out(s, 0x200, frame(0x0A)))


@step
def packet_out_unknown_metadata(s: Session) -> Answer:
    egress, pad = (s.metadata_id("packet_out", n) for n in ("egress_port", "_pad"))
    return refused_packet_out(s, lambda: raw_packet_out(
        s, (egress, b"\xff"), (pad, b"\x00"), (9, b"\x01")))


# ------------------------------------------------------------------ digests

writes("INSERT", insert_digest=lambda s: digest_entry(s),
       insert_digest_duplicate=lambda s: digest_entry(s))
reads(read_digest=lambda s: digest_entry(s, config=False),
      read_all_digests=lambda s: wildcard("digest_entry"))


@step
def digest_from_packet(s: Session) -> Answer:
    """smac misses, its default action learn() sends the source address and port."""
    drain(s.primary.digests)
    through(s, frame(0x0F, src=0x5A))
    return digests(s, DIGEST_WAIT_S)


writes("MODIFY", modify_digest=lambda s: digest_entry(s, max_list_size=2,
                                                       timeout_ns=2_000_000_000))


@step
def digest_list_of_two(s: Session) -> Answer:
    through(s, frame(0x0F, src=0x5B))
    through(s, frame(0x0F, src=0x5C))
    return digests(s, DIGEST_WAIT_S)


writes("DELETE", delete_digest=lambda s: digest_entry(s, config=False))


@step
def no_digest_after_delete(s: Session) -> Answer:
    through(s, frame(0x0F, src=0x5D))
    return digests(s, NO_DIGEST_WAIT_S)


# ------------------------------------------------------------------ last: reconciliation

@step
def set_pipeline_reconcile_and_commit(s: Session) -> Answer:
    """Last, because BMv2 fails it half-way: its data plane then runs the new program
    with empty tables while its P4Runtime server keeps the old state, and it takes no
    other pipeline until a packet has gone through."""
    answer = set_pipeline(s, SetAction.RECONCILE_AND_COMMIT, cookie=8)
    return answer.plus(*get_pipeline(s, GetType.COOKIE_ONLY).data,
                       *read(s, table_entries(s, "fwd")).data)
