"""A network as p4lang's tutorials describe one, end to end: ``ina net --topo`` on our
own topology.json and per-switch runtime files (tests/e2e/exercise/), with the device
config wrapped as a P4DeviceConfig, hosts that ping each other over two switches."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import need_ina_switch_and_root

from topologies.nodes import ina_command

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = Path(__file__).resolve().parent / "exercise"


@pytest.mark.slow
def test_a_tutorial_style_network_pings_and_holds_its_runtime_files(tmp_path: Path) -> None:
    need_ina_switch_and_root()
    work = tmp_path / "exercise"
    shutil.copytree(EXERCISE, work)
    compiled = subprocess.run(
        [*ina_command(), "p4c", "--p4v", "16", "--p4runtime-files",
         "build/ipv4_forward.p4info.txtpb", "-o", "build/ipv4_forward.json",
         str(ROOT / "p4" / "ipv4_forward.p4")], cwd=work, capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    read_back = f"{sys.executable} read_back.py 127.0.0.1:50051 0 ForwardIngress.ipv4_lpm"
    commands = f"pingall\nsh {read_back}\nexit\n"
    result = subprocess.run(
        [*ina_command(), "net", "--topo", "topology.json", "--program",
         "build/ipv4_forward.json", "--runs-dir", str(tmp_path)],
        cwd=work, input=commands, capture_output=True, text=True, timeout=600,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "s1: P4Runtime on 127.0.0.1:50051, device 0; programmed from s1-runtime.json" in out
    assert "s2: P4Runtime on 127.0.0.1:50052, device 1; programmed from s2-runtime.json" in out
    assert "Results: 0% dropped (6/6 received)" in out
    size = (work / "build" / "ipv4_forward.json").stat().st_size
    assert f"device config: P4DeviceConfig reassign=True device_data={size} bytes" in out
    assert "default action: ForwardIngress.drop" in out
    assert "multicast group 1: 1/1,2/1" in out
    assert "clone session 5: 3 truncate 64" in out
    log = next(tmp_path.glob("*-net-exercise/logs/s2.log")).read_text()
    # started with --program, then programmed from its runtime file
    assert "ina switch build/ipv4_forward.json -i 1@s2-eth1" in log
    assert "p4/ipv4_forward.p4, control socket" in log
