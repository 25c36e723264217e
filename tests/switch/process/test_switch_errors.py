"""``ina switch`` refuses bad set-ups with one clear message and a non-zero exit."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from switchproc_helpers import FORWARD, ina, need_root, veth_pairs


def assert_clean(stderr: str) -> None:
    assert "Traceback" not in stderr


def test_bad_options_exit_2_with_usage_hint() -> None:
    result = ina("switch", "-i", "1@x")
    assert result.returncode == 2
    assert "a P4 program is required (or --no-p4" in result.stderr
    assert "ina switch --help" in result.stderr
    assert_clean(result.stderr)


def test_unknown_target_option_is_rejected() -> None:
    result = ina("switch", "--no-p4", "--", "--grpc-server-adr", "1.2.3.4:5")
    assert result.returncode == 2
    assert "unknown target option '--grpc-server-adr'" in result.stderr
    assert "--grpc-server-addr, --cpu-port" in result.stderr


def test_help_lists_the_simple_switch_options() -> None:
    result = ina("switch", "--help")
    assert result.returncode == 0
    for option in ("-i PORT@IFACE", "--device-id", "--no-p4", "--log-console", "--log-file",
                   "--pcap", "--thrift-port", "--impair", "--seed", "--control-socket",
                   "--grpc-server-addr", "--cpu-port"):
        assert option in result.stdout, option


def test_missing_interface_is_a_clear_error(tmp_path: Path) -> None:
    need_root()
    result = ina("switch", "--no-p4", "-i", "1@ispnosuch0", "--control-socket",
                 str(tmp_path / "c.sock"), "--", "--grpc-server-addr", "127.0.0.1:0")
    assert result.returncode == 1
    assert result.stderr.strip() == "ina switch: error: interface ispnosuch0 does not exist"


def test_taken_grpc_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = ina("switch", "--no-p4", "--control-socket", str(tmp_path / "c.sock"), "--",
                     "--grpc-server-addr", f"127.0.0.1:{port}")
    assert result.returncode == 1
    assert f"gRPC address 127.0.0.1:{port} is already in use" in result.stderr
    assert_clean(result.stderr)


def test_control_socket_of_a_running_switch_is_not_stolen(tmp_path: Path) -> None:
    path = tmp_path / "c.sock"
    with socket.socket(socket.AF_UNIX) as live:
        live.bind(str(path))
        live.listen(1)
        result = ina("switch", "--no-p4", "--control-socket", str(path), "--",
                     "--grpc-server-addr", "127.0.0.1:0")
    assert result.returncode == 1
    assert f"control socket {path} is in use by another running switch" in result.stderr


def test_compile_errors_print_like_p4c(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\nconst bit<8> X = Y;\n")
    result = ina("switch", str(bad), "--control-socket", str(tmp_path / "c.sock"), "--",
                 "--grpc-server-addr", "127.0.0.1:0")
    assert result.returncode == 1
    assert "bad.p4(2): error:" in result.stderr
    assert "ina switch: error" not in result.stderr  # diagnostics as p4c prints them
    assert_clean(result.stderr)


def test_missing_program_and_bad_artifact(tmp_path: Path) -> None:
    result = ina("switch", str(tmp_path / "nothere.p4"), "--control-socket",
                 str(tmp_path / "c.sock"), "--", "--grpc-server-addr", "127.0.0.1:0")
    assert result.returncode == 1
    assert "nothere.p4: no such file" in result.stderr
    junk = tmp_path / "junk.json"
    junk.write_text('{"format": "something else"}')
    result = ina("switch", str(junk), "--control-socket", str(tmp_path / "c.sock"), "--",
                 "--grpc-server-addr", "127.0.0.1:0")
    assert result.returncode == 1
    assert "junk.json: error: not a compiled program" in result.stderr
    assert_clean(result.stderr)


def test_switch_cli_without_a_switch(tmp_path: Path) -> None:
    result = ina("switch-cli", "--socket", str(tmp_path / "none.sock"), "counters")
    assert result.returncode == 1
    assert "no switch is listening on" in result.stderr
    result = ina("switch-cli", "--socket", str(tmp_path / "none.sock"), "frobnicate")
    assert result.returncode == 2
    assert "unknown command 'frobnicate'" in result.stderr


@pytest.mark.slow
def test_starts_from_an_artifact_and_stops_on_sigint(tmp_path: Path) -> None:
    import signal

    from switchproc_helpers import SwitchProc

    artifact = tmp_path / "fwd.json"
    assert ina("p4c", str(FORWARD), "-o", str(artifact)).returncode == 0
    with veth_pairs(1) as [(a, _)]:
        sw = SwitchProc(tmp_path, [str(artifact), "-i", f"5@{a}", "--", "--cpu-port", "64"])
        sw.wait_ready()
        ports = sw.cli("ports")
        assert "CPU port 64" in ports.stdout and f"5     {a}" in ports.stdout
        assert sw.stop(signal.SIGINT) == 0
    assert "ready" in sw.stderr and "Traceback" not in sw.stderr
