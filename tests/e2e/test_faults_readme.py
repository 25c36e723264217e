"""The README's "Faults" section runs as written: its ``ina run`` commands, the run of
two jobs through the failed link (``experiments/faults-jobs.toml``), the experiment
file it shows (``experiments/faults.toml``), the ``fault`` command at the ``mininet>``
prompt, and ``ina recovery`` with ``--publish`` (one short scenario, into a copy of the
README). Only names change: runs go to a temporary ``--runs-dir``."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from fault_checks import (
    controller_replaced,
    each_job_recovered,
    link_of_the_tree_went_down,
    switch_restarted,
)
from readme_sections import README, blocks, section

from experiments.allreduce_net import need_root

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("Faults: detection, recovery, fallback and controller restarts")
(RUN_BLOCK, OUTPUT_BLOCK, JOBS_RUN_BLOCK, JOBS_OUTPUT_BLOCK, TOML_BLOCK,
 PROMPT_BLOCK) = blocks(SECTION)
FAULT_LINE = re.compile(r"^  fault (.+?): injected at [\d.]+ s; detected [\d.]+ s later "
                        r"\((probes|its P4Runtime stream ended)\)", re.M)


@pytest.fixture(autouse=True)
def root() -> None:
    why = need_root()
    if why:
        pytest.skip(why)


def _argv(command: str) -> list[str]:
    import shlex

    argv = shlex.split(command.replace(".venv/bin/", f"{ROOT}/.venv/bin/"))
    return argv[1:] if argv[0] == "sudo" else argv


@pytest.mark.parametrize("command", RUN_BLOCK.strip().splitlines())
def test_ina_run_commands(command: str, tmp_path: Path) -> None:
    argv = _argv(command) + ["--runs-dir", str(tmp_path / "runs")]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [results] = (tmp_path / "runs").glob("*/results.json")
    measurements = json.loads(results.read_text())["measurements"]
    for m in measurements:
        assert m["ok"] and m["check"]["ok"], m["errors"]
        assert m["faults"] and all(f["error"] is None for f in m["faults"])
    # the scenarios test_faults_e2e.py runs on BMv2 only, checked the same way here
    if '"link s1-s3 down at 1s"' in command:
        link_of_the_tree_went_down(measurements[0], "builtin")
    elif '"switch s1 restart at 1s"' in command:
        switch_restarted(measurements[0])
    elif '"controller restart at 1s"' in command:
        controller_replaced(measurements)
    if "--fault" in command and "controller" not in command:
        assert FAULT_LINE.search(proc.stdout), proc.stdout
        assert "check PASSED: bit-identical on every worker" in proc.stdout


def test_the_output_shown_is_what_ina_run_prints() -> None:
    first, check = OUTPUT_BLOCK.strip("\n").splitlines()
    assert FAULT_LINE.match(first)
    assert re.search(r"the job moved again [\d.]+ s after the detection, on a tree rooted "
                     r"at s4, \d+ chunks resent$", first)
    assert check.startswith("  check PASSED: bit-identical on every worker")


def test_two_jobs_through_the_failed_link(tmp_path: Path) -> None:
    """Both jobs recover, each on its own, exact; ``ina run`` prints each job's fault
    under it, as the README shows."""
    [command] = JOBS_RUN_BLOCK.strip().splitlines()
    proc = subprocess.run(_argv(command) + ["--runs-dir", str(tmp_path / "runs")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [results] = (tmp_path / "runs").glob("*/results.json")
    [m] = json.loads(results.read_text())["measurements"]
    each_job_recovered(m, [1, 2])
    shown = JOBS_OUTPUT_BLOCK.strip("\n").splitlines()
    printed = proc.stdout.splitlines()
    for line in shown:
        if line.startswith("  job "):  # the job's head, as printed (figures aside)
            head = line.split(": ")[0]
            at = next(n for n, p in enumerate(printed) if p.startswith(head + ": "))
            assert FAULT_LINE.match(printed[at + 1].removeprefix("  ")), printed
            assert "on a tree rooted at s4" in printed[at + 1]
        else:
            assert FAULT_LINE.match(line.removeprefix("  ")), line


def test_the_experiment_file_is_the_one_shown() -> None:
    assert (ROOT / "experiments" / "faults.toml").read_text() == TOML_BLOCK


def test_the_fault_command_at_the_prompt(tmp_path: Path) -> None:
    [start, *prompt] = PROMPT_BLOCK.strip().splitlines()
    lines = [line.removeprefix("mininet> ") for line in prompt]
    # give the controller time to see the link go down before the ping and the listing
    script = [lines[0], "sh sleep 1", *lines[1:], "exit"]
    proc = subprocess.run(_argv(start) + ["--runs-dir", str(tmp_path)], cwd=ROOT,
                          input="\n".join(script) + "\n", capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"link s1-s3 down at [\d.]+ s \(took", proc.stdout), proc.stdout
    # Mininet's CLI writes what a host's command printed to stderr
    assert re.search(r"3 packets transmitted, [123] received", proc.stderr), proc.stderr
    assert re.search(r"[\d.]+ s  fault link s1-s3 down\n", proc.stdout)
    assert re.search(r"[\d.]+ s  down link s1-s3: probes", proc.stdout), proc.stdout


def test_ina_recovery_publishes_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    from experiments import recovery

    assert "`sudo .venv/bin/ina recovery`" in SECTION
    assert "`--publish docs/faults`" in SECTION
    assert recovery.BEGIN in README and recovery.END in README
    monkeypatch.setattr(recovery, "SCENARIOS", [
        recovery.Scenario("a link of the job's tree", "leafspine,2,2,2",
                          "link s1-s3 down at 0.5s", size=200_000)])
    readme = tmp_path / "README.md"
    readme.write_text(README)
    monkeypatch.setattr(recovery, "README", readme)
    status = recovery.run_recovery(["builtin"], str(tmp_path / "runs"),
                                   publish=str(tmp_path / "docs"))
    assert status == 0
    assert (ROOT / "README.md").read_text() == README  # only the copy changed
    text = readme.read_text()
    block = text[text.index(recovery.BEGIN):text.index(recovery.END)]
    [row] = [line for line in block.splitlines() if line.startswith("| a link")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:4] == ["a link of the job's tree",
                         "leafspine,2,2,2: link s1-s3 down at 0.5s", "builtin", "2e5"]
    assert cells[5] == "probes" and cells[8] == "ina, root s4" and cells[11] == "exact"
    assert (tmp_path / "docs" / "timeline.png").stat().st_size > 0
    assert "](docs/timeline.png)" in block
