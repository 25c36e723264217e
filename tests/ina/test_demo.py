"""``ina demo``: the comparison it runs (slow, root), and the README's demo block, which
must be what ``docs/demo/results.json`` renders to."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from experiments.results import load_results
from ina.demo import BEGIN, END, FIGURE, publish_demo, readme_block, replace_block

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PUBLISHED = ROOT / "docs" / "demo"


def measurement(index: int, algo: str, size: int, seconds: float | None) -> dict[str, Any]:
    return {"index": index, "ok": seconds is not None, "completion_s": seconds,
            "point": {"topo": "star,4", "algo": algo, "size": size, "bw": 10.0, "loss": 0.0,
                      "repeat": 0},
            "workers_count": 4, "errors": [] if seconds else ["h1: exit status 1: boom"],
            "model": {"seconds": 1.0, "bytes_sent_per_host": 6.0, "wire_bytes_sent_per_host":
                      7.0},
            "bytes_sent_per_host": 6.0, "wire_bytes_sent_per_host": 7.0, "cpu_bound": False}


DOC = {"version": 2, "time": "2026-01-02T03:04:05+0000", "git_revision": "0123456789abcdef",
       "machine": {"cpus": 2, "cpu_model": "Test CPU"}, "measurements": [
           measurement(0, "ina", 1_000_000, 2.0), measurement(1, "ring", 1_000_000, 3.0),
           measurement(2, "ps", 1_000_000, None)]}


def test_readme_block() -> None:
    block = readme_block(DOC, "docs/demo/time_vs_size.png")
    assert block.startswith(BEGIN + "\nMeasured by `ina demo` on 2 cores (Test CPU), git "
                            "0123456789ab, 2026-01-02; a star of 4 hosts, 10 Mbit/s links:")
    assert "| algo | size (B) | count | time (s) | algbw (Mbit/s) | busbw (Mbit/s) |" in block
    assert "| ina | 4000000 | 1000000 | 2.0000 | 16.00 | 24.00 | 1.0000 | 2.00 |  |" in block
    assert "| ps | 4000000 | 1000000 | - |" in block and "1 failed: h1: exit status 1" in block
    assert "| 4000000 | 1.50 | 1.00 | 1.50 | 1.50 |  |" in block  # ina over ring
    assert block.endswith("![Completion time against tensor size, measured and modelled]"
                          "(docs/demo/time_vs_size.png)\n" + END)


def test_replace_block() -> None:
    text = f"intro\n{BEGIN}\nold\n{END}\nrest\n"
    assert replace_block(text, f"{BEGIN}\nnew\n{END}") == f"intro\n{BEGIN}\nnew\n{END}\nrest\n"
    with pytest.raises(ValueError, match="README.md has no <!-- demo:begin -->"):
        replace_block("no block", "x")


def test_publish_copies_and_rewrites_the_readme(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "plots").mkdir(parents=True)
    (run / "results.json").write_text(json.dumps(DOC))
    (run / "plots" / FIGURE).write_bytes(b"\x89PNG fake")
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{BEGIN}\n{END}\n\nafter\n")
    publish_demo(run, tmp_path / "docs" / "demo", readme)
    assert (tmp_path / "docs" / "demo" / FIGURE).read_bytes() == b"\x89PNG fake"
    text = readme.read_text()
    assert text.startswith("# x\n\n" + readme_block(DOC, "docs/demo/time_vs_size.png"))
    assert text.endswith(f"{END}\n\nafter\n")


def test_readme_shows_the_published_demo() -> None:
    text = README.read_text()
    [block] = re.findall(re.escape(BEGIN) + ".*?" + re.escape(END), text, re.S)
    doc = load_results(PUBLISHED)
    assert block == readme_block(doc, f"docs/demo/{FIGURE}")
    import matplotlib.image

    png = matplotlib.image.imread(PUBLISHED / FIGURE)
    assert png.shape[0] > 300 and png.shape[1] > 400
    assert doc["sweep"]["axes"]["algo"] == ["ina", "ring", "ps"]
    assert "sudo .venv/bin/ina demo --publish docs/demo" in text
    proc = subprocess.run([sys.executable, "-m", "ina", "show", str(PUBLISHED)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "in-network over ring" in proc.stdout


@pytest.mark.slow
def test_demo_runs(tmp_path: Path) -> None:
    from experiments.allreduce_net import need_root

    why = need_root()
    if why:
        pytest.skip(f"ina demo starts a Mininet network: {why}")
    proc = subprocess.run([sys.executable, "-m", "ina", "demo"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for algo in ("ina", "ring", "ps"):
        for size in ("10000", "100000", "1000000"):
            row = next(line.split() for line in out.splitlines()
                       if line.split()[2:3] == [algo] and line.split()[4:5] == [size])
            assert row[12] == "1/1", row  # measured and checked
    assert "in-network over ring" in out
    [run_dir] = (tmp_path / "runs").glob("*-demo")
    assert f"figure: {run_dir}/plots/time_vs_size.png" in out
    doc = load_results(run_dir)
    assert len(doc["measurements"]) == 9
    assert all(m["ok"] and m["check"]["ok"] for m in doc["measurements"])
