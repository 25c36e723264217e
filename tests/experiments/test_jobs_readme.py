"""The README's "Several jobs at once" section without running anything: its measured
table is what ``ina show`` prints for the runs kept in ``docs/jobs/`` (the slow
end-to-end module ``tests/e2e/test_jobs_e2e.py`` runs its commands), and the figure
it shows is there."""

from __future__ import annotations

import re
from pathlib import Path

from experiments.results import load_results
from experiments.show import format_run

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
START = README.index("## Several jobs at once: shared switch memory\n")
SECTION = README[START:README.index("\n## ", START + 1)]


def test_the_measured_table_is_what_ina_show_prints_for_the_kept_runs() -> None:
    shown = [line for line in SECTION.splitlines() if line.startswith("| ")]
    header, _, *rows = shown
    expected = []
    for policy in ("shrink", "fallback"):
        doc = load_results(ROOT / "docs" / "jobs" / policy / "results.json")
        assert doc["measurements"][0]["options"]["on_full"] == policy
        lines = [line for line in format_run(doc, markdown=True).splitlines()
                 if line.startswith("| ")]
        assert header.split("|")[2:] == lines[0].split("|")[2:]
        expected += [f"| {policy} |" + line.split("|", 2)[2] for line in lines[2:]]
    assert rows == expected


def test_the_figure_is_there() -> None:
    [figure] = re.findall(r"\]\((docs/jobs/[^)]+\.png)\)", SECTION)
    assert (ROOT / figure).stat().st_size > 10_000
