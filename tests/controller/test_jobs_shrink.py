"""When the switches' register arrays cannot give a job its slots: refused
(``NoRoomError``, nothing changes) or, asked to ``shrink``, fewer slots, as many as
fit (``controller.jobs``)."""

from __future__ import annotations

import pytest

from controller.jobs import JobError, JobTable, NoRoomError, largest_free
from controller.topology import Topology
from topologies.spec import parse_topo_spec


def topology(spec: str) -> Topology:
    return Topology.from_mininet(parse_topo_spec(spec))


def test_largest_free() -> None:
    assert largest_free([(0, 2), (4, 5)], 16) == 11
    assert largest_free([(0, 2), (3, 16)], 16) == 1
    assert largest_free([(0, 16)], 16) == 0
    assert largest_free([], 16) == 16


def test_without_shrink_a_job_that_does_not_fit_is_refused_and_nothing_changes() -> None:
    table = JobTable(topology("star,4"), total_slots=16)
    table.create(1, ["h1", "h2"], slots=12)
    with pytest.raises(NoRoomError, match=r"^job 2 does not fit: with root s1: switch s1: no "
                       r"free region of 12 slots in the register arrays \(16 slots; free: "
                       r"12..15\); delete a job or use fewer slots$"):
        table.create(2, ["h3", "h4"], slots=12)
    assert list(table.jobs) == [1] and table.next_epoch == 2


def test_shrink_gives_the_job_the_slots_that_are_left() -> None:
    table = JobTable(topology("star,4"), total_slots=16)
    table.create(1, ["h1", "h2"], slots=12)
    job = table.create(2, ["h3", "h4"], slots=12, shrink=True).job
    assert (job.slots, job.regions, job.epoch, job.mcast_grp) == (4, {"s1": 12}, 2, 2)
    # the entries carry the shrunk region; the switch never sees the 12 asked for
    assert {row.params["region_base"] for row in job.switches["s1"].job_rows} == {12}
    assert table.to_json()["jobs"][1]["slots"] == 4


def test_shrink_does_not_shrink_a_job_that_fits() -> None:
    table = JobTable(topology("star,4"), total_slots=16)
    assert table.create(1, ["h1", "h2"], slots=12, shrink=True).job.slots == 12


def test_shrink_takes_the_largest_free_range() -> None:
    table = JobTable(topology("star,2"), total_slots=16)
    for job_id, slots in ((1, 2), (2, 6), (3, 3)):  # 0..1, 2..7, 8..10
        table.create(job_id, ["h1"], slots=slots)
    table.delete(1)  # free: 0..1 and 11..15
    job = table.create(4, ["h2"], slots=8, shrink=True).job
    assert (job.slots, job.regions) == (5, {"s1": 11})


def test_shrink_refuses_when_no_slot_is_free() -> None:
    table = JobTable(topology("star,2"), total_slots=16)
    table.create(1, ["h1"], slots=16)
    with pytest.raises(NoRoomError, match=r"job 2 does not fit: .*free: none"):
        table.create(2, ["h2"], slots=4, shrink=True)
    assert list(table.jobs) == [1] and table.next_epoch == 2


def test_shrink_takes_the_tree_with_the_most_room() -> None:
    """Leaves s1..s6 (one host each) under spines s7 and s8: s7 has 4 slots left, s8 6,
    so a job of h1 and h2 asking for 8 gets 6 under s8 (s7 comes first when both fit)."""
    table = JobTable(topology("leafspine,6,2,1"), total_slots=16)
    table.create(1, ["h3", "h4"], slots=12, root="s7")
    table.create(2, ["h5", "h6"], slots=10, root="s8")
    job = table.create(3, ["h1", "h2"], slots=8, shrink=True).job
    assert (job.tree.root, job.slots) == ("s8", 6)
    assert job.regions == {"s8": 10, "s1": 0, "s2": 0}
    assert table.create(4, ["h1", "h2"], slots=4).job.tree.root == "s7"


def test_a_tree_that_cannot_be_built_is_not_a_lack_of_room() -> None:
    table = JobTable(topology("star,33"))
    with pytest.raises(JobError, match="would have 33 children") as raised:
        table.create(1, [f"h{i}" for i in range(1, 34)], shrink=True)
    assert not isinstance(raised.value, NoRoomError)


def test_no_rows_left_is_a_lack_of_room_that_shrinking_cannot_help() -> None:
    table = JobTable(topology("star,4"), total_slots=16, job_rows=3)
    table.create(1, ["h1", "h2"], slots=4)
    with pytest.raises(NoRoomError, match=r"switch s1: its ina_job table holds 3 rows, 2 are "
                       r"taken and the job needs 2"):
        table.create(2, ["h3", "h4"], slots=4, shrink=True)
