"""The controller against in-process P4Runtime servers running ``p4/aggregation.p4``:
what a job installs reads back, aggregation packets through the installed job come out
as RESULTs to every worker, and deleting the job removes exactly its entries."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fabric import Fabric
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from controller import MulticastGroup, P4RuntimeClient, Replica
from controller.controller import Controller
from controller.jobs import JobError
from controller.pipeline import PipelineFiles, compile_pipeline
from controller.routes import compute_routes
from controller.topology import Topology
from switch.runtime import P4RuntimeServer
from topologies.star import StarTopo

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4" / "aggregation.p4"
K = 8
SLOTS = 64  # INA_SLOTS of the compiled program
SWITCH_MAC = "02:00:00:ff:00:01"
AGG_PORT = 48879


@pytest.fixture(scope="module")
def aggregation(tmp_path_factory: pytest.TempPathFactory) -> PipelineFiles:
    return compile_pipeline(PROGRAM, tmp_path_factory.mktemp("agg"),
                            defines={"INA_K": str(K), "INA_SLOTS": str(SLOTS)})


class Star:
    """A star-4 topology whose s1 is an in-process server; ``out`` collects frames."""

    def __init__(self) -> None:
        self.out: list[tuple[int, bytes]] = []
        self.server = P4RuntimeServer(device_id=1, address="127.0.0.1:0", cpu_port=255,
                                      on_output=lambda p, f: self.out.append((p, f)))
        port = self.server.start()
        data = Topology.from_mininet(StarTopo(n=4)).to_json()
        data["switches"][0]["grpc_address"] = f"127.0.0.1:{port}"
        self.json = data
        self.topology = Topology.from_json(data)

    def inject(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        return self.server.inject(port, frame)


@pytest.fixture
def star() -> Iterator[Star]:
    s = Star()
    yield s
    s.server.stop(grace=0)


@pytest.fixture
def ctl(star: Star, aggregation: PipelineFiles) -> Iterator[Controller]:
    with Controller(star.topology, timeout=5) as c:
        c.push_pipeline(aggregation)
        c.install_routes()
        yield c


def contribution(worker: int, job: int, slot: int, version: int, values: list[int],
                 exponent: int = 0, chunk: int = 0) -> bytes:
    payload = struct.pack(">HHBBbBI", job, slot, version, 0, exponent, 0, chunk)
    payload += struct.pack(f">{K}i", *values)
    return bytes(Ether(src=f"00:00:00:00:00:0{worker}", dst=SWITCH_MAC)
                 / IP(src=f"10.0.0.{worker}", dst="10.0.0.254")
                 / UDP(sport=AGG_PORT, dport=AGG_PORT, chksum=0) / payload)


def dump(client: P4RuntimeClient, table: str) -> list[Any]:
    return sorted(client.read_table(table), key=lambda e: sorted(
        (k, str(v)) for k, v in e.match.items()))


def test_setup_installs_routes(ctl: Controller, star: Star) -> None:
    client = ctl.client("s1")
    got = dump(client, "ipv4_lpm")
    assert len(got) == 4
    expected = [r.entry() for r in compute_routes(star.topology)["s1"]]
    for entry, want in zip(got, expected, strict=True):
        assert entry.match["hdr.ipv4.dst_addr"].prefix_len == 32
        assert entry.action.endswith("forward")
        assert entry.params == {"port": want.params["port"],
                                "dst_mac": int(str(want.params["dst_mac"]).replace(":", ""),
                                               16)}
    assert ctl.jobs.total_slots == SLOTS  # from the program's register size
    # an ordinary packet is routed with the switch MAC as source
    frame = bytes(Ether(src="00:00:00:00:00:01", dst=SWITCH_MAC)
                  / IP(src="10.0.0.1", dst="10.0.0.3") / UDP(sport=1, dport=2) / b"x")
    [(port, out)] = star.inject(1, frame)
    assert port == 3
    assert Ether(out).dst == "00:00:00:00:00:03" and Ether(out).src == SWITCH_MAC


def test_job_create_installs_entries_that_aggregate(ctl: Controller, star: Star) -> None:
    client = ctl.client("s1")
    # slot 5 version 1 left dirty (as by an earlier job): the job's epoch makes it empty
    client.write_register("ina_bitmap", 2 * 5 + 1, 0b0110)
    client.write_register("ina_count", 2 * 5 + 1, 2)
    client.write_register("ina_lane_0", 2 * 5 + 1, 1000)
    job = ctl.create_job(3, ["h1", "h2", "h3", "h4"], slots=16)
    rows = dump(client, "ina_job")
    assert [(int(r.match["hdr.ina.job_id"].value),
             int(r.match["standard_metadata.ingress_port"].value)) for r in rows] == [
        (3, 1), (3, 2), (3, 3), (3, 4)]
    assert [r.params for r in rows] == [
        {"child_index": i, "fan_in": 4, "is_root": 1, "parent_port": 0, "mcast_grp": 1,
         "region_base": 0, "epoch": 1} for i in range(4)]
    assert client.read_multicast_groups(1) == [
        MulticastGroup(1, [Replica(p) for p in (1, 2, 3, 4)])]
    rewrites = dump(client, "ina_result_rewrite")
    assert [r.params for r in rewrites] == [
        {"dmac": p, "dip": 0x0A000000 + p, "sip": 0x0A0000FE} for p in (1, 2, 3, 4)]
    assert client.read_register("ina_bitmap", 11) == {11: 0b0110}  # no register writes
    assert job.aggregator["h1"] == "10.0.0.254"

    # all four contribute to slot 5 version 1: the sum comes back to everyone
    for w in (1, 2, 3):
        assert star.inject(w, contribution(w, 3, 5, 1, [w] * K, exponent=w)) == []
    outs = star.inject(4, contribution(4, 3, 5, 1, [-100] * K, exponent=-2))
    assert sorted(p for p, _ in outs) == [1, 2, 3, 4]
    for port, frame in outs:
        pkt = Ether(frame)
        assert (pkt.dst, pkt[IP].dst, pkt[IP].src) == (
            f"00:00:00:00:00:0{port}", f"10.0.0.{port}", "10.0.0.254")
        payload = bytes(pkt[UDP].payload)
        job_id, slot, version, flags, exponent, _, _ = struct.unpack(">HHBBbBI", payload[:12])
        assert (job_id, slot, version, flags, exponent) == (3, 5, 1, 1, 3)
        assert list(struct.unpack(f">{K}i", payload[12:])) == [-94] * K
    assert client.read_register("ina_epoch", 11) == {11: 1}
    # another job id on the same ports is not installed: dropped
    assert star.inject(1, contribution(1, 4, 0, 0, [1] * K)) == []


def test_a_new_job_in_a_freed_region_starts_from_empty_cells(ctl: Controller,
                                                             star: Star) -> None:
    ctl.create_job(1, ["h1", "h2"], slots=8)
    # h1 contributes to slot 2 version 0, h2 never does: the cell stays half full
    assert star.inject(1, contribution(1, 1, 2, 0, [7] * K)) == []
    ctl.delete_job(1)
    job = ctl.create_job(2, ["h1", "h2"], slots=8)
    assert (job.regions, job.epoch) == ({"s1": 0}, 2)
    # h1's contribution to the same cell is new, not a retransmission of job 1's
    assert star.inject(1, contribution(1, 2, 2, 0, [1] * K)) == []
    outs = star.inject(2, contribution(2, 2, 2, 0, [2] * K))
    assert sorted(p for p, _ in outs) == [1, 2]
    for _, frame in outs:
        payload = bytes(Ether(frame)[UDP].payload)
        assert list(struct.unpack(f">{K}i", payload[12:])) == [3] * K


def test_job_delete_removes_exactly_what_create_installed(ctl: Controller) -> None:
    client = ctl.client("s1")
    routes = dump(client, "ipv4_lpm")
    ctl.create_job(1, ["h1", "h2"], slots=8)
    ctl.create_job(2, ["h2", "h3"], slots=8)
    assert len(dump(client, "ina_job")) == 4
    assert [int(r.match["standard_metadata.egress_port"].value)
            for r in dump(client, "ina_result_rewrite")] == [1, 2, 3]
    ctl.delete_job(1)
    assert [(r.params["region_base"], int(r.match["standard_metadata.ingress_port"].value))
            for r in dump(client, "ina_job")] == [(8, 2), (8, 3)]
    assert [g.group_id for g in client.read_multicast_groups()] == [2]
    # port 2's rewrite stays for job 2
    assert [int(r.match["standard_metadata.egress_port"].value)
            for r in dump(client, "ina_result_rewrite")] == [2, 3]
    ctl.delete_job(2)
    assert dump(client, "ina_job") == [] and dump(client, "ina_result_rewrite") == []
    assert client.read_multicast_groups() == []
    assert dump(client, "ipv4_lpm") == routes
    with pytest.raises(JobError, match="no job 2"):
        ctl.delete_job(2)


def test_failed_create_rolls_back(ctl: Controller) -> None:
    client = ctl.client("s1")
    # an entry the job will collide with, installed behind the controller's back
    client.insert(MulticastGroup(1, [9]))
    with pytest.raises(Exception, match="multicast group 1"):
        ctl.create_job(1, ["h1", "h2"], slots=8)
    assert ctl.jobs.jobs == {}
    assert dump(client, "ina_result_rewrite") == [] and dump(client, "ina_job") == []
    assert client.read_multicast_groups() == [MulticastGroup(1, [Replica(9)])]


def ctl_cli(capsys: pytest.CaptureFixture[str], topo: Path, *argv: str) -> tuple[int, str, str]:
    from controller.cli import main

    code = main(["--topo", str(topo), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_session(star: Star, aggregation: PipelineFiles, tmp_path: Path,
                     capsys: pytest.CaptureFixture[str]) -> None:
    topo = tmp_path / "net.json"
    Topology.from_json(star.json).save(topo)
    code, out, err = ctl_cli(capsys, topo, "setup", "--p4info", str(aggregation.p4info),
                             "--config", str(aggregation.config))
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "pipeline set on s1; 4 routes installed; no jobs"

    code, out, err = ctl_cli(capsys, topo, "job", "create", "--id", "5", "--workers",
                             "h1,h3", "--slots", "16")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "job 5: workers h1,h3; root s1; 16 slots; multicast group 1; epoch 1",
        "  s1: root; fan-in 2; slots 0..15",
        "  ├── port 1: h1",
        "  └── port 3: h3",
        "  workers send: h1, h3 to 10.0.0.254"]
    assert (tmp_path / "net.jobs.json").exists()

    code, out, _ = ctl_cli(capsys, topo, "table", "dump", "s1", "ina_job")
    assert code == 0
    assert out.splitlines() == [
        "InaIngress.ina_job: 2 entries",
        "  ina_job hdr.ina.job_id=5 standard_metadata.ingress_port=1 -> ina_child("
        "child_index=0, fan_in=2, is_root=1, parent_port=0, mcast_grp=1, region_base=0, "
        "epoch=1)",
        "  ina_job hdr.ina.job_id=5 standard_metadata.ingress_port=3 -> ina_child("
        "child_index=1, fan_in=2, is_root=1, parent_port=0, mcast_grp=1, region_base=0, "
        "epoch=1)"]
    code, out, _ = ctl_cli(capsys, topo, "table", "dump", "s1")
    assert "InaEgress.ina_result_rewrite: 2 entries" in out.splitlines()
    assert ("  ina_result_rewrite standard_metadata.egress_port=3 -> set_dst("
            "dmac=00:00:00:00:00:03, dip=10.0.0.3, sip=10.0.0.254)") in out.splitlines()
    assert ("  ipv4_lpm hdr.ipv4.dst_addr=10.0.0.2/32 -> forward(port=2, "
            "dst_mac=00:00:00:00:00:02)") in out.splitlines()

    # a contribution of h1 shows in the bitmap of slot 2 version 0 (cell 4)
    star.inject(1, contribution(1, 5, 2, 0, [1] * K))
    code, out, _ = ctl_cli(capsys, topo, "register", "read", "s1", "ina_bitmap", "4")
    assert (code, out) == (0, "InaIngress.ina_bitmap[4] = 1\n")
    code, out, _ = ctl_cli(capsys, topo, "register", "read", "s1", "ina_lane_0", "4")
    assert (code, out) == (0, "InaIngress.ina_lane_0[4] = 1\n")

    code, out, _ = ctl_cli(capsys, topo, "counters", "s1")
    assert out.startswith("the program on s1 has no indexed counters")

    code, out, _ = ctl_cli(capsys, topo, "job", "list")
    assert out == "job 5: workers h1,h3; root s1; 16 slots; multicast group 1; epoch 1\n"
    code, out, _ = ctl_cli(capsys, topo, "job", "show", "5")
    assert out.splitlines()[1:3] == ["  s1: root; fan-in 2; slots 0..15", "  ├── port 1: h1"]
    code, out, err = ctl_cli(capsys, topo, "job", "show", "6")
    assert (code, err) == (1, "ina ctl: error: no job 6 (jobs: 5)\n")

    code, out, err = ctl_cli(capsys, topo, "job", "create", "--id", "5", "--workers", "h2")
    assert (code, err) == (1, "ina ctl: error: job 5 exists already (workers h1,h3); "
                              "delete it first\n")
    code, out, err = ctl_cli(capsys, topo, "register", "read", "s1", "ina_bitmap", "128")
    assert err == ("ina ctl: error: register InaIngress.ina_bitmap has 128 cells; index 128 "
                   "is out of range\n")
    code, out, err = ctl_cli(capsys, topo, "table", "dump", "s1", "nope")
    assert code == 1 and err.startswith("ina ctl: error: the P4Info has no table 'nope'")

    code, out, err = ctl_cli(capsys, topo, "job", "delete", "--id", "5")
    assert (code, out, err) == (0, "job 5 deleted\n", "")
    code, out, _ = ctl_cli(capsys, topo, "table", "dump", "s1", "ina_job")
    assert out == "InaIngress.ina_job: 0 entries\n"
    code, out, _ = ctl_cli(capsys, topo, "job", "list")
    assert out == "no jobs\n"
    code, out, err = ctl_cli(capsys, topo, "job", "delete", "--id", "5")
    assert (code, err) == (1, "ina ctl: error: no job 5 (jobs: none)\n")


def leaf_spine() -> Fabric:
    """Leaves s1 (h1, h2) and s2 (h3, h4) under the spine s3."""
    return Fabric({
        "hosts": [{"name": f"h{i}", "ip": f"10.0.0.{i}", "mac": f"00:00:00:00:00:0{i}"}
                  for i in (1, 2, 3, 4)],
        "switches": [{"name": n, "device_id": i} for i, n in enumerate(("s1", "s2", "s3"),
                                                                        start=1)],
        "links": [["h1", "s1:1"], ["h2", "s1:2"], ["h3", "s2:1"], ["h4", "s2:2"],
                  ["s1:3", "s3:1"], ["s2:3", "s3:2"]]})


def test_leaf_spine_job_aggregates_across_switches(aggregation: PipelineFiles) -> None:
    fabric = leaf_spine()
    try:
        with Controller(fabric.topology, timeout=5) as ctl:
            ctl.push_pipeline(aggregation)
            ctl.install_routes()
            job = ctl.create_job(2, ["h1", "h2", "h3"], slots=8)
            assert job.tree.root == "s3"
            # routes cross the spine: h1 -> h4 arrives with s2's MAC as source
            ping = bytes(Ether(src="00:00:00:00:00:01", dst=SWITCH_MAC)
                         / IP(src="10.0.0.1", dst="10.0.0.4") / UDP(sport=1, dport=2))
            [(host, frame)] = fabric.send("h1", ping)
            assert (host, Ether(frame).src, Ether(frame).dst) == (
                "h4", "02:00:00:ff:00:02", "00:00:00:00:00:04")

            assert fabric.send("h1", contribution(1, 2, 0, 0, [5] * K)) == []
            assert fabric.send("h3", contribution(3, 2, 0, 0, [7] * K)) == []
            results = fabric.send("h2", contribution(2, 2, 0, 0, [11] * K))
            assert sorted(h for h, _ in results) == ["h1", "h2", "h3"]
            for host, frame in results:
                pkt = Ether(frame)
                agg = "10.0.0.253" if host == "h3" else "10.0.0.254"
                assert (pkt[IP].dst, pkt[IP].src) == (f"10.0.0.{host[1]}", agg)
                payload = bytes(pkt[UDP].payload)
                assert payload[5] == 1  # RESULT
                assert list(struct.unpack(f">{K}i", payload[12:])) == [23] * K

            ctl.delete_job(2)
            for name in ("s1", "s2", "s3"):
                assert ctl.client(name).read_table("ina_job") == []
    finally:
        fabric.stop()


def test_cli_needs_a_pipeline_and_the_aggregation_program(
        star: Star, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topo = tmp_path / "net.json"
    Topology.from_json(star.json).save(topo)
    code, _, err = ctl_cli(capsys, topo, "job", "create", "--id", "1", "--workers", "h1,h2")
    assert code == 1
    assert err == (f"ina ctl: error: switch s1 ({star.json['switches'][0]['grpc_address']}) "
                   f"device 1: the switch has no pipeline yet; run `ina ctl --topo {topo} "
                   "setup` first\n")
    forward = compile_pipeline(ROOT / "p4" / "ipv4_forward.p4", tmp_path)
    code, _, _ = ctl_cli(capsys, topo, "setup", "--p4info", str(forward.p4info),
                         "--config", str(forward.config))
    assert code == 0
    code, _, err = ctl_cli(capsys, topo, "job", "create", "--id", "1", "--workers", "h1,h2")
    assert code == 1
    assert err.startswith("ina ctl: error: switch s1 does not run the aggregation program "
                          "(the P4Info has no table 'ina_job'")
    code, out, _ = ctl_cli(capsys, topo, "job", "list")
    assert out == "no jobs\n"
