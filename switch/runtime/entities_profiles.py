"""``ActionProfileMember`` and ``ActionProfileGroup``: the members and groups of action
profiles and selectors, which indirect table entries point at.

Rules followed (P4Runtime 1.x, and PI's server in front of BMv2 where the spec leaves a
choice):

* a member's action must be an action of a table using the profile (INVALID_ARGUMENT);
* an action profile id the P4Info lacks is INVALID_ARGUMENT (as for every P4Info id); a
  duplicate member or group id is ALREADY_EXISTS, an unknown one NOT_FOUND; deleting a
  member still in a group or named by a table entry, or a group still named by an
  entry, is FAILED_PRECONDITION;
* groups exist only in profiles with a selector (INVALID_ARGUMENT elsewhere); member
  weights are > 0 (INVALID_ARGUMENT) and a member is listed once (ALREADY_EXISTS, as
  BMv2 answers and as the spec rules for value set members); ``max_size`` is >= 0,
  at most the P4Info's ``max_group_size`` when that is set (INVALID_ARGUMENT) and cannot
  change after the group's creation (INVALID_ARGUMENT); members (their weights summed
  under ``sum_of_weights``, the default) beyond ``max_size`` -- or ``max_group_size``
  when ``max_size`` is 0 -- are RESOURCE_EXHAUSTED; under ``sum_of_members`` a weight
  above ``max_member_weight`` is INVALID_ARGUMENT;
* the engine selects among a group's members through a list holding each member
  ``weight`` times, so a group's weights may add up to at most ``MAX_GROUP_SLOTS`` (the
  target maximum the spec lets a server impose): a larger sum, or a larger ``max_size``,
  is RESOURCE_EXHAUSTED;
* member and group ids are > 0 in writes (0 is the wildcard of reads): INVALID_ARGUMENT;
* watch ports are stored and read back; one that cannot be a port of the switch (more
  than 9 bits, other than SDN_PORT_CPU) is INVALID_ARGUMENT; the built-in switch's
  ports are always up, so they never deactivate a member.

Reads take wildcards: ``action_profile_id`` 0 reads every profile, ``member_id`` /
``group_id`` 0 every member / group of the profile.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from switch.runtime.codec import decode_params, decode_uint, encode_params
from switch.runtime.entities_pre import PORT_BITS, SDN_PORT_CPU
from switch.runtime.errors import already_exists, invalid_argument, resource_exhausted
from switch.runtime.state import PipelineState

Update = p4runtime_pb2.Update

MAX_GROUP_SLOTS = 1 << 16  # the largest sum of weights of one group


def _profile(state: PipelineState, pid: int) -> p4info_pb2.ActionProfile:
    if pid == 0:
        raise invalid_argument("action profile id 0 is not a valid id")
    p = state.schema.action_profiles.get(pid)
    if p is None:
        raise invalid_argument(f"no action profile with id {pid} in the P4Info")
    return p


def profile_actions(state: PipelineState, p: p4info_pb2.ActionProfile) -> set[int]:
    """The action ids of the tables using profile ``p``."""
    out: set[int] = set()
    for tid in p.table_ids:
        t = state.schema.tables.get(tid)
        if t is not None:
            out.update(t.action_scopes)
    return out


# ------------------------------------------------------------------------------ members


def write_member(state: PipelineState, utype: int,
                 m: p4runtime_pb2.ActionProfileMember) -> None:
    p = _profile(state, m.action_profile_id)
    name = p.preamble.name
    if m.member_id == 0:
        raise invalid_argument(f"action profile {name}: member id 0 is not valid in a write")
    sw = state.switch
    if utype == Update.DELETE:
        sw.profile_member_delete(name, m.member_id)
        return
    if not m.HasField("action"):
        raise invalid_argument(f"action profile {name}: member {m.member_id} needs an action")
    aid = m.action.action_id
    action = state.schema.actions.get(aid)
    if action is None or aid not in profile_actions(state, p):
        what = f"action {action.preamble.name}" if action else f"action id {aid}"
        raise invalid_argument(f"{what} is not an action of the tables using action profile "
                               f"{name}")
    args = decode_params(action, m.action.params)
    if utype == Update.INSERT:
        sw.profile_member_add(name, m.member_id, action.preamble.name, args)
    else:
        sw.profile_member_modify(name, m.member_id, action.preamble.name, args)


def read_members(state: PipelineState, m: p4runtime_pb2.ActionProfileMember
                 ) -> Iterator[p4runtime_pb2.Entity]:
    profiles = (list(state.schema.action_profiles.values()) if m.action_profile_id == 0
                else [_profile(state, m.action_profile_id)])
    for p in profiles:
        for member in state.switch.profile_members(p.preamble.name):
            if m.member_id and member.id != m.member_id:
                continue
            ent = p4runtime_pb2.Entity()
            out = ent.action_profile_member
            out.action_profile_id = p.preamble.id
            out.member_id = member.id
            aid = state.schema.action_id(member.action.action)
            out.action.action_id = aid
            out.action.params.extend(encode_params(state.schema.actions[aid],
                                                   member.action.args))
            yield ent


# ------------------------------------------------------------------------------- groups


def _check_watch_port(name: str, gid: int, mem: p4runtime_pb2.ActionProfileGroup.Member
                      ) -> None:
    what = f"action profile {name}, group {gid}: member {mem.member_id}"
    port = decode_uint(mem.watch_port, 32, f"{what} watch_port")
    if port != SDN_PORT_CPU and port >> PORT_BITS:
        raise invalid_argument(f"{what}: watch_port {port} is not a port of the switch "
                               f"(ports have {PORT_BITS} bits)")


def _check_group(p: p4info_pb2.ActionProfile, g: p4runtime_pb2.ActionProfileGroup,
                 max_size: int) -> dict[int, int]:
    """Member id -> weight of ``g``, checked against the profile's limits."""
    name = p.preamble.name
    weights: dict[int, int] = {}
    for mem in g.members:
        if mem.weight <= 0:
            raise invalid_argument(f"action profile {name}, group {g.group_id}: member "
                                   f"{mem.member_id} has weight {mem.weight}; weights are > 0")
        if mem.watch_port:
            _check_watch_port(name, g.group_id, mem)
        if mem.member_id in weights:
            raise already_exists(f"action profile {name}, group {g.group_id}: member "
                                 f"{mem.member_id} is listed twice (use a weight)")
        weights[mem.member_id] = mem.weight
    per_member = p.WhichOneof("selector_size_semantics") == "sum_of_members"
    if per_member:
        top = p.sum_of_members.max_member_weight
        for mid, w in weights.items():
            if top and w > top:
                raise invalid_argument(f"action profile {name}, group {g.group_id}: member "
                                       f"{mid} has weight {w}, above max_member_weight {top}")
    size = len(weights) if per_member else sum(weights.values())
    limit = max_size or p.max_group_size
    if limit and size > limit:
        raise resource_exhausted(f"action profile {name}, group {g.group_id}: {size} members "
                                 f"(weights summed) exceed the group's maximum size {limit}")
    slots = sum(weights.values())
    if slots > MAX_GROUP_SLOTS:
        raise resource_exhausted(f"action profile {name}, group {g.group_id}: the weights add "
                                 f"up to {slots}; the built-in switch supports at most "
                                 f"{MAX_GROUP_SLOTS} per group")
    return weights


def write_group(state: PipelineState, utype: int,
                g: p4runtime_pb2.ActionProfileGroup) -> None:
    p = _profile(state, g.action_profile_id)
    name = p.preamble.name
    if not p.with_selector:
        raise invalid_argument(f"action profile {name} has no selector: it has no groups")
    if g.group_id == 0:
        raise invalid_argument(f"action profile {name}: group id 0 is not valid in a write")
    sw = state.switch
    key = (p.preamble.id, g.group_id)
    if utype == Update.DELETE:
        sw.profile_group_delete(name, g.group_id)
        state.profile_groups.pop(key, None)
        return
    if g.max_size < 0:
        raise invalid_argument(f"action profile {name}, group {g.group_id}: max_size "
                               f"{g.max_size} is negative")
    if p.max_group_size and g.max_size > p.max_group_size:
        raise invalid_argument(f"action profile {name}, group {g.group_id}: max_size "
                               f"{g.max_size} exceeds max_group_size {p.max_group_size}")
    if g.max_size > MAX_GROUP_SLOTS:
        raise resource_exhausted(f"action profile {name}, group {g.group_id}: max_size "
                                 f"{g.max_size} is more than the built-in switch supports "
                                 f"({MAX_GROUP_SLOTS})")
    if utype == Update.INSERT:
        weights = _check_group(p, g, g.max_size)
        sw.profile_group_add(name, g.group_id, weights, g.max_size)
    else:
        old = state.profile_groups.get(key)
        created = old.max_size if old is not None else 0
        if g.max_size and g.max_size != created:
            raise invalid_argument(f"action profile {name}, group {g.group_id}: max_size "
                                   f"cannot change after the group's creation ({created})")
        weights = _check_group(p, g, created)
        sw.profile_group_modify(name, g.group_id, weights)
    stored = p4runtime_pb2.ActionProfileGroup()
    stored.CopyFrom(g)
    if utype == Update.MODIFY:
        stored.max_size = created
    state.profile_groups[key] = stored


def read_groups(state: PipelineState, g: p4runtime_pb2.ActionProfileGroup
                ) -> Iterator[p4runtime_pb2.Entity]:
    profiles = (list(state.schema.action_profiles.values()) if g.action_profile_id == 0
                else [_profile(state, g.action_profile_id)])
    for p in profiles:
        if not p.with_selector:
            continue
        pid = p.preamble.id
        for group in state.switch.profile_groups(p.preamble.name):
            if g.group_id and group.id != g.group_id:
                continue
            ent = p4runtime_pb2.Entity()
            out = ent.action_profile_group
            written = state.profile_groups.get((pid, group.id))
            if written is not None:
                out.CopyFrom(written)
            else:
                out.action_profile_id = pid
                out.group_id = group.id
                out.max_size = group.max_size
                for mid, w in group.members.items():
                    out.members.add(member_id=mid, weight=w)
            yield ent
