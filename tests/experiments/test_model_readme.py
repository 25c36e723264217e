"""The README's model at scale and its validation run as written: ``ina model --topo``
with the figures the text quotes, the validation table (regenerated from the stored
runs in ``docs/model/``, it must be the README's, line for line), the figure (drawn
into a temporary directory), and (slow, root) the validation experiments themselves on
smaller tensors, one repeat and two algorithms, so that each takes well under a
minute."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from experiments.allreduce_net import need_root
from experiments.sweep import build_sweep, read_experiment_file

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
START = README.index("**At scale, on any topology.**")
PART = README[START:README.index("**Fidelity.**", START)]
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```$", PART, re.S | re.M)
COMMANDS = [line for lang, text in BLOCKS if not lang for line in text.strip().splitlines()]
VALIDATION = ROOT / "experiments" / "model-validation"


def run(command: str, *extra: str, replace: tuple[str, str] = ("", "")
        ) -> subprocess.CompletedProcess[str]:
    if replace[0]:
        command = command.replace(*replace)
    argv = command.replace(".venv/bin/", f"{ROOT}/.venv/bin/").removeprefix("sudo ").split()
    return subprocess.run([*argv, *extra], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def one(part: str) -> str:
    [command] = [c for c in COMMANDS if part in c]
    return command


def test_the_topologies_at_scale() -> None:
    proc = run(one("--topo fattree,16"))
    assert proc.returncode == 0, proc.stderr
    blocks = proc.stdout.split("\n\n")
    assert blocks[0].startswith("fattree,16: 320 switches, the in-network tree 3 links deep")
    assert blocks[1].startswith("star,1024: 1 switches, the in-network tree 1 links deep")
    speedups = re.findall(r"in-network over ring: (\S+)", proc.stdout)
    quoted = re.search(r"add 0\.2 s of latency on a star and 0\.6 s in the\s+fat-tree to "
                       r"the (\S+) s its bytes take: (\S+) and (\S+) times", PART)
    assert quoted, "the text quotes the speedups"
    assert speedups == [quoted.group(3), quoted.group(2)]
    ina = re.search(r"^ina\s+(\S+)", blocks[1], re.M)
    assert ina and f"({float(ina.group(1)):.2f} s for 4 MB" in PART
    sharded = re.search(r"^ps-sharded\s+(\S+)", blocks[1], re.M)  # the bytes, 2 steps
    assert sharded and f"{float(sharded.group(1)):.1f}" == quoted.group(1)
    hd = re.search(r"^hd\s+(\S+)", blocks[0], re.M)
    assert hd and f"takes {float(hd.group(1)):.0f} s in `fattree,16`" in " ".join(PART.split())


def test_the_validation_experiments_are_the_ones_shown() -> None:
    shown = [c.split()[-1] for c in COMMANDS if " run " in c]
    assert shown == [f"experiments/model-validation/{t}.toml"
                     for t in ("star", "leafspine", "fattree")]
    assert sorted(p.name for p in VALIDATION.glob("*.toml")) == sorted(
        Path(s).name for s in shown)
    for path in shown:
        sweep = build_sweep(read_experiment_file(ROOT / path), name="validation")
        assert {p.options.algo for p in sweep.points()} == {"ina", "ring", "ps",
                                                            "ps-sharded", "hd"}
        assert all(p.options.check and p.options.bw for p in sweep.points())


def test_the_validation_table_is_the_commands() -> None:
    proc = run(one("--validate"))
    assert proc.returncode == 0, proc.stderr
    table = [line for line in proc.stdout.splitlines() if line.startswith("|")]
    assert table and "\n".join(table) in PART
    verdict = proc.stdout.strip().splitlines()[-1]
    assert verdict in " ".join(PART.split()), verdict


def test_the_figure(tmp_path: Path) -> None:
    proc = run(one("--plot docs/model"), replace=("--plot docs/model", f"--plot {tmp_path}"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "speedup_vs_workers.png").stat().st_size > 10_000
    svg = (tmp_path / "speedup_vs_workers.svg").read_text()
    for label in ("model, star", "model, fattree", "emulated, star", "emulated, leafspine",
                  "emulated, fattree"):
        assert label in svg
    assert "![" in PART and "docs/model/speedup_vs_workers.png" in PART


@pytest.mark.slow
@pytest.mark.parametrize("name", ["star", "leafspine", "fattree"])
def test_the_validation_experiments_run(name: str, tmp_path: Path) -> None:
    why = need_root()
    if why:
        pytest.skip(why)
    proc = run(one(f"model-validation/{name}.toml"), "--size", "1e4", "--repeat", "1",
               "--algo", "ina,ring", "--runs-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [results] = tmp_path.glob("*/results.json")
    doc = json.loads(results.read_text())
    assert doc["measurements"] and all(m["ok"] and m["check"]["ok"]
                                       for m in doc["measurements"])
