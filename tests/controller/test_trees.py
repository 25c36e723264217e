"""Aggregation trees on multi-switch topologies: root choice, depth, fan-ins, parent
ports; jobs sharing the fabric (regions per switch, different roots, refusals that
change nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.jobs import JobError, JobTable, Tree, candidate_roots, compute_tree
from controller.topology import Topology, TopologyError
from topologies.spec import parse_topo_spec


def topology(spec: str) -> Topology:
    return Topology.from_mininet(parse_topo_spec(spec))


def hosts(first: int, last: int) -> list[str]:
    return [f"h{i}" for i in range(first, last + 1)]


def fan_ins(tree: Tree) -> dict[str, int]:
    return {name: node.fan_in for name, node in tree.switches.items()}


def check_consistent(topo: Topology, tree: Tree, workers: list[str]) -> None:
    """Every child port leads to that child, every parent port to the parent, and every
    worker hangs off a switch of the tree."""
    for name, node in tree.switches.items():
        for child in node.children:
            assert topo.ports[name][child.port].node == child.node
        if node.parent_port is None:
            assert name == tree.root
        else:
            assert topo.ports[name][node.parent_port].node == tree.parent(name)
    leaves = [c.node for node in tree.switches.values() for c in node.children
              if c.node in topo.hosts]
    assert sorted(leaves) == sorted(workers)


def test_fattree_16_workers_root_is_a_core() -> None:
    topo = topology("fattree,4")
    tree = compute_tree(topo, hosts(1, 16))
    check_consistent(topo, tree, hosts(1, 16))
    assert tree.root == "s1" and tree.depth == 2
    assert fan_ins(tree) == {"s1": 4, **{s: 2 for s in ("s5", "s7", "s8", "s9", "s11",
                                                        "s12", "s13", "s15", "s16", "s17",
                                                        "s19", "s20")}}
    assert candidate_roots(topo, hosts(1, 16))[:4] == ["s1", "s2", "s3", "s4"]


def test_fattree_8_workers_in_two_pods() -> None:
    topo = topology("fattree,4")
    tree = compute_tree(topo, hosts(1, 8))
    check_consistent(topo, tree, hosts(1, 8))
    assert tree.root == "s1"
    assert fan_ins(tree) == {"s1": 2, "s5": 2, "s7": 2, "s8": 2, "s9": 2, "s11": 2,
                             "s12": 2}


def test_fattree_workers_in_one_pod_stay_in_the_pod() -> None:
    topo = topology("fattree,4")
    tree = compute_tree(topo, hosts(1, 4))
    assert tree.root == "s5" and fan_ins(tree) == {"s5": 2, "s7": 2, "s8": 2}
    assert compute_tree(topo, ["h1", "h2"]).switches.keys() == {"s7"}


def test_an_asked_root() -> None:
    topo = topology("fattree,4")
    tree = compute_tree(topo, hosts(1, 16), root="s5")
    check_consistent(topo, tree, hosts(1, 16))
    assert tree.root == "s5" and tree.depth == 3
    assert fan_ins(tree)["s5"] == 3  # its edges s7, s8 and the core towards the other pods
    with pytest.raises(TopologyError, match="unknown switch 's99'"):
        compute_tree(topo, hosts(1, 4), root="s99")


def test_leafspine_torus_dragonfly_trees() -> None:
    topo = topology("leafspine,2,2,2")
    tree = compute_tree(topo, hosts(1, 4))
    assert tree.root == "s3" and fan_ins(tree) == {"s3": 2, "s1": 2, "s2": 2}
    topo = topology("torus,2,2")
    tree = compute_tree(topo, hosts(1, 4))
    check_consistent(topo, tree, hosts(1, 4))
    # a ring of four, s1 - s2 - s4 - s3: s4 is two hops from s1, through s3 (its lower
    # port)
    assert tree.root == "s1" and tree.depth == 2
    assert fan_ins(tree) == {"s1": 3, "s2": 1, "s3": 2, "s4": 1}
    topo = topology("dragonfly,3,2,1")
    tree = compute_tree(topo, hosts(1, 6))
    check_consistent(topo, tree, hosts(1, 6))
    assert tree.depth == 3  # local, global, local: every switch is 3 hops from another


def test_a_switch_with_one_child_passes_through() -> None:
    topo = topology("linear,4,1")
    table = JobTable(topo)
    job = table.create(1, ["h1", "h4"]).job
    assert job.tree.root == "s2"  # depth 2 either way; s2 before s3 by name
    assert fan_ins(job.tree) == {"s2": 2, "s1": 1, "s3": 1, "s4": 1}
    s3 = job.switches["s3"]
    # one child row (s4's port) and the parent row; the aggregate goes up at once
    assert [(r.params["child_index"], r.params["fan_in"], r.params["is_root"],
             r.params["parent_port"]) for r in s3.job_rows] == [(0, 1, 0, 2), (1, 1, 0, 2)]


def test_jobs_share_switches_with_regions_of_their_own() -> None:
    table = JobTable(topology("fattree,4"))
    one = table.create(1, hosts(1, 8), slots=200).job
    assert set(one.regions.values()) == {0}
    # job 2's best root s1 has 56 slots left: it gets the next core, s2, and its own
    # regions on its own aggregation and edge switches
    two = table.create(2, hosts(9, 16), slots=100).job
    assert two.tree.root == "s2" and set(two.tree.switches).isdisjoint(
        set(one.tree.switches) - {"s1"})
    assert two.regions == {name: 0 for name in two.tree.switches}
    assert two.mcast_grp == 1  # no switch of its tree has a group yet
    # job 3 crosses both: s7 has 56 slots left after job 1, s15 156 after job 2
    three = table.create(3, ["h1", "h9"], slots=50).job
    assert three.regions["s7"] == 200 and three.regions["s15"] == 100
    assert three.mcast_grp == 2  # group 1 is taken on s1 (job 1) and on s13 (job 2)
    # a job that fits nowhere changes nothing
    before = ({j: job.regions for j, job in table.jobs.items()}, table.next_epoch)
    with pytest.raises(JobError, match=r"^job 4 does not fit: with root s7: switch s7: no "
                       r"free region of 10 slots in the register arrays \(256 slots; free: "
                       r"250..255\); delete a job or use fewer slots \(and no other tree fits: 19 "
                       r"other roots tried\)$"):
        table.create(4, ["h1", "h2"], slots=10)
    with pytest.raises(JobError, match=r"^job 4 does not fit: with root s1: switch s1: no "
                       r"free region of 60 slots .* \(and no other tree fits: 19 other roots "
                       r"tried\)$"):
        table.create(4, ["h1", "h16"], slots=60)
    assert ({j: job.regions for j, job in table.jobs.items()}, table.next_epoch) == before
    # deleting job 1 frees its regions on every switch of its tree
    table.delete(1)
    assert table.create(4, ["h1", "h2"], slots=200).job.regions == {"s7": 0}


def test_the_job_table_has_room_for_so_many_rows() -> None:
    table = JobTable(topology("star,4"), job_rows=5)
    table.create(1, hosts(1, 4))
    with pytest.raises(JobError, match="switch s1: its ina_job table holds 5 rows, 4 are "
                                       "taken and the job needs 2"):
        table.create(2, ["h1", "h2"])
    table.create(2, ["h3"])


def test_an_asked_root_that_does_not_fit_or_reach() -> None:
    table = JobTable(topology("fattree,4"))
    table.create(1, hosts(1, 16), slots=256)
    with pytest.raises(JobError, match=r"^job 2 does not fit: with root s2: switch s5: no "
                       r"free region of 1 slot "):
        table.create(2, ["h1", "h5"], slots=1, root="s2")
    data = Topology.from_mininet(parse_topo_spec("linear,3,1")).to_json()
    data["links"] = [link for link in data["links"] if link != ["s2:3", "s3:2"]]
    cut = Topology.from_json(data)
    with pytest.raises(JobError, match=r"^job 1 does not fit: with root s1: root s1 does not "
                                       r"reach s3, the switch of h3$"):
        JobTable(cut).create(1, ["h1", "h3"], root="s1")


def test_state_keeps_roots_and_regions(tmp_path: Path) -> None:
    topo = topology("fattree,4")
    table = JobTable(topo)
    table.create(1, hosts(1, 8), slots=200)
    table.create(2, hosts(1, 4), slots=50, root="s1")
    path = tmp_path / "jobs.json"
    table.save(path)
    again = JobTable.load(topo, path)
    assert {j: (job.tree, job.regions) for j, job in again.jobs.items()} == {
        j: (job.tree, job.regions) for j, job in table.jobs.items()}
    assert again.jobs[2].tree.root == "s1" and again.jobs[2].regions["s7"] == 200
