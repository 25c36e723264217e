"""Findings of the audit against the P4Runtime specification (1.3/1.4): one test per
divergence that was fixed, with the exact status code and message."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2
from p4rt_helpers import Client, batch_errors, expect_code, update

Code = grpc.StatusCode
Entity = p4runtime_pb2.Entity


@pytest.fixture
def ids(compiled):  # type: ignore[no-untyped-def]
    return compiled.names


def test_a_huge_group_weight_is_resource_exhausted(client: Client, compiled) -> None:  # type: ignore[no-untyped-def]
    # the engine lists a member ``weight`` times: a weight of 2**31 - 1 once made the
    # server allocate billions of list slots
    [sel] = compiled.p4info.action_profiles
    pid = sel.preamble.id
    member = Entity()
    m = member.action_profile_member
    m.action_profile_id, m.member_id = pid, 1
    m.action.action_id = compiled.names.action_id("NoAction")
    client.write(update("INSERT", member))
    group = Entity()
    g = group.action_profile_group
    g.action_profile_id, g.group_id = pid, 1
    g.members.add(member_id=1, weight=2**31 - 1)
    e = expect_code(Code.RESOURCE_EXHAUSTED, client.write, update("INSERT", group))
    assert ("the weights add up to 2147483647; the built-in switch supports at most 65536 "
            "per group") in batch_errors(e)[0][1]
    g.members[0].weight = 3
    g.max_size = 1 << 20
    e = expect_code(Code.RESOURCE_EXHAUSTED, client.write, update("INSERT", group))
    assert "max_size 1048576 is more than the built-in switch supports" in batch_errors(e)[0][1]
    g.max_size = 0
    client.write(update("INSERT", group))
    [back] = client.read(group)
    assert back.action_profile_group.members[0].weight == 3
