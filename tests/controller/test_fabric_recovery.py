"""What the controller computes when something fails, without Mininet: the live
topology (``controller.fabric.Fabric``), the route tables brought to it on
``leafspine,2,2,2`` made of in-process P4Runtime servers (``sync_routes`` writes only
the difference, and the frames then go around the failed link), the groups of workers
that still reach each other, and the liveness verdicts and probe frames."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from pathlib import Path

import pytest
from fabric import Fabric as Servers
from scapy.layers.inet import ICMP, IP, TCP
from scapy.layers.l2 import Ether

from controller.controller import Controller
from controller.fabric import Fabric, LinkEnds, groups_of, switch_links, sync_routes
from controller.liveness import (
    EchoReply,
    LinkProbe,
    Liveness,
    echo_probe,
    link_probe,
    parse_probe,
)
from controller.pipeline import PipelineFiles, compile_pipeline
from controller.topology import Topology
from controller.values import Lpm
from topologies.spec import parse_topo_spec

ROOT = Path(__file__).resolve().parents[2]


def leafspine() -> Topology:
    return Topology.from_mininet(parse_topo_spec("leafspine,2,2,2"))


@pytest.fixture(scope="module")
def aggregation(tmp_path_factory: pytest.TempPathFactory) -> PipelineFiles:
    return compile_pipeline(ROOT / "p4" / "aggregation.p4", tmp_path_factory.mktemp("agg"),
                            defines={"INA_K": "8", "INA_SLOTS": "16"})


@pytest.fixture
def servers() -> Iterator[Servers]:
    f = Servers(leafspine().to_json())
    yield f
    f.stop()


def tcp_frame(src: int, dst: int, sport: int) -> bytes:
    return bytes(Ether(src=f"00:00:00:00:00:0{src}", dst="02:00:00:ff:00:01")
                 / IP(src=f"10.0.0.{src}", dst=f"10.0.0.{dst}")
                 / TCP(sport=sport, dport=5001, flags="PA") / b"payload")


def test_the_live_topology_leaves_out_what_failed() -> None:
    topo = leafspine()
    s1_s3 = LinkEnds.of("s3", 1, "s1", 3)
    assert s1_s3 == LinkEnds("s1", 3, "s3", 1) and s1_s3.name == "s1-s3"
    assert set(switch_links(topo)) == {s1_s3, LinkEnds("s1", 4, "s4", 1),
                                       LinkEnds("s2", 3, "s3", 2), LinkEnds("s2", 4, "s4", 2)}
    fabric = Fabric(topo, down_links={s1_s3})
    live = fabric.live()
    assert sorted(p for p, _ in live.switch_neighbours("s1")) == [4]
    assert len(live.hosts) == 4
    fabric.down_switches.add("s2")
    live = fabric.live()
    assert sorted(live.hosts) == ["h1", "h2"] and "s2" not in live.switches
    assert fabric.cut_off(["h1", "h3", "h4"]) == ["h3", "h4"]
    fabric.down_hosts.add("h1")
    assert sorted(fabric.live().hosts) == ["h2"]
    assert fabric.describe_down() == ["switch s2", "link s1-s3", "link h1-s1"]


def test_groups_of_workers_that_reach_each_other() -> None:
    topo = leafspine()
    cut = Fabric(topo, down_links={LinkEnds("s1", 3, "s3", 1), LinkEnds("s1", 4, "s4", 1)})
    assert groups_of(cut.live(), ["h1", "h2", "h3", "h4"]) == [["h1", "h2"], ["h3", "h4"]]
    assert groups_of(topo, ["h4", "h1"]) == [["h4", "h1"]]


def test_routes_go_around_a_failed_link_and_come_back(servers: Servers,
                                                      aggregation: PipelineFiles) -> None:
    topo = servers.topology
    with Controller(topo) as ctl:
        ctl.push_pipeline(aggregation)
        ctl.install_routes()
        # Over both spines while both links work (the hash spreads the flows).
        spines = {trace[0][2][1] for sport in range(40000, 40040)
                  for trace in [servers.trace("h1", tcp_frame(1, 3, sport))]}
        assert spines == {"s3", "s4"}
        # Unchanged routes: nothing to write.
        assert sum(sync_routes(ctl.client(n), topo, n) for n in topo.switches) == 0
        live = Fabric(topo, down_links={LinkEnds("s1", 3, "s3", 1)}).live()
        written = {n: sync_routes(ctl.client(n), live, n) for n in topo.switches}
        assert written["s1"] > 0 and written["s2"] > 0
        for sport in range(40000, 40040):
            [(to, _, path)] = servers.trace("h1", tcp_frame(1, 3, sport))
            assert (to, path) == ("h3", ["s1", "s4", "s2"])
            [(to, _, path)] = servers.trace("h3", tcp_frame(3, 1, sport))
            assert (to, path) == ("h1", ["s2", "s4", "s1"])
        servers.lose = {("s1", 3)}  # the link is down: nothing may need it
        assert all(servers.send("h2", tcp_frame(2, 4, p)) for p in range(40000, 40010))
        servers.lose = set()
        # The link is back: the routes are what install_routes gave.
        assert sum(sync_routes(ctl.client(n), topo, n) for n in topo.switches) > 0
        assert sum(sync_routes(ctl.client(n), topo, n) for n in topo.switches) == 0
        spines = {servers.trace("h1", tcp_frame(1, 3, sport))[0][2][1]
                  for sport in range(40000, 40040)}
        assert spines == {"s3", "s4"}


def test_the_controller_s_address_goes_to_the_cpu_port(servers: Servers,
                                                       aggregation: PipelineFiles) -> None:
    topo = servers.topology
    with Controller(topo) as ctl:
        ctl.push_pipeline(aggregation)
        agg = topo.switches["s1"].aggregator_ip
        assert sync_routes(ctl.client("s1"), topo, "s1", to_cpu=agg) > 0
        [entry] = [e for e in ctl.client("s1").read_table("ipv4_lpm")
                   if e.action == "InaIngress.to_cpu"]
        assert entry.match["hdr.ipv4.dst_addr"] == Lpm(int(ipaddress.IPv4Address(agg)), 32)
        reply = bytes(Ether(src="00:00:00:00:00:01", dst=topo.switches["s1"].mac)
                      / IP(src="10.0.0.1", dst=agg) / ICMP(type=0))
        # To the CPU port, behind the packet_in header naming ingress port 1.
        assert servers.servers["s1"].inject(1, reply) == [(255, b"\x00\x80" + reply)]
        assert sync_routes(ctl.client("s1"), topo, "s1", to_cpu=agg) == 0


def test_probe_frames_read_back() -> None:
    frame = link_probe("02:00:00:ff:00:03", 3, 2, 77)
    assert len(frame) == 60 and frame[12:14] == b"\x88\xcc"
    assert parse_probe(frame) == LinkProbe(3, 2, 77)
    echo = echo_probe("02:00:00:ff:00:01", "00:00:00:00:00:01", "10.0.0.254", "10.0.0.1", 9)
    request = Ether(echo)
    assert request[IP].src == "10.0.0.254" and request[IP].dst == "10.0.0.1"
    assert request[ICMP].type == 8
    assert IP(bytes(request[IP])).chksum == request[IP].chksum  # a valid checksum
    answer = request.copy()
    answer[IP].src, answer[IP].dst = "10.0.0.1", "10.0.0.254"
    answer[ICMP].type = 0
    del answer[IP].chksum, answer[ICMP].chksum
    assert parse_probe(bytes(answer)) == EchoReply("10.0.0.1", 9)
    assert parse_probe(echo) is None  # a request is not an answer
    assert parse_probe(b"\x00" * 14) is None


def test_liveness_needs_misses_in_a_row_over_time() -> None:
    live = Liveness(period=0.1, misses=3)
    live.watch("l", 0.0, "s1", "s2")
    for seq in range(3):
        live.sent("l", seq, 0.1 * seq)
    assert live.newly_down(0.25) == []  # three unanswered, but not three periods yet
    assert live.newly_down(0.31) == ["l"]  # nothing else to judge s1 and s2 by
    assert live.newly_down(0.5) == []  # once
    assert not live.is_up("l")
    assert live.answered("l", 3, 0.6) is True and live.is_up("l")
    assert live.answered("l", 4, 0.7) is False
    live.watch("m", 1.0, "s1", "s1")
    assert live.newly_down(5.0) == []  # nothing sent: a busy controller concludes nothing


def test_a_busy_switch_is_not_a_failed_link() -> None:
    """s1 probes s1-s2 and s1-s3; s2 also answers for a host. When nothing comes back
    from s1 at all, s1 may only be busy: no verdict until the patience runs out. When
    s1's other probe and s2's other answers come back, the link is down."""
    live = Liveness(period=0.1, misses=3, patience=10.0)
    for key, sender, receiver in (("s1-s2", "s1", "s2"), ("s1-s3", "s1", "s3"),
                                  ("h5", "s2", "s2")):
        live.watch(key, 0.0, sender, receiver)
    for seq in range(4):
        for key in ("s1-s2", "s1-s3", "h5"):
            live.sent(key, seq, 0.1 * seq)
    live.answered("h5", 3, 0.35)  # s2 moves; s1 shows nothing
    assert live.newly_down(0.5) == []
    assert live.newly_down(3.1) == ["s1-s2", "s1-s3"]  # patience: 10 x 0.3 s
    live = Liveness(period=0.1, misses=3)
    for key, sender, receiver in (("s1-s2", "s1", "s2"), ("s1-s3", "s1", "s3"),
                                  ("h5", "s2", "s2")):
        live.watch(key, 0.0, sender, receiver)
    for seq in range(4):
        for key in ("s1-s2", "s1-s3", "h5"):
            live.sent(key, seq, 0.1 * seq)
    live.answered("s1-s3", 3, 0.35)  # s1 sends, ...
    assert live.newly_down(0.4) == []  # ... but s2 shows nothing yet
    live.answered("h5", 2, 0.45)  # s2 brings back a probe sent after s1-s2's first
    assert live.newly_down(0.45) == ["s1-s2"]


def test_a_link_whose_probes_queue_gets_a_longer_wait() -> None:
    """Probes that come back 0.5 s late (a busy port's queue): no verdict after three
    periods, one after the link's own round-trip time and four deviations."""
    live = Liveness(period=0.1, misses=3)
    live.watch("slow", 0.0, "s1", "s2")
    t = 0.0
    for seq in range(20):
        live.sent("slow", seq, t)
        live.answered("slow", seq, t + 0.5)
        t += 0.1
    for seq in range(20, 26):
        live.sent("slow", seq, t)
        t += 0.1
    # The last answer came at 2.4 s: 0.4 s of silence is more than three periods, but
    # the probes take 0.5 s.
    assert live.newly_down(t + 0.2) == []
    assert live.newly_down(t + 1.0) == ["slow"]
