"""The script, part 1: capabilities, the pipeline config and arbitration."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2
from p4rt_entities import mc_group, table_entries
from p4rt_helpers import drain, update
from p4rt_session import (
    Answer,
    GetType,
    Session,
    SetAction,
    answer_of,
    arbitrate,
    get_pipeline,
    notifications,
    read,
    set_pipeline,
    step,
    write,
)

# ------------------------------------------------------------------ before a pipeline


@step
def capabilities(s: Session) -> Answer:
    return answer_of(lambda: s.primary.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(),
                                                         timeout=10))


@step
def get_pipeline_before_any(s: Session) -> Answer:
    return get_pipeline(s, GetType.ALL)


@step
def read_before_pipeline(s: Session) -> Answer:
    return read(s, table_entries(s))


@step
def write_before_pipeline(s: Session) -> Answer:
    return write(s, update("INSERT", mc_group(1, (1, 1))))


# ------------------------------------------------------------------ SetForwardingPipelineConfig

@step
def set_pipeline_unspecified_action(s: Session) -> Answer:
    return set_pipeline(s, SetAction.UNSPECIFIED)


@step
def set_pipeline_wrong_device(s: Session) -> Answer:
    return set_pipeline(s, SetAction.VERIFY_AND_COMMIT, device_id=s.target.device_id + 1)


@step
def set_pipeline_from_backup(s: Session) -> Answer:
    return set_pipeline(s, SetAction.VERIFY_AND_COMMIT, client=s.client((0, 5)))


@step
def set_pipeline_without_election_id(s: Session) -> Answer:
    return set_pipeline(s, SetAction.VERIFY_AND_COMMIT, client=s.client(None, arbitrate=False))


@step
def set_pipeline_garbage_config(s: Session) -> Answer:
    return set_pipeline(s, SetAction.VERIFY, config=b"\x00not a device config")


@step
def set_pipeline_without_p4info(s: Session) -> Answer:
    return set_pipeline(s, SetAction.VERIFY, p4info=False)


@step
def set_pipeline_commit_nothing_saved(s: Session) -> Answer:
    return set_pipeline(s, SetAction.COMMIT, p4info=False, config=b"")


@step
def set_pipeline_verify(s: Session) -> Answer:
    return set_pipeline(s, SetAction.VERIFY)


@step
def get_pipeline_after_verify(s: Session) -> Answer:
    return get_pipeline(s, GetType.ALL)


@step
def set_pipeline_verify_and_save(s: Session) -> Answer:
    return set_pipeline(s, SetAction.VERIFY_AND_SAVE, cookie=3)


@step
def set_pipeline_commit(s: Session) -> Answer:
    return set_pipeline(s, SetAction.COMMIT, p4info=False, config=b"")


@step
def set_pipeline_verify_and_commit(s: Session) -> Answer:
    return set_pipeline(s, SetAction.VERIFY_AND_COMMIT, cookie=7)


@step
def get_pipeline_all(s: Session) -> Answer:
    return get_pipeline(s, GetType.ALL)


@step
def get_pipeline_cookie_only(s: Session) -> Answer:
    return get_pipeline(s, GetType.COOKIE_ONLY)


@step
def get_pipeline_p4info_and_cookie(s: Session) -> Answer:
    return get_pipeline(s, GetType.P4INFO_AND_COOKIE)


@step
def get_pipeline_device_config_and_cookie(s: Session) -> Answer:
    return get_pipeline(s, GetType.DEVICE_CONFIG_AND_COOKIE)


@step
def get_pipeline_wrong_device(s: Session) -> Answer:
    return get_pipeline(s, GetType.ALL, device_id=s.target.device_id + 1)


# ------------------------------------------------------------------ arbitration
# Clients so far: the primary (0,10), a backup (0,5) and one that never arbitrated.

@step
def arbitration_new_primary(s: Session) -> Answer:
    """A client with a higher election id becomes primary; the old primary and the
    backup hear about it."""
    old = s.primary
    drain(old.arbitration), drain(s.backup.arbitration)
    s.primary = s.client(None, arbitrate=False)
    return Answer(data=("new: " + arbitrate(s.primary, (0, 20)),
                        "old: " + notifications(old), "backup: " + notifications(s.backup)))


@step
def arbitration_lower_id(s: Session) -> Answer:
    return Answer(data=(arbitrate(s.client(None, arbitrate=False), (0, 15)),))


@step
def arbitration_same_id_as_primary(s: Session) -> Answer:
    return Answer(data=(arbitrate(s.client(None, arbitrate=False), (0, 20)),))


@step
def arbitration_wrong_device(s: Session) -> Answer:
    c = s.client(None, arbitrate=False)
    return Answer(data=(arbitrate(c, (0, 30), device_id=s.target.device_id + 1),))


@step
def arbitration_without_election_id(s: Session) -> Answer:
    return Answer(data=(arbitrate(s.client(None, arbitrate=False), None),))


@step
def arbitration_primary_steps_down(s: Session) -> Answer:
    """A backup raises its election id above the primary's, lowers it again (a primary
    stepping down), then raises it back and stays primary."""
    c = s.client((0, 12))
    up = arbitrate(c, (0, 25))
    old = notifications(s.primary)
    down = arbitrate(c, (0, 12))
    old_after_down = notifications(s.primary)
    up_again = arbitrate(c, (0, 25))
    s.primary = c
    return Answer(data=(up, "old primary: " + old, down, "old primary: " + old_after_down,
                        up_again))


@step
def write_from_backup(s: Session) -> Answer:
    return write(s, update("INSERT", mc_group(1, (1, 1))), client=s.backup)


@step
def write_without_election_id(s: Session) -> Answer:
    return write(s, update("INSERT", mc_group(1, (1, 1))), client=s.clients[2])


@step
def write_from_primary_wrong_election_id(s: Session) -> Answer:
    stranger = s.client((0, 21), arbitrate=False)  # sends the id no stream holds
    return write(s, update("INSERT", mc_group(1, (1, 1))), client=stranger)


@step
def write_wrong_device(s: Session) -> Answer:
    return write(s, update("INSERT", mc_group(1, (1, 1))), device_id=s.target.device_id + 1)


@step
def read_from_backup(s: Session) -> Answer:
    return read(s, table_entries(s, "fwd"), client=s.backup)


@step
def read_wrong_device(s: Session) -> Answer:
    return read(s, table_entries(s), device_id=s.target.device_id + 1)


@step
def primary_leaves(s: Session) -> Answer:
    """The primary closes its stream: the backups hear of it."""
    drain(s.backup.arbitration)
    s.primary.close()
    return Answer(data=("backup: " + notifications(s.backup),))


@step
def primary_returns(s: Session) -> Answer:
    s.primary = s.client(None, arbitrate=False)
    return Answer(data=(arbitrate(s.primary, (0, 40)),))
