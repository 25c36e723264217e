"""Several jobs at once: ``--jobs``, ``--slots``, ``--on-full``, ``--fallback`` and an
experiment file's ``[[job]]`` tables, their jobs, and their errors (which name the
option, or the file and line)."""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import pytest

from controller.jobs import DEFAULT_TOTAL_SLOTS
from experiments.cli import _settings, add_experiment_parsers
from experiments.jobspec import JobEntry
from experiments.options import PROGRAM_SLOTS, RunError, RunOptions
from experiments.sweep import Sweep, build_sweep, network_label, read_experiment_file


def parse(*argv: str) -> Sweep:
    parser = argparse.ArgumentParser()
    add_experiment_parsers(parser.add_subparsers(dest="verb"))
    return build_sweep(_settings(parser.parse_args(["run", *argv])))


def specs(options: RunOptions, hosts: int) -> list[tuple[int, tuple[str, ...], str, int,
                                                         float, int]]:
    ids = itertools.count(7)
    return [(j.job_id, j.workers, j.algo, j.size, j.start, j.window)
            for j in options.job_specs(lambda: next(ids),
                                       [f"h{i}" for i in range(1, hosts + 1)])]


def test_the_program_slots_are_the_controllers_default() -> None:
    assert PROGRAM_SLOTS == DEFAULT_TOTAL_SLOTS


def test_one_job_of_every_host_by_default() -> None:
    [point] = parse().points()
    assert point.options.jobs == () and point.options.on_full == "refuse"
    assert specs(point.options, 4) == [(7, ("h1", "h2", "h3", "h4"), "ina", 100_000, 0.0, 64)]


@pytest.mark.parametrize(("topo", "hosts", "groups"), [
    ("star,4", 4, [("h1", "h2"), ("h3", "h4")]),
    ("star,5", 5, [("h1", "h2", "h3"), ("h4", "h5")]),
])
def test_jobs_n_splits_the_hosts_in_order(topo: str, hosts: int,
                                          groups: list[tuple[str, ...]]) -> None:
    [point] = parse("--topo", topo, "--jobs", "2", "--algo", "ring", "--size", "1e3").points()
    assert point.options.jobs == (JobEntry(), JobEntry())
    assert specs(point.options, hosts) == [(7, groups[0], "ring", 1000, 0.0, 64),
                                           (8, groups[1], "ring", 1000, 0.0, 64)]
    assert point.label == f"ring {topo} size=1000 unshaped loss=0 jobs=2 #1"


def test_slots_are_part_of_the_network() -> None:
    [point] = parse("--slots", "16", "--window", "12", "--on-full", "shrink").points()
    assert point.network_key == ("star,4", None, "builtin", 64, "ecmp", 16)
    assert network_label(point.network_key) == ("star,4, unshaped, builtin switch, K=64, "
                                                "16 slots")
    assert point.options.on_full == "shrink"


@pytest.mark.parametrize(("argv", "message"), [
    (["--jobs", "0"], "--jobs 0: expected a number of jobs, at least 1"),
    (["--jobs", "two"], "--jobs two: expected a whole number (like 1000 or 1e6)"),
    (["--jobs", "5"], "--jobs 5: star,4 has 4 hosts for 5 jobs"),
    (["--on-full", "wait"], "--on-full wait: not one of refuse, shrink, fallback"),
    (["--fallback", "ina"], "--fallback ina: not a host-based algorithm (hd, ps, "
                            "ps-sharded, ring) or none"),
    (["--slots", "0"], "--slots 0: must be in [1, 65536]"),
    (["--window", "300"], "--window 300: must be in [1, 256] (and at most --slots)"),
    (["--slots", "16"], "--window 64: more than the program's 16 slots (--slots)"),
    (["--jobs", "2", "--cli"], "--cli sets up one job, and --jobs makes 2"),
])
def test_bad_options_name_the_option(argv: list[str], message: str) -> None:
    with pytest.raises(RunError) as raised:
        parse(*argv)
    assert str(raised.value) == message


# ------------------------------------------------------------------- [[job]] tables

FILE = """description = "two jobs"
topo = "star,5"
size = 1e4
slots = 16
window = 12

[[job]]
hosts = ["h1", "h2"]
start = 0.5

[[job]]
algo = "ring"
size = 2e4

[[job]]
hosts = "h5"
window = 4
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


def test_job_tables(tmp_path: Path) -> None:
    path = write(tmp_path, FILE)
    sweep = build_sweep(read_experiment_file(path))
    [point] = sweep.points()
    jobs = point.options.jobs
    assert [(e.hosts, e.algo, e.size, e.start, e.window) for e in jobs] == [
        (("h1", "h2"), None, None, 0.5, None),
        (None, "ring", 20_000, 0.0, None),
        (("h5",), None, None, 0.0, 4)]
    assert [e.where for e in jobs] == [f"{path}:7: job 1", f"{path}:11: job 2",
                                       f"{path}:15: job 3"]
    # the job without hosts gets the ones the others do not name
    assert specs(point.options, 5) == [(7, ("h1", "h2"), "ina", 10_000, 0.5, 12),
                                       (8, ("h3", "h4"), "ring", 20_000, 0.0, 12),
                                       (9, ("h5",), "ina", 10_000, 0.0, 4)]
    assert sweep.to_json()["options"]["jobs"][2]["hosts"] == ("h5",)


def test_the_command_line_overrides_the_tables(tmp_path: Path) -> None:
    [point] = parse(str(write(tmp_path, FILE)), "--jobs", "1").points()
    assert point.options.jobs == (JobEntry(),)
    assert specs(point.options, 5)[0][1] == ("h1", "h2", "h3", "h4", "h5")


def test_jobs_count_in_a_file(tmp_path: Path) -> None:
    [point] = build_sweep(read_experiment_file(write(tmp_path, "jobs = 3\n"))).points()
    assert len(point.options.jobs) == 3


JOB = '[[job]]\nhosts = ["h1"]\n'


@pytest.mark.parametrize(("text", "message"), [
    (JOB + '\n[[job]]\nhost = ["h2"]\n',
     "exp.toml:5: job 2: host: unknown key (keys of a [[job]] table: hosts, algo, size, "
     "window, start)"),
    (JOB + '[[job]]\nhosts = ["h2"]\nalgo = "nccl"\n',
     "exp.toml:5: job 2: algo nccl: unknown algorithm (algorithms: "),
    (JOB + '[[job]]\nhosts = ["h2"]\nsize = 0\n',
     "exp.toml:5: job 2: size 0: must be in [1, 268435456]"),
    (JOB + '[[job]]\n\nstart = -1\n',
     "exp.toml:5: job 2: start -1: must be in [0, 3600] seconds"),
    (JOB + '[[job]]\nstart = "soon"\n',
     "exp.toml:4: job 2: start soon: expected a number (seconds)"),
    ('[[job]]\nhosts = ["h1", "x2"]\n', "exp.toml:2: job 1: hosts x2: not a host name"),
    ('[[job]]\nhosts = ["h1", "h1"]\n', "exp.toml:2: job 1: hosts h1: listed twice"),
    ('[[job]]\nhosts = []\n', "exp.toml:2: job 1: hosts: expected at least one host"),
    ('[[job]]\nhosts = 3\n', "exp.toml:2: job 1: hosts 3: expected a list of hosts"),
    ('[job]\nhosts = ["h1"]\n', "exp.toml:1: job: one [job] table; the jobs are [[job]] "
                                "tables, one per job"),
    ("job = 2\n", "exp.toml:1: job: expected [[job]] tables, one per job"),
    ("job = []\n", "exp.toml:1: job: the list of jobs is empty"),
    ("jobs = 2\n" + JOB, "exp.toml:2: job: [[job]] tables and jobs = 2: give one of them"),
    # what needs the topology: the line of the job's table
    ('topo = "star,4"\n' + JOB + '\n[[job]]\nhosts = ["h9"]\n',
     "exp.toml:5: job 2: hosts: h9 is not a host of star,4 (hosts: h1, h2, h3, h4)"),
    (JOB + '[[job]]\nhosts = "h2,h1"\n',
     "exp.toml:3: job 2: hosts: h1 is in job 1 already (a host runs one job's agent)"),
    ('slots = 16\nwindow = 8\n' + JOB + '[[job]]\nwindow = 32\n',
     "exp.toml:5: job 2: window 32: more than the program's 16 slots (--slots)"),
    ('topo = "star,2"\n' + '[[job]]\nhosts = "h1,h2"\n[[job]]\nwindow = 8\n',
     "exp.toml:4: job 2: star,2 has 0 hosts for 1 jobs (besides the 2 named)"),
])
def test_bad_job_tables_name_the_file_and_line(tmp_path: Path, text: str,
                                               message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(RunError) as raised:
        build_sweep(read_experiment_file(path))
    assert str(raised.value).startswith(f"{tmp_path}/{message}"), str(raised.value)


def test_inline_job_tables_name_the_line_of_the_key(tmp_path: Path) -> None:
    path = write(tmp_path, 'size = 1e3\njob = [{hosts = ["h1"]}, {hosts = ["h1"]}]\n')
    with pytest.raises(RunError, match=r"exp.toml:2: job 2: hosts: h1 is in job 1 already"):
        build_sweep(read_experiment_file(path))
