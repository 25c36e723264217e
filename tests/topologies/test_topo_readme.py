"""The README's "Topologies and aggregation trees" section as written, where no root is
needed: the ``ina topo`` commands, the example file, the error it quotes, the families
table, and the job tree and the refusal it shows (the commands that need root run in
``tests/e2e/test_tree_commands_e2e.py``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from readme_sections import blocks, section

from controller.jobs import JobError, JobTable
from controller.show import format_job
from controller.topology import Topology
from topologies.nodes import ina_command
from topologies.spec import FAMILIES, TopoSpecError, parse_topo_spec

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("Topologies and aggregation trees")
EXAMPLE = ROOT / "topologies" / "examples" / "two_racks.yaml"


def block(first_line_start: str) -> str:
    [text] = [text for text in blocks(SECTION) if text.startswith(first_line_start)]
    return text


TOPO_COMMANDS = [line.removeprefix(".venv/bin/ina ").split()
                 for line in block(".venv/bin/ina topo").splitlines()]


@pytest.mark.parametrize("argv", TOPO_COMMANDS, ids=" ".join)
def test_topo_commands(argv: list[str], tmp_path: Path) -> None:
    draws = argv[1] == "draw"
    proc = subprocess.run([*ina_command(), *argv], cwd=tmp_path if draws else ROOT,
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    if draws:
        assert proc.stdout == "wrote fattree4-job1.png\n"
        assert (tmp_path / "fattree4-job1.png").read_bytes()[:4] == b"\x89PNG"
    elif argv[2].endswith(".yaml"):
        assert "  s1:3 - s3:1: loss=0.01, delay=2ms" in proc.stdout.splitlines()
        assert "job 1: workers h1,h2,h3,h4; root s3; 64 slots" in proc.stdout
    else:
        assert proc.stdout.splitlines()[-1] == "every link: 10 Mbit/s"


def test_the_picture_is_what_draw_makes() -> None:
    assert "docs/trees/fattree4-job1.png" in SECTION
    assert (ROOT / "docs" / "trees" / "fattree4-job1.png").read_bytes()[:4] == b"\x89PNG"


def test_the_example_file_is_the_one_shown() -> None:
    assert block("# Two racks") == EXAMPLE.read_text()


def test_the_quoted_error(tmp_path: Path) -> None:
    quoted = re.search(r"`(two_racks.yaml:12: .*?)`", SECTION.replace("\n", " "))
    assert quoted is not None
    broken = tmp_path / "two_racks.yaml"
    broken.write_text(EXAMPLE.read_text().replace("[s1, s3, {delay: 2ms}]",
                                                  "[s1, s9, {delay: 2ms}]"))
    with pytest.raises(TopoSpecError) as e:
        parse_topo_spec(str(broken))
    assert str(e.value).endswith(f"{tmp_path}/{quoted.group(1)}")


def test_the_families_table() -> None:
    specs = re.findall(r"^\| `([a-z]+),", SECTION, re.M)
    assert specs == list(FAMILIES)


def test_the_job_tree_shown() -> None:
    table = JobTable(Topology.from_mininet(parse_topo_spec("leafspine,2,2,2")))
    table.create(1, ["h2"], slots=16)
    job = table.create(2, ["h1", "h3", "h4"], slots=16).job
    assert block("job 2: ") == "\n".join(format_job(job)) + "\n"


def test_the_refusal_quoted() -> None:
    quoted = re.search(r"`(job 4 does not fit: .*?)`", SECTION.replace("\n", " "))
    assert quoted is not None
    table = JobTable(Topology.from_mininet(parse_topo_spec("fattree,4")))
    table.create(1, [f"h{i}" for i in range(1, 9)], slots=200)
    table.create(2, [f"h{i}" for i in range(9, 17)], slots=100)
    table.create(3, ["h1", "h9"], slots=50)
    with pytest.raises(JobError) as e:
        table.create(4, ["h1", "h2"], slots=10)
    assert str(e.value) == quoted.group(1)
