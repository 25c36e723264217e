"""``ina ctl`` on a multi-switch fabric of in-process switches running
``p4/aggregation.p4`` (``leafspine,2,2,2``: leaves s1 with h1, h2 and s2 with h3, h4;
spines s3, s4): a topology file from the spec, a job with a chosen root, its tree, and
aggregation through the installed tree, also when a RESULT is lost on the way down and
the worker's retransmission has to reach the switch that holds the result."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from fabric import Fabric
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from controller.cli import main
from controller.pipeline import PipelineFiles, compile_pipeline

ROOT = Path(__file__).resolve().parents[2]
K = 8
AGG_PORT = 48879
RESULT = 0x01


@pytest.fixture(scope="module")
def aggregation(tmp_path_factory: pytest.TempPathFactory) -> PipelineFiles:
    return compile_pipeline(ROOT / "p4" / "aggregation.p4", tmp_path_factory.mktemp("agg"),
                            defines={"INA_K": str(K), "INA_SLOTS": "64"})


@pytest.fixture
def fabric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Fabric]:
    topo = tmp_path / "fabric.json"
    assert main(["--topo", str(topo), "topo", "init", "leafspine,2,2,2"]) == 0
    assert capsys.readouterr().out == f"wrote {topo}: 4 hosts, 4 switch(es)\n"
    f = Fabric(json.loads(topo.read_text()))
    f.topology.save(topo)  # with the servers' addresses
    try:
        yield f
    finally:
        f.stop()


def contribution(worker: int, job: int, slot: int, version: int, value: int,
                 aggregator: str) -> bytes:
    payload = struct.pack(">HHBBbBI", job, slot, version, 0, 0, 0, slot)
    payload += struct.pack(f">{K}i", *[value] * K)
    return bytes(Ether(src=f"00:00:00:00:00:0{worker}", dst="02:00:00:ff:00:01")
                 / IP(src=f"10.0.0.{worker}", dst=aggregator)
                 / UDP(sport=AGG_PORT, dport=AGG_PORT, chksum=0) / payload)


def result_values(frame: bytes) -> tuple[int, list[int]]:
    payload = bytes(Ether(frame)[UDP].payload)
    return payload[5] & RESULT, list(struct.unpack(f">{K}i", payload[12:12 + 4 * K]))


def ctl(capsys: pytest.CaptureFixture[str], topo: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--topo", str(topo), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_job_with_a_chosen_root(fabric: Fabric, aggregation: PipelineFiles,
                                  capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    topo = tmp_path / "fabric.json"
    code, out, err = ctl(capsys, topo, "setup", "--p4info", str(aggregation.p4info),
                         "--config", str(aggregation.config))
    assert (code, err) == (0, "")
    assert out.startswith("pipeline set on s1, s2, s3, s4; 16 routes installed")
    code, out, err = ctl(capsys, topo, "job", "create", "--id", "7", "--workers",
                         "h1,h2,h3", "--slots", "8", "--root", "s4")
    assert (code, err) == (0, "")
    assert out.splitlines()[:2] == [
        "job 7: workers h1,h2,h3; root s4; 8 slots; multicast group 1; epoch 1",
        "  s4: root; fan-in 2; slots 0..7"]
    code, out, _ = ctl(capsys, topo, "job", "show", "7")
    assert "  └── port 2: s2: parent port 4; fan-in 1 (passes through); slots 0..7" in (
        out.splitlines())
    code, out, _ = ctl(capsys, topo, "table", "dump", "s3", "ina_job")
    assert out == "InaIngress.ina_job: 0 entries\n"  # the other spine is not in the tree
    code, _, err = ctl(capsys, topo, "job", "create", "--id", "8", "--workers", "h4",
                       "--root", "s9")
    assert (code, err) == (1, "ina ctl: error: unknown switch 's9'; switches: s1, s2, s3, "
                              "s4\n")

    # h1 and h2 are reduced on s1, h3 passes s2: the sum comes back to all three
    assert fabric.send("h1", contribution(1, 7, 0, 0, 5, "10.0.0.254")) == []
    assert fabric.send("h3", contribution(3, 7, 0, 0, 7, "10.0.0.253")) == []
    results = fabric.send("h2", contribution(2, 7, 0, 0, 11, "10.0.0.254"))
    assert sorted(h for h, _ in results) == ["h1", "h2", "h3"]
    assert all(result_values(f) == (RESULT, [23] * K) for _, f in results)

    # slot 1: the root's RESULT to s1 is lost on the way down (s4 port 1)
    fabric.lose = {("s4", 1)}
    assert fabric.send("h1", contribution(1, 7, 1, 0, 1, "10.0.0.254")) == []
    assert fabric.send("h3", contribution(3, 7, 1, 0, 2, "10.0.0.253")) == []
    [(host, frame)] = fabric.send("h2", contribution(2, 7, 1, 0, 3, "10.0.0.254"))
    assert host == "h3" and result_values(frame) == (RESULT, [6] * K)
    fabric.lose = set()
    # h1 retransmits: s1 has the sum of its children and sends it up again; the root
    # s4 answers it with the RESULT, and s1 passes it to both of its workers
    again = fabric.send("h1", contribution(1, 7, 1, 0, 1, "10.0.0.254"))
    assert sorted(h for h, _ in again) == ["h1", "h2"]
    assert all(result_values(f) == (RESULT, [6] * K) for _, f in again)

    # slot 2: s1's aggregate is lost on the way up (s1 port 4 to s4)
    fabric.lose = {("s1", 4)}
    assert fabric.send("h3", contribution(3, 7, 2, 0, 4, "10.0.0.253")) == []
    assert fabric.send("h1", contribution(1, 7, 2, 0, 5, "10.0.0.254")) == []
    assert fabric.send("h2", contribution(2, 7, 2, 0, 6, "10.0.0.254")) == []
    fabric.lose = set()
    # h2's retransmission makes s1 send the aggregate again; the root completes
    done = fabric.send("h2", contribution(2, 7, 2, 0, 6, "10.0.0.254"))
    assert sorted(h for h, _ in done) == ["h1", "h2", "h3"]
    assert all(result_values(f) == (RESULT, [15] * K) for _, f in done)

    code, out, _ = ctl(capsys, topo, "job", "delete", "--id", "7")
    assert out == "job 7 deleted\n"
    for name in ("s1", "s2", "s4"):
        code, out, _ = ctl(capsys, topo, "table", "dump", name, "ina_job")
        assert out == "InaIngress.ina_job: 0 entries\n"
