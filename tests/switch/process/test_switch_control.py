"""The control socket protocol and ``ina switch-cli``'s requests and tables (no root:
the ports are configured but never opened)."""

from __future__ import annotations

import json
import selectors
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from switch.ports import PortSet
from switch.process.commands import SwitchCommands
from switch.process.control import MAX_LINE, ControlError, ControlServer, control_request
from switch.process.dataplane import Dataplane
from switch.process.options import parse_switch_args
from switch.process.switch_cli import build_request, format_counters, format_ports


class Running:
    def __init__(self, path: str, ports: PortSet, dataplane: Dataplane):
        self.path = path
        self.ports = ports
        self.dataplane = dataplane


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    path = str(tmp_path / "ctl.sock")
    options = parse_switch_args(["--no-p4", "-i", "1@ethA", "-i", "2@ethB", "--seed", "5",
                                 "--", "--cpu-port", "255"])
    ports = PortSet(list(options.ports))
    dataplane = Dataplane(ports, None, 255)
    server = ControlServer(path, SwitchCommands(options, ports, dataplane, lambda: "x.p4"))
    server.open()
    stop = threading.Event()
    sel = selectors.DefaultSelector()
    server.attach(sel)

    def loop() -> None:
        while not stop.is_set():
            for key, _ in sel.select(0.05):
                key.data()

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield Running(path, ports, dataplane)
    finally:
        stop.set()
        t.join()
        server.close()
        sel.close()
        dataplane.close()
    assert not Path(path).exists()


def test_ports_reply(running: Running) -> None:
    reply = control_request(running.path, {"cmd": "ports"})
    assert reply["ok"] and reply["cpu_port"] == 255 and reply["program"] == "x.p4"
    assert [(p["port"], p["iface"], p["impairment"]) for p in reply["ports"]] == [
        (1, "ethA", "none"), (2, "ethB", "none")]
    text = format_ports(reply)
    assert text.splitlines()[0] == ("device 0, P4Runtime 0.0.0.0:9559, CPU port 255, "
                                    "program x.p4")


def test_impair_replaces_the_config_and_applies_the_default_seed(running: Running) -> None:
    reply = control_request(running.path, {"cmd": "impair", "port": 2,
                                           "spec": "loss=0.25,delay=3ms"})
    assert reply["ok"], reply
    config = running.ports.impairment(2)
    assert (config.loss, config.delay_ms, config.seed) == (0.25, 3.0, 5)
    assert running.ports.impairment(1).is_identity
    reply = control_request(running.path, {"cmd": "impair", "port": "all", "spec": "dup=0.1"})
    assert all(running.ports.impairment(p).duplicate == 0.1 for p in (1, 2))
    assert running.ports.impairment(2).loss == 0.0  # replaced, not merged
    control_request(running.path, {"cmd": "impair", "port": "all", "spec": "none"})
    shown = control_request(running.path, {"cmd": "impair-show"})
    assert [p["impairment"] for p in shown["ports"]] == ["none", "none"]


@pytest.mark.parametrize("request_, error", [
    ({"cmd": "impair", "port": 9, "spec": "loss=0.1"}, "no port 9 (ports: 1, 2; or 'all')"),
    ({"cmd": "impair", "port": 1, "spec": "loss=7"}, "loss must be between 0 and 1"),
    ({"cmd": "impair", "port": 1}, 'impair needs a "spec"'),
    ({"cmd": "reboot"}, "unknown command 'reboot'"),
    ({"command": "ports"}, 'a request is a JSON object with a "cmd" string'),
])
def test_bad_requests_get_an_error_reply(running: Running, request_: dict, error: str) -> None:
    reply = control_request(running.path, request_)
    assert reply["ok"] is False
    assert error in reply["error"]


def test_counters_merge_the_data_path_drops(running: Running) -> None:
    stats = running.dataplane.stats
    stats.ingress_drops[1]["p4_drop"] += 4
    stats.ingress_drops[255]["p4_drop"] += 1
    stats.no_port[9] += 2
    stats.packet_out = 3
    reply = control_request(running.path, {"cmd": "counters"})
    rows = {r["port"]: r for r in reply["ports"]}
    assert rows[1]["drops"] == {"p4_drop": 4} and rows[2]["drops"] == {}
    assert reply["cpu"] == {"port": 255, "packet_in": 0, "packet_out": 3,
                            "drops": {"p4_drop": 1}}
    assert reply["no_port"] == {"9": 2}
    lines = format_counters(reply).splitlines()
    assert lines[1].split() == ["1", "ethA", "0", "0", "0", "0", "4", "p4_drop=4"]
    assert lines[3] == "cpu port 255: packet_in 0, packet_out 3, drops p4_drop=1"
    assert lines[4] == "dropped, sent to ports without an interface: port 9: 2"


def test_one_connection_many_requests_and_garbage(running: Running) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(running.path)
        s.sendall(b'{"cmd": "ports"}\nnot json\n\n{"cmd": "counters"}\n')
        f = s.makefile("rb")
        replies = [json.loads(f.readline()) for _ in range(3)]
    assert [r["ok"] for r in replies] == [True, False, True]
    assert "not JSON" in replies[1]["error"]


def test_overlong_requests_are_refused(running: Running) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(running.path)
        s.sendall(b"x" * (MAX_LINE + 10))
        reply = json.loads(s.makefile("rb").readline())
    assert reply == {"ok": False, "error": f"request longer than {MAX_LINE} bytes"}


def test_a_stale_socket_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX) as old:
        old.bind(str(path))  # bound, never listening: like a crashed switch's
    server = ControlServer(str(path), lambda r: {"ok": True})
    server.open()
    server.close()
    assert not path.exists()
    path.write_text("not a socket")
    with pytest.raises(ControlError, match="exists and is not a socket"):
        ControlServer(str(path), lambda r: {"ok": True}).open()


@pytest.mark.parametrize("words, request_", [
    (["counters"], {"cmd": "counters"}),
    (["ports"], {"cmd": "ports"}),
    (["impair", "show"], {"cmd": "impair-show"}),
    (["impair", "all", "loss=0.1"], {"cmd": "impair", "port": "all", "spec": "loss=0.1"}),
    (["impair", "3", "none"], {"cmd": "impair", "port": 3, "spec": "none"}),
])
def test_cli_words_to_requests(words: list[str], request_: dict) -> None:
    assert build_request(words) == request_


@pytest.mark.parametrize("words, error", [
    ([], "a command is required"),
    (["counters", "x"], "counters takes no arguments"),
    (["impair", "1"], "usage: impair PORT|all"),
    (["impair", "one", "loss=1"], "port must be a number or 'all', got 'one'"),
])
def test_cli_usage_errors(words: list[str], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        build_request(words)
