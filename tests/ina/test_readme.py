"""The README's commands and examples run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from readme_sections import blocks, section

from topologies.nodes import bmv2_missing

ROOT = Path(__file__).resolve().parents[2]
INA = str(ROOT / ".venv" / "bin" / "ina")


def _ina_commands(text: str) -> list[str]:
    return [line.strip() for block in blocks(text, "") for line in block.splitlines()
            if line.strip().startswith(".venv/bin/ina ")]


RUNNING = section("Running a P4 program")


@pytest.mark.parametrize("command", _ina_commands(RUNNING))
def test_running_section_commands(command: str, tmp_path: Path) -> None:
    if "--target bmv2" in command and bmv2_missing():
        pytest.skip(f"needs BMv2: {bmv2_missing()}")
    argv = command.split()
    argv[0] = INA
    argv = [a.replace("build/", f"{tmp_path}/") for a in argv]
    if argv[1:3] == ["bench", "engine"]:
        argv += ["--count", "2000"]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    if argv[1] == "p4c":
        assert (tmp_path / "forward.json").stat().st_size > 0
        assert "ipv4_lpm" in (tmp_path / "forward.p4info.txtpb").read_text()
    if argv[1] == "stf":
        assert proc.stdout.startswith("PASS")
    if argv[1] == "bench":  # every packet went in, and some came out
        counts = re.search(r"; (\d+) packets in [\d.]+ s: [\d,]+ packets/s \((\d+) packets "
                           r"out; ", proc.stdout)
        assert counts and counts[1] == "2000" and int(counts[2]) > 0, proc.stdout


def test_running_section_python_example() -> None:
    (code,) = blocks(RUNNING, "python")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    port, summary = proc.stdout.strip().split(" ", 1)
    assert port == "1"
    assert "10.0.0.1:domain > 10.0.1.7:discard" in summary


def test_front_door_names_both_commands() -> None:
    door = blocks(section("The two commands"), "")[0]
    assert [line.split()[:2] for line in door.splitlines()] == [["make", "test"], ["make", "demo"]]
