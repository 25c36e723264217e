"""``ina ctl`` without switches: argument checks, offline commands and error texts."""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import add_ctl_parser, main, shell_argv


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def topo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "star.json"
    assert run(capsys, "--topo", str(path), "topo", "init", "star,3") == (
        0, f"wrote {path}: 3 hosts, 1 switch(es)\n", "")
    return path


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_topo_init_and_show(topo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(topo.read_text())
    assert data["links"] == [["h1", "s1:1"], ["h2", "s1:2"], ["h3", "s1:3"]]
    code, out, _ = run(capsys, "--topo", str(topo), "topo", "show")
    assert out.splitlines() == [
        "s1: device 1 at 127.0.0.1:9559, mac 02:00:00:ff:00:01, aggregator 10.0.0.254",
        "  port 1: h1", "  port 2: h2", "  port 3: h3",
        "h1: 10.0.0.1/24 00:00:00:00:00:01 on s1:1",
        "h2: 10.0.0.2/24 00:00:00:00:00:02 on s1:2",
        "h3: 10.0.0.3/24 00:00:00:00:00:03 on s1:3"]


def test_arp_prints_mininet_cli_commands(topo: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--topo", str(topo), "arp")
    lines = out.splitlines()
    assert len(lines) == 9
    assert lines[:3] == [
        f"h1 ip neigh replace 10.0.0.{i} lladdr 02:00:00:ff:00:01 dev h1-eth0 nud permanent"
        for i in (2, 3, 254)]


def test_job_list_without_state(topo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--topo", str(topo), "job", "list") == (0, "no jobs\n", "")


@pytest.mark.parametrize(("argv", "message"), [
    (["table", "dump", "s7"], "unknown switch 's7'; switches: s1"),
    (["register", "read", "s2", "ina_bitmap"], "unknown switch 's2'; switches: s1"),
    (["shell", "x"], "unknown switch 'x'; switches: s1"),
    (["job", "delete", "--id", "4"], r"no job 4 \(jobs: none\)"),
    (["topo", "init", "ring,3"], "topology spec 'ring,3': unknown topology 'ring'"),
    (["setup", "--p4info", "x.txtpb"], "setup: --p4info and --config go together"),
    (["setup", "--program", "p.p4", "--p4info", "a", "--config", "b"],
     "setup: give either --program or --p4info/--config"),
    (["setup", "--program", "/nonexistent/prog.p4"], "/nonexistent/prog.p4: no such P4 program"),
    (["setup", "--p4info", "/nonexistent/a.txtpb", "--config", "b.json"],
     "/nonexistent/a.txtpb: no such P4Info file"),
])
def test_clear_errors(topo: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                      message: str) -> None:
    code, out, err = run(capsys, "--topo", str(topo), *argv)
    assert code == 1 and out == ""
    assert err.startswith("ina ctl: error: ") and err.endswith("\n")
    assert re.search(message, err), err


def test_unreachable_switch(tmp_path: Path, topo: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(topo.read_text())
    port = unused_port()
    data["switches"][0]["grpc_address"] = f"127.0.0.1:{port}"
    topo.write_text(json.dumps(data))
    code, out, err = run(capsys, "--topo", str(topo), "--timeout", "0.3", "table", "dump",
                         "s1")
    assert (code, out) == (1, "")
    assert err == (f"ina ctl: error: switch s1 (127.0.0.1:{port}) device 1: UNAVAILABLE: "
                   "no P4Runtime server answered within 0.3 s\n")
    code, _, err = run(capsys, "--topo", str(topo), "--timeout", "0.3", "job", "create",
                       "--id", "1", "--workers", "h1,h2")
    assert code == 1 and "UNAVAILABLE" in err
    assert not (tmp_path / "star.jobs.json").exists()  # nothing recorded


def test_bad_topology_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"hosts": [{"name": "h1", "ip": "10.0.0.1"}]}')
    code, _, err = run(capsys, "--topo", str(path), "job", "list")
    assert (code, err) == (1, f"ina ctl: error: {path}: hosts[0]: missing field 'mac'\n")
    code, _, err = run(capsys, "--topo", str(tmp_path / "none.json"), "arp")
    assert code == 1 and "none.json: cannot read the topology file" in err


def test_compile_errors_print_like_p4c(tmp_path: Path, topo: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("control C() { apply { x = 1; } }\n")
    code, _, err = run(capsys, "--topo", str(topo), "setup", "--program", str(bad))
    assert code == 1
    assert err.startswith(f"ina ctl: error: {bad}(1): error:")


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], topo: Path) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--topo", str(topo), "job", "create", "--id", "x", "--workers", "h1"])
    assert e.value.code == 2
    assert "job id 'x' is not a number" in capsys.readouterr().err
    assert main(["job", "list"]) == 2
    assert capsys.readouterr().err == ("ina ctl: error: job: --topo FILE is required (ina ctl "
                                       "--topo FILE job ...)\n")


def test_shell_command_line(topo: Path) -> None:
    parser = argparse.ArgumentParser()
    add_ctl_parser(parser.add_subparsers())
    args = parser.parse_args(["ctl", "--topo", str(topo), "--election-id", "0,7", "shell",
                              "s1"])
    from controller.topology import Topology

    assert shell_argv(args, Topology.load(topo)) == [
        sys.executable, "-m", "p4runtime_sh", "--grpc-addr", "127.0.0.1:9559",
        "--device-id", "1", "--election-id", "0,7"]


def test_ctl_help_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "ina.cli", "ctl", "--help"],
                         capture_output=True, text=True, check=True).stdout
    assert "job create --id 1 --workers h1,h2,h3" in out
