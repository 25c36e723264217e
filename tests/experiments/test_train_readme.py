"""The README's "Training through the emulated network" section as written: its
commands parse (the root ones) or run (``--algo local``), its experiment file is the
shipped one, and ``ina show``/``ina plot`` read what ``ina train`` wrote."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from readme_sections import blocks, section

from experiments.train_cli import add_train_parser, command_line_settings
from experiments.train_sweep import build_train_sweep, read_train_file, train_sections
from ina.cli import main

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("Training through the emulated network (`ina train`)")
COMMANDS = [line.strip() for block in blocks(SECTION, "")
            for line in block.splitlines() if "bin/ina train" in line]


def test_the_section_has_its_commands() -> None:
    assert len(COMMANDS) == 4 and sum(c.startswith("sudo ") for c in COMMANDS) == 3


@pytest.mark.parametrize("command", COMMANDS)
def test_commands_parse(command: str) -> None:
    argv = command.removeprefix("sudo ").split()[2:]
    parser = argparse.ArgumentParser()
    add_train_parser(parser.add_subparsers(dest="verb"))
    args = parser.parse_args(["train", *[str(ROOT / a) if a.endswith(".toml") else a
                                         for a in argv]])
    tf = read_train_file(args.file) if args.file else None
    assert build_train_sweep(train_sections(tf, command_line_settings(args))).points()


def test_the_experiment_file_is_the_shipped_one() -> None:
    [toml] = blocks(SECTION, "toml")
    assert toml == (ROOT / "experiments" / "train-demo.toml").read_text()


def test_local_runs_without_root_and_show_reads_it(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    [local] = [c for c in COMMANDS if not c.startswith("sudo ")]
    assert main([*local.split()[1:], "--runs-dir", str(tmp_path)]) == 0
    [run_dir] = tmp_path.iterdir()
    ms = json.loads((run_dir / "results.json").read_text())["measurements"]
    assert [(m["point"]["seed"], m["ok"], len(m["steps"]["loss"])) for m in ms] == [
        (0, True, 40), (1, True, 40)]
    assert all(m["final_accuracy"] > 0.9 for m in ms)
    assert (run_dir / "plots" / "accuracy_vs_time.png").stat().st_size > 0
    capsys.readouterr()
    assert main(["show", str(run_dir)]) == 0
    assert "local" in capsys.readouterr().out
