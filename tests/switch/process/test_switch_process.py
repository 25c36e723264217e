"""``ina switch`` as a process on veth pairs, driven over P4Runtime and ``ina switch-cli``.

One switch runs for the whole module (with ``--log-console``, ``--pcap`` and an ignored
``--thrift-port``); the last test stops it with SIGTERM and reads the pcaps it flushed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from switchproc_helpers import (
    FORWARD,
    Host,
    SwitchProc,
    install_route,
    ip_checksum,
    ipv4_frame,
    seq_of,
    veth_pairs,
)

pytestmark = pytest.mark.slow

MAC1, MAC2 = 0x020000000101, 0x020000000202
NET1, NET2 = 0x0A000100, 0x0A000200  # 10.0.1.0/24 on port 1, 10.0.2.0/24 on port 2


@dataclass
class Rig:
    switch: SwitchProc
    ifaces: list[tuple[str, str]]
    h1: Host
    h2: Host
    pcap_dir: Path


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    workdir = tmp_path_factory.mktemp("switch")
    pcap_dir = workdir / "pcap"
    with veth_pairs(2) as pairs:
        (a1, b1), (a2, b2) = pairs
        sw = SwitchProc(workdir, [str(FORWARD), "-i", f"1@{a1}", "-i", f"2@{a2}",
                                  "--device-id", "3", "--log-console", "--pcap", str(pcap_dir),
                                  "--thrift-port", "9090"])
        h1, h2 = Host(b1), Host(b2)
        try:
            sw.wait_ready()
            install_route(sw.address, 1, NET1, 24, MAC1, device_id=3)
            install_route(sw.address, 2, NET2, 24, MAC2, device_id=3)
            yield Rig(sw, pairs, h1, h2, pcap_dir)
        finally:
            h1.close()
            h2.close()
            sw.stop()


def counters(rig: Rig) -> dict[int, dict]:
    result = rig.switch.cli("--json", "counters")
    assert result.returncode == 0, result.stderr
    return {row["port"]: row for row in json.loads(result.stdout)["ports"]}


def test_forwards_with_routes_pushed_over_p4runtime(rig: Rig) -> None:
    sent = [ipv4_frame(i, dst_ip=NET2 + 5) for i in range(20)]
    for frame in sent:
        rig.h1.send(frame)
    got = rig.h2.receive(want=20)
    assert [seq_of(f) for f in got] == list(range(20))
    out = got[0]
    assert out[0:6] == MAC2.to_bytes(6, "big")  # next hop's MAC
    assert out[6:12] == sent[0][0:6]  # the old destination becomes the source
    assert out[14 + 8] == 63  # TTL decremented
    assert ip_checksum(out[14:34]) == 0  # and the checksum recomputed
    assert out[34:] == sent[0][34:]

    rig.h2.send(ipv4_frame(99, dst_ip=NET1 + 7))
    [back] = rig.h1.receive(want=1)
    assert seq_of(back) == 99 and back[0:6] == MAC1.to_bytes(6, "big")


def test_unrouted_packets_are_dropped_and_counted(rig: Rig) -> None:
    before = counters(rig)[1]["drops"].get("p4_drop", 0)
    for i in range(5):
        rig.h1.send(ipv4_frame(i, dst_ip=0x0A090909))
    assert rig.h2.receive(idle=0.3) == []
    assert counters(rig)[1]["drops"].get("p4_drop", 0) == before + 5


def _p4_lines() -> dict[str, int]:
    """The line numbers of the program's statements the trace quotes."""
    wanted = ("state start", "state parse_ipv4", "ipv4_lpm.apply()", "mark_to_drop(")
    found: dict[str, int] = {}
    for number, text in enumerate(Path(FORWARD).read_text().splitlines(), 1):
        for key in wanted:
            if key in text and key not in found:
                found[key] = number
    return found


def test_log_console_traces_with_p4_source_lines(rig: Rig) -> None:
    rig.h1.send(ipv4_frame(1, dst_ip=NET2 + 1))
    assert rig.h2.receive(want=1)
    rig.h1.send(ipv4_frame(2, dst_ip=0x0B000001))  # no route: a miss
    rig.h2.receive(idle=0.3)
    log = rig.switch.stdout
    line = _p4_lines()
    assert f"ipv4_forward.p4({line['state start']}): parser state start" in log
    assert f"ipv4_forward.p4({line['state parse_ipv4']}): parser state parse_ipv4" in log
    table = line["ipv4_lpm.apply()"]
    assert f"ipv4_forward.p4({table}): table ForwardIngress.ipv4_lpm: hit entry" in log
    assert "-> ForwardIngress.forward(2, " in log
    assert f"ipv4_forward.p4({table}): table ForwardIngress.ipv4_lpm: miss -> default" in log
    assert (f"ipv4_forward.p4({line['mark_to_drop(']}): mark_to_drop(standard_metadata);"
            in log)
    assert "out: port 2," in log
    assert "received on port 1" in log


def test_counters_show_every_port(rig: Rig) -> None:
    rig.h1.send(ipv4_frame(5, dst_ip=NET2 + 9))
    assert rig.h2.receive(want=1)
    rows = counters(rig)
    assert rows[1]["iface"] == rig.ifaces[0][0] and rows[2]["iface"] == rig.ifaces[1][0]
    assert rows[1]["rx_packets"] >= 1 and rows[1]["rx_bytes"] >= 60
    assert rows[2]["tx_packets"] >= 1
    text = rig.switch.cli("counters")
    assert text.returncode == 0, text.stderr
    header, first, second = text.stdout.splitlines()[:3]
    assert header.split() == ["port", "iface", "rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes",
                              "drops", "drop_reasons"]
    assert first.split()[:2] == ["1", rig.ifaces[0][0]]
    assert second.split()[:2] == ["2", rig.ifaces[1][0]]


def test_ports_command_describes_the_switch(rig: Rig) -> None:
    result = rig.switch.cli("ports")
    assert result.returncode == 0, result.stderr
    assert f"device 3, P4Runtime {rig.switch.address}" in result.stdout
    assert "ipv4_forward.p4" in result.stdout
    assert rig.ifaces[1][0] in result.stdout


def test_impair_at_run_time_changes_the_loss(rig: Rig) -> None:
    def delivered(n: int, base: int) -> int:
        for i in range(n):
            rig.h1.send(ipv4_frame(base + i, dst_ip=NET2 + 3))
        return len(rig.h2.receive(want=n, idle=0.3))

    assert delivered(50, 1000) == 50
    result = rig.switch.cli("impair", "2", "loss=1")
    assert result.returncode == 0, result.stderr
    assert "loss=1.0" in result.stdout
    lost_before = counters(rig)[2]["drops"].get("impairment_loss", 0)
    assert delivered(50, 2000) == 0
    assert counters(rig)[2]["drops"]["impairment_loss"] == lost_before + 50

    assert rig.switch.cli("impair", "all", "loss=0.5,seed=3").returncode == 0
    assert 60 <= delivered(200, 3000) <= 140

    assert rig.switch.cli("impair", "all", "none").returncode == 0
    shown = rig.switch.cli("impair", "show").stdout
    assert shown.count("none") == 2, shown
    assert delivered(50, 4000) == 50


def test_switch_cli_reports_bad_requests(rig: Rig) -> None:
    result = rig.switch.cli("impair", "7", "loss=0.1")
    assert result.returncode == 1
    assert "no port 7" in result.stderr
    result = rig.switch.cli("impair", "1", "lose=0.1")
    assert result.returncode == 1
    assert "unknown key 'lose'" in result.stderr
    assert "Traceback" not in result.stderr


def test_thrift_port_is_ignored_with_a_notice(rig: Rig) -> None:
    assert "--thrift-port 9090 is ignored" in rig.switch.stderr


def test_sigterm_exits_0_and_leaves_readable_pcaps(rig: Rig) -> None:
    from scapy.all import IP, rdpcap

    rig.h1.send(ipv4_frame(7, dst_ip=NET2 + 2))
    assert rig.h2.receive(want=1)
    assert rig.switch.stop() == 0
    assert "stopped" in rig.switch.stderr and "Traceback" not in rig.switch.stderr
    assert not os.path.exists(rig.switch.control)
    a1, a2 = rig.ifaces[0][0], rig.ifaces[1][0]
    received = rdpcap(str(rig.pcap_dir / f"{a1}_in.pcap"))
    sent = rdpcap(str(rig.pcap_dir / f"{a2}_out.pcap"))
    assert len(received) > 300 and len(sent) > 150
    last = sent[-1]
    assert last.haslayer(IP) and last[IP].ttl == 63 and seq_of(bytes(last)) == 7
