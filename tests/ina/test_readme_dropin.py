"""The README's section on p4lang's tutorials, PTF and pytest: its example test file
runs under the project's pytest plugin as written, and its commands name what the set-up
installs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from readme_sections import blocks, section

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("p4lang's tutorials, PTF and pytest")


def test_the_switch_executable_is_where_the_make_line_looks() -> None:
    (make,) = [b for b in blocks(SECTION, "") if "make run" in b]
    exe = re.search(r"BMV2_SWITCH_EXE=(\S+)", make)
    assert exe is not None and "grpc" in exe.group(1)  # the tutorials' P4Runtime start-up
    script = Path(sys.executable).with_name(exe.group(1))
    assert script.is_file() and os.access(script, os.X_OK)
    help_text = subprocess.run([str(script), "--help"], capture_output=True, text=True)
    assert help_text.returncode == 0 and "--nanolog" in help_text.stdout
    assert 'P4C="ina p4c"' in make and "PATH=$INA/.venv/bin:" in make


@pytest.mark.slow
def test_the_example_test_file_passes_under_the_plugin(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pairs, Mininet)")
    (example,) = blocks(SECTION, "python")
    test_file = tmp_path / "test_my_switch.py"
    test_file.write_text(example)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(test_file)], cwd=ROOT, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
