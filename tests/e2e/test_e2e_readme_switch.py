"""The README's "Starting the switch by hand" runs as written: veth pairs, ``ina p4c``,
``ina switch`` and p4runtime-shell (its CLI, with the README's shell commands on stdin).

Only names are changed: the veth interfaces get a unique prefix, ``build/`` becomes a
temporary directory, the gRPC port a free one, and the switch gets its own control
socket (so it cannot clash with another switch of device id 1 on this machine)."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from readme_sections import blocks, section

from controller import Lpm, P4RuntimeClient
from topologies.netutil import free_tcp_port, wait_listening

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


SECTION = section("Starting the switch by hand")


@pytest.fixture
def names(tmp_path: Path) -> Iterator[dict[str, str]]:
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pairs, raw sockets)")
    tag = secrets.token_hex(3)
    yield {"tag": tag, "port": str(free_tcp_port()), "build": str(tmp_path)}
    for i in (1, 2):
        subprocess.run(["ip", "link", "del", f"h4v{tag}{i}"], capture_output=True)


def _rename(line: str, names: dict[str, str]) -> str:
    line = re.sub(r"\bveth(\d)(-peer)?\b",
                  lambda m: f"h4v{names['tag']}{m[1]}{'p' if m[2] else ''}", line)
    line = line.replace("build/", names["build"] + "/").replace("9559", names["port"])
    return line.replace(".venv/bin/", f"{ROOT}/.venv/bin/")


def test_readme_switch_by_hand(names: dict[str, str], tmp_path: Path) -> None:
    setup, shell_cli = blocks(SECTION, "")[:2]
    (shell_commands,) = blocks(SECTION, "python")
    lines = [_rename(line, names) for line in setup.strip().splitlines()]
    [switch_line] = [line for line in lines if " switch " in line]
    shell_lines = [line for line in lines if line is not switch_line]
    subprocess.run(["bash", "-ec", "\n".join(shell_lines)], cwd=ROOT, check=True,
                   capture_output=True, text=True, timeout=120)

    argv = switch_line.rstrip(" &").split()
    cut = argv.index("--")
    argv[cut:cut] = ["--control-socket", str(tmp_path / "switch.sock")]
    log = tmp_path / "switch.log"
    with open(log, "wb") as out:
        switch = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_listening(switch, "127.0.0.1", int(names["port"]), 60, "ina switch", log)
        # the port listens a moment before the message reaches the log
        deadline = time.monotonic() + 10
        while "ina switch: device 1 ready: " not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)

        shell = subprocess.run(_rename(shell_cli.strip(), names).split(), cwd=ROOT,
                               input=shell_commands, capture_output=True, text=True,
                               timeout=120)
        assert shell.returncode == 0, shell.stderr
        printed = shell.stdout
        assert 'table_id: 39075933 ("ForwardIngress.ipv4_lpm")' in printed, printed
        assert 'value: "\\\\x0a\\\\x00\\\\x01\\\\x00"' in printed, printed
        assert "prefix_len: 24" in printed, printed
        assert 'action_id: 24006096 ("ForwardIngress.forward")' in printed, printed
        assert "Error" not in printed, printed

        # the pipeline and the entry are really on the switch
        with P4RuntimeClient(f"127.0.0.1:{names['port']}", device_id=1) as client:
            client.fetch_pipeline()
            [entry] = client.read_table("ipv4_lpm")
            assert entry.match == {"hdr.ipv4.dst_addr": Lpm(0x0A000100, 24)}
            assert entry.params == {"port": 1, "dst_mac": 0x000000000101}
    finally:
        switch.send_signal(signal.SIGTERM)
        assert switch.wait(timeout=10) == 0, log.read_text()
