"""The switch node classes in a Mininet network, with a stand-in switch executable."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from topo_helpers import (
    SWITCH,
    TWO_SWITCHES,
    PairTopo,
    TwoSwitchTopo,
    need_root,
    write_fake_switch,
)

from topologies.netutil import StartError, is_listening, mininet_lock
from topologies.nodes import BMv2Switch, InaSwitch, bmv2_missing


class FakeInaSwitch(InaSwitch):
    """An ``InaSwitch`` whose executable is the stand-in."""

    fake: list[str] = []

    def executable(self) -> list[str]:
        return self.fake


@pytest.fixture
def make_net(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Factory for a built (not started) two-host Mininet network; always stopped."""
    need_root()
    from mininet.net import Mininet

    FakeInaSwitch.fake = write_fake_switch(tmp_path)
    nets: list[Any] = []

    def make(switch: Any) -> Any:
        net = Mininet(topo=PairTopo(), switch=switch, controller=None, build=False)
        nets.append(net)
        net.build()
        return net

    with mininet_lock():
        try:
            yield make
        finally:
            for net in nets:
                net.stop()


def test_ina_switch_command_line(make_net: Callable[..., Any], tmp_path: Path) -> None:
    net = make_net(partial(InaSwitch, program="fwd.json", log_dir=tmp_path, cpu_port=255,
                           impair=["2:loss=0.05"], seed=7, grpc_port=50123))
    sw = net.get(SWITCH)
    argv = sw.command()
    assert argv[1:] == ["switch", "fwd.json", "-i", f"1@{SWITCH}-eth1", "-i",
                        f"2@{SWITCH}-eth2", "--device-id", "1", "--impair", "2:loss=0.05",
                        "--seed", "7", "--control-socket", str(tmp_path / f"{SWITCH}.sock"),
                        "--", "--grpc-server-addr", "127.0.0.1:50123", "--cpu-port", "255"]
    assert argv[0].endswith("ina")
    assert sw.grpc_address == "127.0.0.1:50123"


def test_no_program_means_no_p4_and_device_id_from_the_name(
        make_net: Callable[..., Any], tmp_path: Path) -> None:
    net = make_net(partial(BMv2Switch, log_dir=tmp_path, grpc_port=50124, thrift_port=50125,
                           trace=True))
    argv = net.get(SWITCH).command()
    assert argv == ["simple_switch_grpc", "--no-p4", "-i", f"1@{SWITCH}-eth1", "-i",
                    f"2@{SWITCH}-eth2", "--device-id", "1", "--log-file",
                    str(tmp_path / f"{SWITCH}.trace"), "--thrift-port", "50125", "--",
                    "--grpc-server-addr", "127.0.0.1:50124"]


def test_start_waits_for_the_grpc_port_and_stop_ends_the_process(
        make_net: Callable[..., Any], tmp_path: Path) -> None:
    net = make_net(partial(FakeInaSwitch, program="fwd.json", log_dir=tmp_path))
    net.start()  # start() launches, batchStartup waits until the port listens
    sw = net.get(SWITCH)
    port = int(sw.grpc_address.rsplit(":", 1)[1])
    assert is_listening("127.0.0.1", port)
    log = (tmp_path / f"{SWITCH}.log").read_text()
    assert f"fake switch fwd.json -i 1@{SWITCH}-eth1 -i 2@{SWITCH}-eth2" in log
    sw.stop(deleteIntfs=False)
    assert sw.exit_status == 0  # SIGTERM, clean exit
    assert not is_listening("127.0.0.1", port)


def test_a_switch_that_exits_is_reported_with_its_log(make_net: Callable[..., Any],
                                                      tmp_path: Path) -> None:
    net = make_net(partial(FakeInaSwitch, log_dir=tmp_path, extra_args=["--mode", "fail"]))
    with pytest.raises(StartError, match=r"(?s)ina switch q4s1 exited with status 3 before "
                       r"listening on 127.0.0.1:\d+; the end of its log .*q4s1.log:\n.*"
                       r"error: interface q4s1-eth9 does not exist"):
        net.start()


def test_a_switch_that_never_listens_times_out(make_net: Callable[..., Any],
                                               tmp_path: Path) -> None:
    net = make_net(partial(FakeInaSwitch, log_dir=tmp_path, ready_timeout=0.5,
                           stop_timeout=10, extra_args=["--mode", "silent"]))
    with pytest.raises(StartError, match=r"did not listen on 127.0.0.1:\d+ within 0.5 s"):
        net.start()
    sw = net.get(SWITCH)
    sw.stop(deleteIntfs=False)
    assert sw.exit_status == 0


def test_bmv2_switch_runs_simple_switch_grpc(make_net: Callable[..., Any],
                                             tmp_path: Path) -> None:
    reason = bmv2_missing()
    if reason:
        pytest.skip(reason)
    net = make_net(partial(BMv2Switch, log_dir=tmp_path))
    sw = net.get(SWITCH)
    compiled = sw.compile(Path(__file__).parents[2] / "p4" / "ipv4_forward.p4", tmp_path)
    assert compiled.p4info.exists() and compiled.device_config.exists()
    net.start()
    assert is_listening("127.0.0.1", int(sw.grpc_address.rsplit(":", 1)[1]))


def test_two_bmv2_switches_each_get_their_own_thrift_port(tmp_path: Path) -> None:
    """simple_switch_grpc serves Thrift on 9090 unless told otherwise, and a second one
    on the same port never serves P4Runtime: each switch is given a free port."""
    need_root()
    reason = bmv2_missing()
    if reason:
        pytest.skip(reason)
    from mininet.net import Mininet

    with mininet_lock():
        net = Mininet(topo=TwoSwitchTopo(), switch=partial(BMv2Switch, log_dir=tmp_path),
                      controller=None)
        try:
            net.start()
            switches = [net.get(name) for name in TWO_SWITCHES]
            thrift = [sw.thrift_port for sw in switches]
            assert None not in thrift and len(set(thrift)) == 2
            for sw in switches:
                assert is_listening("127.0.0.1", int(sw.grpc_address.rsplit(":", 1)[1]))
                assert is_listening("127.0.0.1", sw.thrift_port)
                assert (f"Thrift on port {sw.thrift_port} (simple_switch_CLI --thrift-port "
                        f"{sw.thrift_port})") in (tmp_path / f"{sw.name}.log").read_text()
        finally:
            net.stop()


def test_the_lock_removes_ports_a_killed_network_left(tmp_path: Path) -> None:
    """A network whose process was killed leaves its switch ports behind; the next one
    would fail with 'File exists'. Taking the lock removes them (and nothing else)."""
    need_root()
    import subprocess

    from mininet.net import Mininet

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True)

    left, right = (f"{switch}-eth2" for switch in TWO_SWITCHES)  # their link's ports
    told: list[str] = []
    with mininet_lock(waiting=told.append):  # no network of the project runs meanwhile
        ip("link", "add", left, "type", "veth", "peer", "name", right)
        ip("link", "add", "inakeep0", "type", "veth", "peer", "name", "inakeep1")
    try:
        with mininet_lock(waiting=told.append):
            shown = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True,
                                   check=True).stdout
            assert f" {left}@" not in shown and f" {right}@" not in shown
            assert "inakeep0" in shown  # not a name Mininet gives
            FakeInaSwitch.fake = write_fake_switch(tmp_path)
            net = Mininet(topo=TwoSwitchTopo(), controller=None, build=False,
                          switch=partial(FakeInaSwitch, log_dir=tmp_path))
            try:
                net.build()  # the same ports again: no 'File exists'
            finally:
                net.stop()
    finally:
        subprocess.run(["ip", "link", "del", "inakeep0"], capture_output=True, check=False)
    assert told[-1] in (
        f"removed 1 interface(s) left by a Mininet network that did not end: {name}"
        for name in (left, right))
