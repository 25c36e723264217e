"""Aggregation jobs planned from a topology: trees, resources, exact entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller import MulticastGroup, Replica, TableEntry
from controller.jobs import (
    Child,
    JobError,
    JobTable,
    TreeSwitch,
    allocate_region,
    compute_tree,
    free_ranges,
)
from controller.topology import Topology, TopologyError
from topologies.star import StarTopo


def star(n: int) -> Topology:
    return Topology.from_mininet(StarTopo(n=n))


def job_row(job: int, port: int, child: int, fan_in: int, is_root: int, parent: int,
            group: int, base: int, epoch: int = 1) -> TableEntry:
    return TableEntry("ina_job", {"hdr.ina.job_id": job,
                                  "standard_metadata.ingress_port": port},
                      "ina_child", {"child_index": child, "fan_in": fan_in,
                                    "is_root": is_root, "parent_port": parent,
                                    "mcast_grp": group, "region_base": base,
                                    "epoch": epoch})


def rewrite(port: int, host: int, sip: str = "10.0.0.254") -> TableEntry:
    return TableEntry("ina_result_rewrite", {"standard_metadata.egress_port": port},
                      "set_dst", {"dmac": f"00:00:00:00:00:0{host}", "dip": f"10.0.0.{host}",
                                  "sip": sip})


def test_star4_job_entries_exactly() -> None:
    table = JobTable(star(4))
    change = table.create(7, ["h1", "h2", "h3", "h4"], slots=32)
    job = change.job
    assert (job.regions, job.slots, job.mcast_grp) == ({"s1": 0}, 32, 1)
    assert job.tree.root == "s1"
    assert list(job.switches) == ["s1"]
    s1 = job.switches["s1"]
    assert s1.job_rows == [job_row(7, p, p - 1, 4, 1, 0, 1, 0) for p in (1, 2, 3, 4)]
    assert s1.group == MulticastGroup(1, [Replica(1), Replica(2), Replica(3), Replica(4)])
    assert s1.rewrites == [rewrite(p, p) for p in (1, 2, 3, 4)]
    assert change.rewrites == {"s1": s1.rewrites}
    assert job.epoch == 1
    assert job.aggregator == {f"h{i}": "10.0.0.254" for i in (1, 2, 3, 4)}


def test_second_job_gets_the_next_region_and_group_and_shares_rewrites() -> None:
    table = JobTable(star(4))
    table.create(1, ["h1", "h2"], slots=64)
    change = table.create(2, ["h2", "h3", "h4"], slots=100)
    job = change.job
    assert (job.regions, job.mcast_grp) == ({"s1": 64}, 2)
    s1 = job.switches["s1"]
    assert s1.job_rows == [job_row(2, p, p - 2, 3, 1, 0, 2, 64, epoch=2) for p in (2, 3, 4)]
    assert job.epoch == 2
    # port 2's rewrite row is job 1's already: job 2 installs only ports 3 and 4
    assert change.rewrites == {"s1": [rewrite(3, 3), rewrite(4, 4)]}
    # deleting job 1 keeps port 2's row (job 2 uses it) and removes port 1's
    assert table.delete(1).rewrites == {"s1": [rewrite(1, 1)]}
    # then job 2 removes all of its rows
    assert table.delete(2).rewrites == {"s1": [rewrite(p, p) for p in (2, 3, 4)]}
    assert table.jobs == {}


def test_regions_first_fit_and_reuse_after_delete() -> None:
    table = JobTable(star(2), total_slots=256)
    table.create(1, ["h1"], slots=100)
    table.create(2, ["h1"], slots=100)
    with pytest.raises(JobError, match=r"job 3 does not fit: with root s1: switch s1: no "
                       r"free region of 100 slots in the register arrays \(256 slots; free: "
                       r"200..255\); delete a job or use fewer slots$"):
        table.create(3, ["h1"], slots=100)
    assert table.create(3, ["h2"], slots=56).job.regions == {"s1": 200}
    table.delete(1)
    job4 = table.create(4, ["h2"], slots=60).job
    assert (job4.regions, job4.mcast_grp) == ({"s1": 0}, 1)  # job 1's region and group
    assert job4.epoch == 4  # never job 1's: its cells must count as empty
    assert table.jobs[3].mcast_grp == 3


def test_allocator_helpers() -> None:
    assert free_ranges([(10, 20), (0, 5), (18, 30)], 40) == [(5, 10), (30, 40)]
    assert free_ranges([], 8) == [(0, 8)]
    assert allocate_region([(0, 4)], 8, 4) == 4
    with pytest.raises(JobError, match="free: none"):
        allocate_region([(0, 8)], 8, 1)


@pytest.mark.parametrize(("job_id", "workers", "slots", "message"), [
    (70000, ["h1"], 8, r"job id 70000 is not in \[0, 65535\]"),
    (1, [], 8, "job 1 needs at least one worker"),
    (1, ["h1", "h2", "h1"], 8, "job 1: worker h1 is listed twice"),
    (1, ["h1", "h9"], 8, "unknown host 'h9'; hosts: h1, h2, h3"),
    (1, ["h1"], 0, r"job 1: slots must be in \[1, 256\], not 0"),
    (1, ["h1"], 257, r"job 1: slots must be in \[1, 256\], not 257"),
])
def test_bad_jobs(job_id: int, workers: list[str], slots: int, message: str) -> None:
    with pytest.raises((JobError, TopologyError), match=message):
        JobTable(star(3)).create(job_id, workers, slots)


def test_existing_and_missing_jobs() -> None:
    table = JobTable(star(3))
    table.create(5, ["h1", "h2"])
    with pytest.raises(JobError, match="job 5 exists already .workers h1,h2.; delete it first"):
        table.create(5, ["h3"])
    with pytest.raises(JobError, match=r"no job 6 \(jobs: 5\)"):
        table.delete(6)


def test_at_most_32_children_per_switch() -> None:
    table = JobTable(star(33))
    with pytest.raises(JobError, match="switch s1 would have 33 children in the job; a switch "
                       "aggregates at most 32"):
        table.create(1, [f"h{i}" for i in range(1, 34)])
    assert table.jobs == {}
    table.create(1, [f"h{i}" for i in range(1, 33)])


def leaf_spine() -> dict[str, Any]:
    """Leaves s1 (h1, h2) and s2 (h3, h4), spines s3 and s4; every leaf on both spines."""
    return {
        "hosts": [{"name": f"h{i}", "ip": f"10.0.0.{i}", "mac": f"00:00:00:00:00:0{i}"}
                  for i in (1, 2, 3, 4)],
        "switches": [{"name": f"s{i}", "device_id": i} for i in (1, 2, 3, 4)],
        "links": [["h1", "s1:1"], ["h2", "s1:2"], ["h3", "s2:1"], ["h4", "s2:2"],
                  ["s1:3", "s3:1"], ["s1:4", "s4:1"], ["s2:3", "s3:2"], ["s2:4", "s4:2"]],
    }


def test_leaf_spine_tree_and_entries() -> None:
    topo = Topology.from_json(leaf_spine())
    tree = compute_tree(topo, ["h1", "h2", "h3"])
    # s3 and s4 are both 1 hop from each leaf; s3 wins by name
    assert tree.root == "s3"
    assert tree.switches == {
        "s3": TreeSwitch("s3", (Child(1, "s1"), Child(2, "s2")), None),
        "s1": TreeSwitch("s1", (Child(1, "h1"), Child(2, "h2")), 3),
        "s2": TreeSwitch("s2", (Child(1, "h3"),), 3),
    }
    job = JobTable(topo).create(9, ["h1", "h2", "h3"], slots=16).job
    s1, s2, s3 = (job.switches[s] for s in ("s1", "s2", "s3"))
    assert s3.job_rows == [job_row(9, 1, 0, 2, 1, 0, 1, 0), job_row(9, 2, 1, 2, 1, 0, 1, 0)]
    assert s3.group == MulticastGroup(1, [1, 2]) and s3.rewrites == []
    # a non-root switch also accepts RESULTs on its parent port (child_index unused)
    assert s1.job_rows == [job_row(9, 1, 0, 2, 0, 3, 1, 0), job_row(9, 2, 1, 2, 0, 3, 1, 0),
                           job_row(9, 3, 2, 2, 0, 3, 1, 0)]
    assert s2.job_rows == [job_row(9, 1, 0, 1, 0, 3, 1, 0), job_row(9, 3, 1, 1, 0, 3, 1, 0)]
    assert s2.rewrites == [rewrite(1, 3, sip="10.0.0.253")]
    assert job.aggregator == {"h1": "10.0.0.254", "h2": "10.0.0.254", "h3": "10.0.0.253"}


def test_workers_on_one_leaf_keep_the_tree_on_that_leaf() -> None:
    tree = compute_tree(Topology.from_json(leaf_spine()), ["h2", "h1"])
    assert tree.root == "s1" and list(tree.switches) == ["s1"]


def test_disconnected_workers() -> None:
    data = leaf_spine()
    data["links"] = data["links"][:4]
    with pytest.raises(JobError, match="the workers h1, h3 are not connected to one another"):
        JobTable(Topology.from_json(data)).create(1, ["h1", "h3"])


def test_state_round_trip(tmp_path: Path) -> None:
    topo = star(4)
    table = JobTable(topo, total_slots=128)
    table.create(3, ["h1", "h2"], slots=16)
    table.create(1, ["h3", "h4"], slots=16)
    path = tmp_path / "jobs.json"
    table.save(path)
    assert json.loads(path.read_text()) == {"total_slots": 128, "next_epoch": 3, "jobs": [
        {"job_id": 1, "workers": ["h3", "h4"], "slots": 16, "root": "s1",
         "regions": {"s1": 16}, "mcast_grp": 2, "epoch": 2,
         "tree": {"s1": {"parent_port": None, "children": [[3, "h3"], [4, "h4"]]}}},
        {"job_id": 3, "workers": ["h1", "h2"], "slots": 16, "root": "s1",
         "regions": {"s1": 0}, "mcast_grp": 1, "epoch": 1,
         "tree": {"s1": {"parent_port": None, "children": [[1, "h1"], [2, "h2"]]}}}]}
    again = JobTable.load(topo, path)
    assert (again.total_slots, again.next_epoch) == (128, 3)
    assert {j: again.jobs[j].switches for j in again.jobs} == {
        j: table.jobs[j].switches for j in table.jobs}
    assert again.create(2, ["h1"], slots=1).job.epoch == 3
    assert JobTable.load(topo, tmp_path / "none.json").jobs == {}
    # A tree planned around a failed link comes back as it was, not as the whole
    # topology would plan it.
    ring = leafspine_job_state()
    path.write_text(json.dumps(ring))
    restored = JobTable.load(leafspine(), path).jobs[1]
    assert restored.tree.root == "s3"
    assert [restored.tree.parent(s) for s in ("s1", "s4", "s2")] == ["s4", "s2", "s3"]
    path.write_text('{"jobs": 3}')
    with pytest.raises(JobError, match="jobs.json: not a job state written by `ina ctl`"):
        JobTable.load(topo, path)
    path.write_text('{"total_slots": 128, "next_epoch": 2, "jobs": [{"job_id": 1, '
                    '"workers": ["h1"], "slots": 4, "root": "s1", "regions": {"s1": 0}, '
                    '"mcast_grp": 1, "epoch": 2}]}')
    with pytest.raises(JobError, match="jobs.json: not a job state written by `ina ctl`: "
                       "job 1: epoch 2 is not below next_epoch 2"):
        JobTable.load(topo, path)


def leafspine() -> Topology:
    from topologies.spec import parse_topo_spec

    return Topology.from_mininet(parse_topo_spec("leafspine,2,2,2"))


def leafspine_job_state() -> dict[str, object]:
    """Job 1 of h1..h4 rooted at spine s3, planned with link s1-s3 down: s1 reaches s3
    through s4 and s2."""
    from controller.fabric import Fabric, LinkEnds

    live = Fabric(leafspine(), down_links={LinkEnds.of("s1", 3, "s3", 1)}).live()
    table = JobTable(live)
    table.create(1, ["h1", "h2", "h3", "h4"], slots=8, root="s3")
    return table.to_json()
