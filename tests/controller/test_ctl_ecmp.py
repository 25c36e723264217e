"""ECMP through the controller, on ``leafspine,2,2,2`` made of in-process P4Runtime
servers (leaves s1: h1, h2 and s2: h3, h4; spines s3, s4 on the leaves' ports 3, 4):
``install_routes`` installs the groups where the program has them, flows between the
leaves spread over both spines by their hash, and programs without ECMP (or
``--no-ecmp``) get one shortest path per host."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from fabric import Fabric
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from controller.controller import Controller, InstalledRoutes
from controller.pipeline import PipelineFiles, compile_pipeline
from controller.routes import compute_routes
from controller.topology import Topology
from switch.engine.hashes import crc16
from topologies.spec import parse_topo_spec

ROOT = Path(__file__).resolve().parents[2]
SWITCH_MAC = "02:00:00:ff:00:01"


@pytest.fixture(scope="module")
def aggregation(tmp_path_factory: pytest.TempPathFactory) -> PipelineFiles:
    return compile_pipeline(ROOT / "p4" / "aggregation.p4", tmp_path_factory.mktemp("agg"),
                            defines={"INA_K": "8", "INA_SLOTS": "16"})


@pytest.fixture(scope="module")
def forward(tmp_path_factory: pytest.TempPathFactory) -> PipelineFiles:
    return compile_pipeline(ROOT / "p4" / "ipv4_forward.p4", tmp_path_factory.mktemp("fwd"))


@pytest.fixture
def fabric() -> Iterator[Fabric]:
    f = Fabric(Topology.from_mininet(parse_topo_spec("leafspine,2,2,2")).to_json())
    yield f
    f.stop()


def tcp_frame(src: int, dst: int, sport: int, dport: int = 5001) -> bytes:
    return bytes(Ether(src=f"00:00:00:00:00:0{src}", dst=SWITCH_MAC)
                 / IP(src=f"10.0.0.{src}", dst=f"10.0.0.{dst}")
                 / TCP(sport=sport, dport=dport, seq=7, flags="PA") / b"payload")


def member(src: int, dst: int, sport: int, dport: int, size: int) -> int:
    """The index the switch's crc16 of the 5-tuple picks."""
    key = struct.pack("!4s4sBHH", bytes([10, 0, 0, src]), bytes([10, 0, 0, dst]), 6,
                      sport, dport)
    return crc16(key) % size


def test_flows_between_leaves_spread_over_both_spines(fabric: Fabric,
                                                      aggregation: PipelineFiles) -> None:
    with Controller(fabric.topology, timeout=5) as ctl:
        ctl.push_pipeline(aggregation)
        assert ctl.install_routes() == InstalledRoutes(routes=16, ecmp_routes=4, groups=2)
        assert len(ctl.client("s1").read_table("ecmp_nhop")) == 2
        assert ctl.client("s3").read_table("ecmp_nhop") == []
    spines = {}
    for sport in range(40000, 40016):
        frame = tcp_frame(1, 3, sport)
        [(host, out, path)] = fabric.trace("h1", frame)
        assert host == "h3" and bytes(Ether(out)[TCP]) == bytes(Ether(frame)[TCP])
        assert Ether(out).dst == "00:00:00:00:00:03" and Ether(out)[IP].ttl == 64 - 3
        assert path[0] == "s1" and path[2] == "s2"
        spines[sport] = path[1]
        # the member the hash picks: index 0 is port 3 (spine s3), index 1 port 4 (s4)
        assert path[1] == ("s3", "s4")[member(1, 3, sport, 5001, 2)]
        [(_, _, again)] = fabric.trace("h1", frame)
        assert again == path  # a flow keeps its path
    assert set(spines.values()) == {"s3", "s4"}
    # the way back hashes its own 5-tuple, from s2
    back = {fabric.trace("h4", tcp_frame(4, 2, 5001, sport))[0][2][1]
            for sport in range(40000, 40016)}
    assert back == {"s3", "s4"}


def test_programs_without_ecmp_and_no_ecmp_get_single_paths(
        fabric: Fabric, aggregation: PipelineFiles, forward: PipelineFiles) -> None:
    single = compute_routes(fabric.topology)
    for files, ecmp in ((forward, True), (aggregation, False)):
        with Controller(fabric.topology, timeout=5) as ctl:
            ctl.push_pipeline(files)
            assert ctl.install_routes(ecmp=ecmp) == InstalledRoutes(routes=16)
            for name in ("s1", "s2"):
                got = sorted((str(e.match["hdr.ipv4.dst_addr"].value), e.params["port"])
                             for e in ctl.client(name).read_table("ipv4_lpm"))
                assert got == sorted((str(_ip_int(r.prefix)), r.port) for r in single[name])
        # every flow crosses the lowest port's spine, s3
        paths = {tuple(fabric.trace("h1", tcp_frame(1, 3, sport))[0][2])
                 for sport in range(40000, 40008)}
        assert paths == {("s1", "s3", "s2")}


def _ip_int(prefix: str) -> int:
    return int.from_bytes(bytes(int(x) for x in prefix.split("/")[0].split(".")), "big")


def ctl_cli(capsys: pytest.CaptureFixture[str], topo: Path, *argv: str) -> tuple[int, str, str]:
    from controller.cli import main

    code = main(["--topo", str(topo), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_setup_and_table_dump_show_the_groups(
        fabric: Fabric, aggregation: PipelineFiles, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    topo = tmp_path / "net.json"
    fabric.topology.save(topo)
    pipeline = ["--p4info", str(aggregation.p4info), "--config", str(aggregation.config)]
    code, out, err = ctl_cli(capsys, topo, "setup", *pipeline)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == ("pipeline set on s1, s2, s3, s4; 16 routes installed "
                                   "(4 over 2 ECMP groups); no jobs")
    code, out, _ = ctl_cli(capsys, topo, "table", "dump", "s1", "ipv4_lpm")
    assert out.splitlines() == [
        "InaIngress.ipv4_lpm: 4 entries",
        "  ipv4_lpm hdr.ipv4.dst_addr=10.0.0.1/32 -> forward(port=1, "
        "dst_mac=00:00:00:00:00:01)",
        "  ipv4_lpm hdr.ipv4.dst_addr=10.0.0.2/32 -> forward(port=2, "
        "dst_mac=00:00:00:00:00:02)",
        "  ipv4_lpm hdr.ipv4.dst_addr=10.0.0.3/32 -> ecmp_group(group=1, size=2): "
        "ports 3, 4 by hash",
        "  ipv4_lpm hdr.ipv4.dst_addr=10.0.0.4/32 -> ecmp_group(group=1, size=2): "
        "ports 3, 4 by hash"]
    code, out, _ = ctl_cli(capsys, topo, "table", "dump", "s1")
    assert [line for line in out.splitlines() if "ecmp_nhop" in line] == [
        "InaIngress.ecmp_nhop: 2 entries",
        "  ecmp_nhop meta.ecmp_group=1 meta.ecmp_index=0 -> forward(port=3, "
        "dst_mac=02:00:00:ff:00:03)",
        "  ecmp_nhop meta.ecmp_group=1 meta.ecmp_index=1 -> forward(port=4, "
        "dst_mac=02:00:00:ff:00:04)"]
    # the README shows these two dumps
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("```\nInaIngress.ecmp_nhop"):].split("```")[1]
    code, nhop, _ = ctl_cli(capsys, topo, "table", "dump", "s1", "ecmp_nhop")
    code, lpm, _ = ctl_cli(capsys, topo, "table", "dump", "s1", "ipv4_lpm")
    assert block == "\n" + nhop + lpm
    # a member gone: the dump says which index has no port (its flows are dropped)
    with Controller(fabric.topology, timeout=5).connect(["s1"]) as c:
        c.use_running_pipeline()
        [_, second] = c.client("s1").read_table("ecmp_nhop")
        c.client("s1").delete(second)
    code, out, _ = ctl_cli(capsys, topo, "table", "dump", "s1", "ipv4_lpm")
    assert out.splitlines()[3].endswith("ecmp_group(group=1, size=2): ports 3, - by hash")

    code, out, err = ctl_cli(capsys, topo, "setup", *pipeline, "--no-ecmp")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "pipeline set on s1, s2, s3, s4; 16 routes installed; no jobs"
    with pytest.raises(SystemExit) as e:
        ctl_cli(capsys, topo, "setup", "--no-ecmp", "--no-routes")
    assert e.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
