"""``ina topo show`` and ``ina topo draw`` (no root: nothing runs), and how a link's
own impairment combines with a run's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ina.cli import main
from ina.topo_cli import default_picture
from topologies.builder import combine_impairments
from topologies.nodes import ina_command
from topologies.spec import parse_topo_spec
from topologies.topofile import load_topo_file

ROOT = Path(__file__).resolve().parents[2]
FILE = """\
hosts: [h1, h2, h3]
switches: [s1, s2]
links:
  - [h1, s1]
  - [h2, s1]
  - [h3, s2, {bw: 20}]
  - [s1, s2, {delay: 1.5ms, loss: 0.02}]
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_a_family(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "topo", "show", "leafspine,2,2,1,bw=10")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "leafspine,2,2,1,bw=10: 4 switches, 2 hosts, 6 links (2 to hosts, 4 between "
        "switches)",
        "s1 (layer 1): ports 1 h1, 2 s3:1, 3 s4:1",
        "s2 (layer 1): ports 1 h2, 2 s3:2, 3 s4:2",
        "s3 (layer 0): ports 1 s1:2, 2 s2:2",
        "s4 (layer 0): ports 1 s1:3, 2 s2:3",
        "h1: 10.0.0.1/24 00:00:00:00:00:01 on s1 port 1",
        "h2: 10.0.0.2/24 00:00:00:00:00:02 on s2 port 1",
        "every link: 10 Mbit/s"]


def test_show_a_file_with_a_job(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(FILE)
    code, out, err = run(capsys, "topo", "show", str(path), "--job", "4", "--workers",
                         "h1,h3", "--slots", "8")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"{path}: 2 switches, 3 hosts, 4 links (3 to hosts, 1 between switches)"
    assert lines[6:] == [
        "links with settings (delay and loss per direction):",
        "  h3 - s2:1: 20 Mbit/s",
        "  s1:3 - s2:2: loss=0.02, delay=1.5ms",
        "job 4: workers h1,h3; root s1; 8 slots; multicast group 1; epoch 1",
        "  s1: root; fan-in 2; slots 0..7",
        "  ├── port 1: h1",
        "  └── port 3: s2: parent port 2; fan-in 1 (passes through); slots 0..7",
        "      └── port 1: h3",
        "  workers send: h1 to 10.0.0.254; h3 to 10.0.0.253"]


@pytest.mark.parametrize(("argv", "message"), [
    (["topo", "show", "fattree,5"], "ina topo: error: topology spec 'fattree,5': fattree's "
                                    "K (ports per switch) must be even, got 5\n"),
    (["topo", "show", "star,2", "--root", "s1"],
     "ina topo: error: --workers and --root describe a job: give --job J too\n"),
    (["topo", "show", "star,2", "--job", "1", "--workers", "h1,h7"],
     "ina topo: error: unknown host 'h7'; hosts: h1, h2\n"),
    (["topo", "draw", "linear,3,1", "--job", "1", "--root", "s9"],
     "ina topo: error: unknown switch 's9'; switches: s1, s2, s3\n"),
])
def test_errors_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                             message: str) -> None:
    assert run(capsys, *argv) == (1, "", message)


def test_draw_writes_a_png(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "topo", "draw", "fattree,4", "--job", "1")
    assert (code, out, err) == (0, "wrote fattree4-job1.png\n", "")
    data = (tmp_path / "fattree4-job1.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 800 and height > 500
    out_file = tmp_path / "pics" / "torus.svg"
    code, out, _ = run(capsys, "topo", "draw", "torus,3,3", "-o", str(out_file))
    assert code == 0 and out_file.read_text().lstrip().startswith("<?xml")
    code, _, err = run(capsys, "topo", "draw", "star,2", "-o", "/proc/nope/x.png")
    assert code == 1 and err.startswith("ina topo: error: cannot write /proc/nope/x.png")


def test_default_picture_names() -> None:
    assert default_picture("fattree,4", 1) == "fattree4-job1.png"
    assert default_picture("leafspine,2,2,2,bw=10", None) == "leafspine222bw10.png"
    assert default_picture("/x/racks.yaml", 3) == "racks-job3.png"


def test_the_readme_draw_command_as_a_process(tmp_path: Path) -> None:
    proc = subprocess.run([*ina_command(), "topo", "draw", "fattree,4", "--job", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (0, "wrote fattree4-job1.png\n"), proc.stderr
    assert (tmp_path / "fattree4-job1.png").stat().st_size > 10_000


def test_link_impairments_combine_with_a_runs(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(FILE)
    from topologies.builder import link_impairments

    assert link_impairments(load_topo_file(path)) == {
        "s1": {3: "loss=0.02,delay=1.5ms,direction=both"}}
    link = "loss=0.02,delay=1.5ms,direction=both"
    assert combine_impairments(link, None) == "loss=0.02,delay=1.5ms,direction=both"
    assert combine_impairments(link, "none") == combine_impairments(link, None)
    assert combine_impairments(link, "loss=0.5,duplicate=0.1,direction=both") == (
        "loss=0.51,delay=1.5ms,duplicate=0.1,direction=both")
    assert combine_impairments(link, "loss=0.1,seed=4,direction=both") == (
        "loss=0.118,delay=1.5ms,seed=4,direction=both")
    with pytest.raises(ValueError, match="applies to one direction; a link's own .* "
                                         "applies to both: give direction=both"):
        combine_impairments(link, "loss=0.1")
    assert parse_topo_spec("star,2").spec == "star,2"


@pytest.mark.parametrize(("argv", "message"), [
    (["--topo", "star,2", "--root", "s4"],
     "ina run: error: --root s4: not a switch of star,2 (switches: s1)\n"),
    (["--topo", "star,2", "--root", "core"],
     "ina run: error: --root core: not a switch name (s1, s2, ...)\n"),
    (["--topo", "star,2", "--size", "10,20", "--cli"],
     "ina run: error: --cli sets up one point, and the options make 2\n"),
    (["--topo", "fattree,3"],
     "ina run: error: --topo fattree,3: fattree's K (ports per switch) must be even, got 3\n"),
])
def test_run_options_of_trees_are_checked_first(capsys: pytest.CaptureFixture[str],
                                               argv: list[str], message: str) -> None:
    assert run(capsys, "run", *argv) == (2, "", message)
