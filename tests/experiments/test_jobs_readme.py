"""The README's "Several jobs at once" section without running anything: its measured
tables are what ``ina show`` prints for the runs kept in ``docs/jobs/`` (the slow
end-to-end module ``tests/e2e/test_jobs_e2e.py`` runs its commands), and the figures
it shows are there."""

from __future__ import annotations

import re
from pathlib import Path

from readme_sections import section

from experiments.results import load_results
from experiments.show import format_run

ROOT = Path(__file__).resolve().parents[2]
SECTION = section("Several jobs at once: shared switch memory")


def tables() -> list[list[str]]:
    """The section's Markdown tables, each a list of its lines."""
    out: list[list[str]] = []
    last = False
    for line in SECTION.splitlines():
        if line.startswith("| "):
            if not last:
                out.append([])
            out[-1].append(line)
        last = line.startswith("| ")
    return out


def show_lines(run: str) -> list[str]:
    doc = load_results(ROOT / "docs" / "jobs" / run / "results.json")
    return [line for line in format_run(doc, markdown=True).splitlines()
            if line.startswith("| ")]


def test_the_measured_table_is_what_ina_show_prints_for_the_kept_runs() -> None:
    header, _, *rows = tables()[0]
    expected = []
    for policy in ("shrink", "fallback"):
        doc = load_results(ROOT / "docs" / "jobs" / policy / "results.json")
        assert doc["measurements"][0]["options"]["on_full"] == policy
        lines = show_lines(policy)
        assert header.split("|")[2:] == lines[0].split("|")[2:]
        expected += [f"| {policy} |" + line.split("|", 2)[2] for line in lines[2:]]
    assert rows == expected


def test_the_shared_link_table_is_what_ina_show_prints_for_its_run() -> None:
    """The run of ``experiments/two-jobs-shared.toml`` kept in ``docs/jobs/shared``."""
    assert tables()[1] == show_lines("shared")
    doc = load_results(ROOT / "docs" / "jobs" / "shared" / "results.json")
    [m] = doc["measurements"]
    assert m["options"]["topo"] == "leafspine,2,1,2"
    assert [j["hosts"] for j in m["jobs"]] == [["h1", "h3"], ["h2", "h4"]]


def test_the_figures_are_there() -> None:
    figures = re.findall(r"\]\((docs/jobs/[^)]+\.png)\)", SECTION)
    assert len(figures) == 2
    for figure in figures:
        assert (ROOT / figure).stat().st_size > 10_000
