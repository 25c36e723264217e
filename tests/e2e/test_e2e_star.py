"""End to end: Mininet hosts talk through the ``ina switch`` process, which a
P4Runtime controller (our client) programs. See ``conftest.py`` for the network."""

from __future__ import annotations

import json

import pytest
from e2e_helpers import LOSS, LOSSY_PORT, StarNet, udp_stream

from controller import Lpm

pytestmark = pytest.mark.slow

DATAGRAMS = 2000


def test_routes_read_back(star: StarNet) -> None:
    entries = star.client.read_table("ipv4_lpm")
    assert sorted((e.match["hdr.ipv4.dst_addr"], e.params["port"]) for e in entries) == [
        (Lpm(0x0A000001, 32), 1), (Lpm(0x0A000002, 32), 2), (Lpm(0x0A000003, 32), 3)]


def test_ping(star: StarNet) -> None:
    h1, h2 = star.net.get("h1", "h2")
    out = h1.cmd(f"ping -c 3 -i 0.2 -W 2 {h2.IP()}")
    assert " 3 received" in out, out
    out = h2.cmd(f"ping -c 2 -i 0.2 -W 2 {h1.IP()}")
    assert " 2 received" in out, out


def test_udp_stream_arrives_whole(star: StarNet) -> None:
    h1, h2 = star.net.get("h1", "h2")
    result = udp_stream(h1, h2, DATAGRAMS)
    assert result.distinct == DATAGRAMS, result
    assert result.received == DATAGRAMS, result


def test_loss_set_at_start_on_a_port(star: StarNet) -> None:
    h1, h3 = star.net.get("h1", "h3")
    result = udp_stream(h1, h3, DATAGRAMS)
    # binomial(2000, 0.05): mean 100 lost, standard deviation about 10
    assert 0.03 <= result.loss <= 0.07, result


def _losses(star: StarNet) -> dict[int, float]:
    """Every port's loss rate, as ``ina switch-cli --json impair show`` reads it."""
    shown = star.switch.cli("--json", "impair", "show")
    assert shown.returncode == 0, shown.stderr
    return {p["port"]: p["config"]["loss"] for p in json.loads(shown.stdout)["ports"]}


def test_loss_set_at_run_time_with_switch_cli(star: StarNet) -> None:
    h1, h2 = star.net.get("h1", "h2")
    assert _losses(star) == {1: 0.0, 2: 0.0, LOSSY_PORT: LOSS}  # as the network started
    set_loss = star.switch.cli("impair", "2", f"loss={LOSS}")
    assert set_loss.returncode == 0, set_loss.stderr
    try:
        assert _losses(star) == {1: 0.0, 2: LOSS, LOSSY_PORT: LOSS}
        result = udp_stream(h1, h2, DATAGRAMS)
        assert 0.03 <= result.loss <= 0.07, result
    finally:
        cleared = star.switch.cli("impair", "2", "loss=0")
        assert cleared.returncode == 0, cleared.stderr
    # cleared on port 2 alone, and port 2 loses nothing again
    assert _losses(star) == {1: 0.0, 2: 0.0, LOSSY_PORT: LOSS}
    result = udp_stream(h1, h2, 500)
    assert result.distinct == 500, result


def _port(counters: dict, port: int) -> dict:  # type: ignore[type-arg]
    [entry] = [p for p in counters["ports"] if p["port"] == port]
    return entry  # type: ignore[no-any-return]


def test_port_counters_count_the_stream_and_its_losses(star: StarNet) -> None:
    def counters() -> dict:  # type: ignore[type-arg]
        reply = star.switch.cli("--json", "counters")
        assert reply.returncode == 0, reply.stderr
        return json.loads(reply.stdout)  # type: ignore[no-any-return]

    h1, h3 = star.net.get("h1", "h3")
    before = counters()
    result = udp_stream(h1, h3, 200)
    after = counters()
    rx = _port(after, 1)["rx_packets"] - _port(before, 1)["rx_packets"]
    tx = _port(after, LOSSY_PORT)["tx_packets"] - _port(before, LOSSY_PORT)["tx_packets"]
    lost = (_port(after, LOSSY_PORT)["drops"].get("impairment_loss", 0)
            - _port(before, LOSSY_PORT)["drops"].get("impairment_loss", 0))
    assert rx == 200
    assert tx + lost == 200
    assert tx == result.distinct
    # the port's impairment dropped some (binomial(200, 0.05): mean 10, none with
    # probability 4e-5)
    assert 0 < lost <= 30, lost
