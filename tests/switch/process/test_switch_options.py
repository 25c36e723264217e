"""Parsing of ``ina switch``'s command line (simple_switch_grpc's options)."""

from __future__ import annotations

import pytest

from switch.ports import ImpairmentConfig
from switch.process.options import (
    HelpRequested,
    OptionsError,
    parse_grpc_address,
    parse_switch_args,
)


def test_a_mininet_style_command_line() -> None:
    o = parse_switch_args([
        "prog.json", "-i", "1@s1-eth1", "-i", "2@s1-eth2", "--device-id", "7", "--log-console",
        "--pcap", "/tmp/p", "--thrift-port", "9091", "--impair", "2:loss=5%,delay=10",
        "--seed", "11", "-I", "inc", "-D", "N=4", "-D", "FLAG",
        "--", "--grpc-server-addr", "127.0.0.1:50001", "--cpu-port", "255"])
    assert o.program == "prog.json"
    assert o.ports == ((1, "s1-eth1"), (2, "s1-eth2"))
    assert o.device_id == 7 and o.log_console and o.tracing
    assert o.pcap_dir == "/tmp/p" and o.thrift_port == 9091
    assert o.impairments == ((2, ImpairmentConfig(loss=0.05, delay_ms=10.0, seed=11)),)
    assert o.include_dirs == ("inc",) and o.defines == (("N", "4"), ("FLAG", None))
    assert o.grpc_address == "127.0.0.1:50001" and o.cpu_port == 255
    assert o.control_socket == "/tmp/ina-switch-7.sock"


def test_defaults_are_simple_switch_grpc_defaults() -> None:
    o = parse_switch_args(["--no-p4"])
    assert o.program is None and o.no_p4
    assert o.grpc_address == "0.0.0.0:9559"
    assert o.device_id == 0 and o.cpu_port is None
    assert not o.tracing and o.pcap_dir is None
    assert o.control_socket == "/tmp/ina-switch-0.sock"


def test_a_spec_seed_wins_over_seed() -> None:
    o = parse_switch_args(["--no-p4", "-i", "1@a", "--impair", "all:loss=0.1,seed=3",
                           "--seed", "9", "--control-socket", "/run/x.sock"])
    assert o.impairments == ((None, ImpairmentConfig(loss=0.1, seed=3)),)
    assert o.control_socket == "/run/x.sock"


@pytest.mark.parametrize("argv, message", [
    ([], "a P4 program is required (or --no-p4"),
    (["p.p4", "--no-p4"], "--no-p4 and a program (p.p4) exclude each other"),
    (["--no-p4", "-i", "eth0"], "-i: bad interface spec 'eth0': expected PORT@IFACE"),
    (["--no-p4", "-i", "x@eth0"], "port 'x' is not a non-negative integer"),
    (["--no-p4", "-i", "1@a", "-i", "1@b"], "-i: port 1 is given twice (a and b)"),
    (["--no-p4", "-i", "1@a", "-i", "2@a"], "-i: interface a is given twice"),
    (["--no-p4", "-i", "512@a"], "port 512 does not fit in bit<9>"),
    (["--no-p4", "-i", "1@a", "--impair", "3:loss=0.1"], "port 3 is not given with -i"),
    (["--no-p4", "-i", "1@a", "--impair", "1:loss=2"], "loss must be between 0 and 1"),
    (["--no-p4", "--device-id", "x"], "device id must be an integer, got 'x'"),
    (["--no-p4", "--thrift-port", "70000"], "thrift port must be between 0 and 65535"),
    (["--no-p4", "--bogus"], "unrecognized arguments: --bogus"),
    (["--no-p4", "--", "--cpu-port", "600"], "CPU port must be between 0 and 511"),
    (["--no-p4", "--", "--nanolog", "x"], "unknown target option '--nanolog'"),
    (["--no-p4", "--", "--grpc-server-addr", "9559"], "expected HOST:PORT, got '9559'"),
    (["--no-p4", "--", "--grpc-server-addr", "h:99999"], "bad port '99999'"),
    (["--no-p4", "-i", "1@a", "--", "--cpu-port", "1"],
     "--cpu-port 1 is also given as an interface port"),
    (["--no-p4", "--nanolog", "/tmp/x.ipc"],
     "expected a nanomsg address such as ipc:///tmp/bm-0-log.ipc"),
    (["--no-p4", "--debugger"], "--debugger is not supported: the built-in switch has no "
                                "debugger"),
    (["--no-p4", "--use-files", "0"], "--use-files is not supported: ports are Linux "
                                      "interfaces only"),
    (["--no-p4", "--restore-state=f"], "--restore-state is not supported"),
    (["--no-p4", "--", "--priority-queues", "8"],
     "--priority-queues is not supported: each port has one queue"),
])
def test_bad_command_lines_say_what_is_wrong(argv: list[str], message: str) -> None:
    with pytest.raises(OptionsError) as e:
        parse_switch_args(argv)
    assert message in str(e.value)


def test_help_is_an_answer_not_an_error() -> None:
    with pytest.raises(HelpRequested) as e:
        parse_switch_args(["-h"])
    assert "--grpc-server-addr" in str(e.value)


def test_grpc_addresses() -> None:
    assert parse_grpc_address("0.0.0.0:9559") == ("0.0.0.0", 9559)
    assert parse_grpc_address("[::1]:50051") == ("::1", 50051)
    assert parse_grpc_address("localhost:0") == ("localhost", 0)


def test_the_p4lang_tutorials_command_line() -> None:
    """As the tutorials' P4RuntimeSwitch starts simple_switch_grpc (one string, split
    by the shell), and as their PTF scripts do."""
    argv = ("-i 1@s1-eth1 -i 2@s1-eth2 --pcap /x/pcaps --nanolog ipc:///tmp/bm-0-log.ipc "
            "--device-id 0 build/basic.json --log-console --thrift-port 9090 -- "
            "--grpc-server-addr 0.0.0.0:50051 --cpu-port 255").split()
    o = parse_switch_args(argv)
    assert o.program == "build/basic.json" and o.device_id == 0
    assert o.nanolog == "ipc:///tmp/bm-0-log.ipc" and o.thrift_port == 9090
    assert o.grpc_address == "0.0.0.0:50051" and o.cpu_port == 255
    ptf = parse_switch_args("--log-file ss-log --log-flush --dump-packet-data 10000 "
                            "-i 0@veth0 -i 1@veth2 --no-p4".split())
    assert ptf.log_file == "ss-log" and ptf.log_flush and ptf.ports[0] == (0, "veth0")
