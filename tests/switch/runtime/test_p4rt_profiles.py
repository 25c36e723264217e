"""P4Runtime ActionProfileMember / ActionProfileGroup and indirect table entries."""

from __future__ import annotations

import textwrap

import grpc
import pytest
from p4.v1 import p4runtime_pb2
from p4rt_helpers import Client, P4Info, batch_errors, eth, exact, expect_code, update

from switch.engine.hashes import crc16, pack_bits

Code = grpc.StatusCode
Entity = p4runtime_pb2.Entity

PROGRAM = textwrap.dedent("""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct H { ethernet_t e; }
struct M { bit<8> x; }
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start { b.extract(h.e); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action set(bit<9> p) { sm.egress_spec = p; }
    @max_group_size(3) action_selector(HashAlgorithm.crc16, 32w8, 32w16) sel;
    table ecmp {
        key = { h.e.dst: exact; h.e.src: selector; }
        actions = { set; NoAction; }
        implementation = sel;
    }
    table prof {
        key = { h.e.dst: exact; }
        actions = { set; }
        @name("ap") implementation = action_profile(32w4);
    }
    apply { sm.egress_spec = 1; if (h.e.etype == 1) { prof.apply(); } else { ecmp.apply(); } }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out b, in H h) { apply { b.emit(h.e); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
""")


@pytest.fixture(scope="module")
def prog():
    from switch.frontend import compile_text
    from switch.frontend.artifact import dump_artifact
    from switch.frontend.p4info import build_p4info

    program = compile_text(PROGRAM, "profiles.p4")
    info = build_p4info(program)
    return info, dump_artifact(program).encode(), P4Info(info)


@pytest.fixture
def pc(address: str, clients: list[Client], prog) -> Client:
    c = Client(address, election_id=(0, 10))
    clients.append(c)
    c.set_pipeline(prog[0], prog[1])
    return c


def ids(prog) -> tuple[int, int, int, int, int]:
    names: P4Info = prog[2]
    profiles = {p.preamble.name: p.preamble.id for p in names.info.action_profiles}
    return (profiles["I.sel"], profiles["ap"], names.table_id("ecmp"), names.table_id("prof"),
            names.action_id("set"))


def member(pid: int, mid: int, aid: int | None = None, port: int = 0) -> Entity:
    ent = Entity()
    m = ent.action_profile_member
    m.action_profile_id, m.member_id = pid, mid
    if aid is not None:
        m.action.action_id = aid
        m.action.params.add(param_id=1, value=port.to_bytes(2, "big"))
    return ent


def group(pid: int, gid: int, members=(), max_size: int = 0) -> Entity:
    ent = Entity()
    g = ent.action_profile_group
    g.action_profile_id, g.group_id, g.max_size = pid, gid, max_size
    for m in members:
        mid, w = m if isinstance(m, tuple) else (m, 1)
        g.members.add(member_id=mid, weight=w)
    return ent


def entry(tid: int, dst: int, *, mid: int | None = None, gid: int | None = None) -> Entity:
    ent = Entity()
    te = ent.table_entry
    te.table_id = tid
    te.match.append(exact(1, dst.to_bytes(6, "big")))
    if mid is not None:
        te.action.action_profile_member_id = mid
    if gid is not None:
        te.action.action_profile_group_id = gid
    return ent


def test_members_groups_entries_and_packets(pc: Client, server, prog) -> None:
    sel, ap, ecmp, prof, aset = ids(prog)
    for mid in (1, 2, 3):
        pc.write(update("INSERT", member(sel, mid, aset, 10 + mid)))
    pc.write(update("INSERT", group(sel, 7, [1, (2, 2)], max_size=3)))
    pc.write(update("INSERT", entry(ecmp, 5, gid=7)))
    pc.write(update("INSERT", entry(ecmp, 6, mid=3)))
    order = [11, 12, 12]
    for src in range(12):
        [(port, _)] = server.switch.inject(0, eth(5, src))
        assert port == order[crc16(pack_bits([(src, 48)])) % 3]
    assert server.switch.inject(0, eth(6))[0][0] == 13
    # reads, with wildcards
    members = pc.read(member(0, 0))
    assert sorted(e.action_profile_member.member_id for e in members) == [1, 2, 3]
    [m2] = pc.read(member(sel, 2))
    assert m2.action_profile_member.action.params[0].value == b"\x0c"
    [g] = pc.read(group(sel, 0))
    assert g.action_profile_group == group(sel, 7, [1, (2, 2)], max_size=3).action_profile_group
    assert len(pc.read(group(0, 0))) == 1
    got = {e.table_entry.action.WhichOneof("type") for e in pc.read(entry(ecmp, 0).__class__(
        table_entry=p4runtime_pb2.TableEntry(table_id=ecmp)))}
    assert got == {"action_profile_group_id", "action_profile_member_id"}
    # modify a member and a group; then tear down in order
    pc.write(update("MODIFY", member(sel, 3, aset, 33)))
    assert server.switch.inject(0, eth(6))[0][0] == 33
    pc.write(update("MODIFY", group(sel, 7, [3])))
    assert server.switch.inject(0, eth(5, 1))[0][0] == 33
    [g] = pc.read(group(sel, 7))
    assert g.action_profile_group.max_size == 3
    pc.write(update("DELETE", entry(ecmp, 5)), update("DELETE", entry(ecmp, 6)))
    pc.write(update("DELETE", group(sel, 7)))
    for mid in (1, 2, 3):
        pc.write(update("DELETE", member(sel, mid)))
    assert pc.read(member(0, 0)) == [] and pc.read(group(0, 0)) == []


def test_error_codes(pc: Client, prog) -> None:
    sel, ap, ecmp, prof, aset = ids(prog)
    w = pc.write
    expect_code(Code.INVALID_ARGUMENT, w, update("INSERT", member(0x11FFFFFF, 1, aset, 1)))
    expect_code(Code.INVALID_ARGUMENT, w, update("INSERT", member(sel, 1)))  # no action
    noaction = prog[2].action_id("NoAction")
    expect_code(Code.INVALID_ARGUMENT, w, update("INSERT", member(ap, 1, noaction)))
    w(update("INSERT", member(sel, 1, aset, 1)))
    expect_code(Code.ALREADY_EXISTS, w, update("INSERT", member(sel, 1, aset, 1)))
    expect_code(Code.NOT_FOUND, w, update("MODIFY", member(sel, 9, aset, 1)))
    expect_code(Code.NOT_FOUND, w, update("DELETE", member(sel, 9)))
    # groups
    expect_code(Code.INVALID_ARGUMENT, w, update("INSERT", group(ap, 1, [1])))  # no selector
    expect_code(Code.NOT_FOUND, w, update("INSERT", group(sel, 1, [9])))
    expect_code(Code.INVALID_ARGUMENT, w, update("INSERT", group(sel, 1, [(1, 0)])))
    expect_code(Code.ALREADY_EXISTS, w, update("INSERT", group(sel, 1, [1, 1])))  # as BMv2
    expect_code(Code.INVALID_ARGUMENT, w, update("INSERT", group(sel, 1, [1], max_size=4)))
    expect_code(Code.RESOURCE_EXHAUSTED, w, update("INSERT", group(sel, 1, [(1, 4)])))
    expect_code(Code.RESOURCE_EXHAUSTED, w,
                update("INSERT", group(sel, 1, [(1, 3)], max_size=2)))
    w(update("INSERT", group(sel, 1, [], max_size=2)))
    expect_code(Code.INVALID_ARGUMENT, w, update("MODIFY", group(sel, 1, [1], max_size=3)))
    expect_code(Code.NOT_FOUND, w, update("MODIFY", group(sel, 2, [1])))
    # entries
    expect_code(Code.FAILED_PRECONDITION, w, update("INSERT", entry(ecmp, 5, gid=1)))  # empty
    w(update("MODIFY", group(sel, 1, [1])))
    w(update("INSERT", entry(ecmp, 5, gid=1)))
    expect_code(Code.FAILED_PRECONDITION, w, update("DELETE", member(sel, 1)))
    expect_code(Code.FAILED_PRECONDITION, w, update("DELETE", group(sel, 1)))
    expect_code(Code.NOT_FOUND, w, update("INSERT", entry(ecmp, 6, mid=42)))
    expect_code(Code.INVALID_ARGUMENT, w, update("INSERT", entry(prof, 6, gid=1)))
    direct = entry(ecmp, 7)
    direct.table_entry.action.action.action_id = aset
    expect_code(Code.INVALID_ARGUMENT, w, update("INSERT", direct))
    one_shot = entry(ecmp, 7)
    one_shot.table_entry.action.action_profile_action_set.SetInParent()
    expect_code(Code.UNIMPLEMENTED, w, update("INSERT", one_shot))
    default = Entity()
    default.table_entry.table_id = ecmp
    default.table_entry.is_default_action = True
    default.table_entry.action.action_profile_member_id = 1
    expect_code(Code.INVALID_ARGUMENT, w, update("MODIFY", default))
    # members of an action_profile (no selector) and the profile's size
    for mid in range(1, 5):
        w(update("INSERT", member(ap, mid, aset, mid)))
    expect_code(Code.RESOURCE_EXHAUSTED, w, update("INSERT", member(ap, 5, aset, 5)))


def test_member_and_group_id_0_is_invalid_in_writes(pc: Client, prog) -> None:
    sel, _, _, _, aset = ids(prog)
    w = pc.write
    for kind in ("INSERT", "MODIFY", "DELETE"):  # 0 is the wildcard of reads
        e = expect_code(Code.INVALID_ARGUMENT, w, update(kind, member(sel, 0, aset, 1)))
        assert "member id 0 is not valid in a write" in batch_errors(e)[0][1]
        e = expect_code(Code.INVALID_ARGUMENT, w, update(kind, group(sel, 0)))
        assert "group id 0 is not valid in a write" in batch_errors(e)[0][1]


def test_reconcile_carries_members_and_groups(pc: Client, server, prog) -> None:
    sel, ap, ecmp, prof, aset = ids(prog)
    pc.write(update("INSERT", member(sel, 1, aset, 21)))
    pc.write(update("INSERT", group(sel, 2, [(1, 2)])))
    pc.write(update("INSERT", entry(ecmp, 5, gid=2)))
    pc.set_pipeline(prog[0], prog[1], action=p4runtime_pb2.SetForwardingPipelineConfigRequest
                    .RECONCILE_AND_COMMIT)
    assert server.switch.inject(0, eth(5))[0][0] == 21
    [g] = pc.read(group(sel, 2))
    assert g.action_profile_group.members[0].weight == 2
    assert len(pc.read(member(sel, 0))) == 1
