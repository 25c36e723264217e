"""Sweeps: list options, their expansion into points grouped by network, and
experiment files with positioned errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.cli import _settings, add_experiment_parsers
from experiments.options import RunError, RunOptions, read_count
from experiments.sweep import (
    Setting,
    Sweep,
    build_sweep,
    compact_count,
    network_label,
    read_experiment_file,
)

ROOT = Path(__file__).resolve().parents[2]


def parse(*argv: str) -> Sweep:
    import argparse

    parser = argparse.ArgumentParser()
    add_experiment_parsers(parser.add_subparsers(dest="verb"))
    return build_sweep(_settings(parser.parse_args(["run", *argv])))


def test_counts_take_scientific_notation() -> None:
    assert read_count("1e6") == 1_000_000
    assert read_count("100_000") == 100_000
    assert read_count(1e4) == 10_000
    assert read_count(" 42 ") == 42
    for bad in ("1.5", "1e-3", "ten", True, float("inf")):
        with pytest.raises(ValueError, match="whole number"):
            read_count(bad)


def test_every_combination_grouped_by_network() -> None:
    sweep = parse("--topo", "star,4", "--topo", "star,8", "--algo", "ina,ring",
                  "--size", "1e4,1e5", "--size", "1e6", "--bw", "10,20", "--loss", "0,0.01",
                  "--repeat", "3")
    points = sweep.points()
    assert len(points) == 2 * 2 * 3 * 2 * 2 * 3
    assert [p.index for p in points] == list(range(len(points)))
    keys = [p.network_key for p in points]
    # every network's points are consecutive: one Mininet network per group
    groups = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
    assert groups == [("star,4", 10.0, "builtin", 64, "ecmp", 256),
                      ("star,4", 20.0, "builtin", 64, "ecmp", 256),
                      ("star,8", 10.0, "builtin", 64, "ecmp", 256),
                      ("star,8", 20.0, "builtin", 64, "ecmp", 256)]
    first = points[:12]  # within a network: loss, size, repeat, then the algorithms
    assert [(p.options.loss, p.options.size, p.repeat, p.options.algo) for p in first[:4]] == [
        (0.0, 10_000, 0, "ina"), (0.0, 10_000, 0, "ring"),
        (0.0, 10_000, 1, "ina"), (0.0, 10_000, 1, "ring")]
    assert {p.options.size for p in points} == {10_000, 100_000, 1_000_000}
    assert points[0].label == "ina star,4 size=1e4 bw=10 loss=0 #1"


def test_routing_is_part_of_the_network() -> None:
    [point] = parse("--routing", "shortest").points()
    assert point.network_key == ("star,4", None, "builtin", 64, "shortest", 256)
    assert network_label(point.network_key) == ("star,4, unshaped, builtin switch, K=64, "
                                                "one shortest path per host")
    [point] = parse().points()
    assert network_label(point.network_key) == "star,4, unshaped, builtin switch, K=64"


def test_defaults_make_one_point() -> None:
    [point] = parse().points()
    assert point.options == RunOptions(window=64)  # the built-in switch's default window
    [point] = parse("--target", "bmv2").points()
    assert point.options.window == 16
    assert point.label == "ina star,4 size=1e5 unshaped loss=0 #1"


def test_scalars_reach_every_point_and_duplicates_collapse() -> None:
    sweep = parse("--algo", "ring,ring,ina", "--k", "256", "--check", "--bw", "none,10")
    points = sweep.points()
    assert [p.options.algo for p in points] == ["ring", "ina"] * 2
    assert [p.options.bw for p in points] == [None, None, 10.0, 10.0]
    assert all(p.options.k == 256 and p.options.check for p in points)


@pytest.mark.parametrize(("argv", "message"), [
    (["--size", "1e4,0"], "--size 0: must be in [1, 268435456]"),
    (["--size", "1e4,"], "--size : expected a whole number (like 1000 or 1e6)"),
    (["--bw", "10,fast"], "--bw fast: expected a number"),
    (["--loss", "0,1"], "--loss 1: must be in [0, 1)"),
    (["--repeat", "0"], "--repeat 0: must be in [1, 1000]"),
    (["--k", "100"], "--k 100: not one of 8, 16, 32, 64, 128, 256"),
    (["--routing", "ospf"], "--routing ospf: not one of ecmp, shortest"),
])
def test_bad_values_name_the_option(argv: list[str], message: str) -> None:
    with pytest.raises(RunError) as raised:
        parse(*argv)
    assert str(raised.value) == message


def test_compact_count() -> None:
    assert [compact_count(n) for n in (1, 999, 10_000, 30_000, 12_345, 10**6)] == [
        "1", "999", "1e4", "3e4", "12345", "1e6"]


# ------------------------------------------------------------ experiment files


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


def test_experiment_file(tmp_path: Path) -> None:
    path = write(tmp_path, """# a comment
description = "in-network vs ring"
topo = ["star,4", "star,8"]
algo = ["ina", "ring"]
size = [1e4, "1e5", 1000000]
bw = 10
loss = [0, 0.01]
repeat = 2
check = true
k = 256
runs_dir = "elsewhere"
""")
    sweep = build_sweep(read_experiment_file(path), name="exp")
    assert sweep.description == "in-network vs ring"
    assert sweep.axes["size"] == (10_000, 100_000, 1_000_000)
    assert sweep.axes["bw"] == (10.0,)
    assert sweep.repeat == 2
    assert sweep.base.check and sweep.base.k == 256 and sweep.base.runs_dir == "elsewhere"
    assert len(sweep.points()) == 2 * 2 * 3 * 2 * 2


def test_the_command_line_overrides_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'algo = ["ina", "ring"]\nsize = 1e6\nbw = 10\n')
    sweep = parse(str(path), "--size", "1e3", "--bw", "20")
    assert sweep.axes["algo"] == ("ina", "ring")
    assert sweep.axes["size"] == (1000,)
    assert sweep.axes["bw"] == (20.0,)


@pytest.mark.parametrize(("text", "message"), [
    ('algo = "ina"\nsizes = [1e4]\n', "exp.toml:2: sizes: unknown key (keys: algo, bw, "),
    ('algo = "ina"\n\nsize = [1e4, 0]\n', "exp.toml:3: size 0: must be in [1, 268435456]"),
    ('size = 1e4\nbw = "fast"\n', "exp.toml:2: bw fast: expected a number"),
    ("check = 1\n", "exp.toml:1: check 1: expected true or false"),
    ('k = [64, 256]\n', "exp.toml:1: k: takes one value, not a list"),
    ("algo = []\n", "exp.toml:1: algo: the list is empty"),
    ("repeat = 0\n", "exp.toml:1: repeat 0: must be in [1, 1000]"),
    ("[run]\nsize = 1\n", "exp.toml:1: run: a table is not an option"),
    ("size = [1e4\n", "exp.toml: not valid TOML: "),
    ('algo = ["ina", "nccl"]\n', "exp.toml:1: algo nccl: unknown algorithm (algorithms: "),
])
def test_file_errors_say_where(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(RunError) as raised:
        build_sweep(read_experiment_file(path))
    assert str(raised.value).startswith(f"{tmp_path}/{message}"), str(raised.value)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"nothere.toml: cannot read the experiment file: "
                                       r"No such file"):
        read_experiment_file(tmp_path / "nothere.toml")


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "experiments").glob("*.toml")
                                         if not p.name.startswith("train")),
                         ids=lambda p: p.name)
def test_shipped_experiment_files_parse(path: Path) -> None:
    sweep = build_sweep(read_experiment_file(path))
    assert sweep.points()


def test_settings_keep_their_origin() -> None:
    sweep = build_sweep({"size": Setting(["1e3", "2e3"], "--size")})
    assert sweep.axes == {"size": (1000, 2000)}
