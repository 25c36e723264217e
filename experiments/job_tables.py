"""An experiment file's ``[[job]]`` tables: several jobs at once in every measurement.

    [[job]]
    hosts = ["h1", "h2"]
    window = 12

    [[job]]
    hosts = "h3,h4"
    start = 0.5

Each table is one job (``experiments.jobspec.JobEntry``): its ``hosts`` (a list, or
one comma-separated string; without them, an equal share of the hosts that no table
names), and where it differs from the file's options: ``algo``, ``size``, ``window``,
and ``start``, its start in seconds after the first job's (default 0). A bad table,
key or value is an error that names the file and the line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.jobspec import JobEntry
from experiments.options import FIELDS, MAX_START, RunError, read_number, show_value

JOB_KEYS = ("hosts", "algo", "size", "window", "start")
HEADER = re.compile(r"""^\s*\[\[\s*(["']?)job\1\s*\]\]""")

LineOf = Callable[[str, int], "int | None"]
"""The line number of a key (or a table header) in the file, from a line on
(``experiments.sweep.line_of`` on the file's lines)."""


def read_job_tables(tables: Any, path: Path, lines: list[str], line_of: LineOf
                    ) -> tuple[JobEntry, ...]:
    """The jobs of the file's ``job`` array of tables; ``RunError`` naming the file and
    line of the first problem."""
    key_line = line_of("job", 0)
    if isinstance(tables, dict):
        raise RunError(f"{path}:{key_line}: job: one [job] table; the jobs are [[job]] "
                       f"tables, one per job (keys: {', '.join(JOB_KEYS)})")
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise RunError(f"{path}:{key_line}: job: expected [[job]] tables, one per job "
                       f"(keys: {', '.join(JOB_KEYS)})")
    if not tables:
        raise RunError(f"{path}:{key_line}: job: the list of jobs is empty")
    headers = [n for n, line in enumerate(lines, 1) if HEADER.match(line)]
    inline = len(headers) != len(tables)  # job = [{...}, {...}]: one line for all
    out = []
    for number, table in enumerate(tables, 1):
        header = None if inline else headers[number - 1]
        where = _places(path, number, header or key_line, line_of if header else None)
        out.append(_read_table(table, where, f"{path}:{header or key_line}: job {number}"))
    return tuple(out)


def _places(path: Path, number: int, first: int | None, line_of: LineOf | None
            ) -> Callable[[str], str]:
    """Where a key of job ``number``'s table is, for errors: its own line when
    ``line_of`` finds it after the table's first line, else that first line."""
    def where(key: str) -> str:
        line = line_of(key, first) if line_of is not None and first else None
        return f"{path}:{line or first}: job {number}: {key}"
    return where


def _read_table(table: dict[str, Any], where: Callable[[str], str], origin: str
                ) -> JobEntry:
    values: dict[str, Any] = {"where": origin}
    for key, raw in table.items():
        if key not in JOB_KEYS:
            raise RunError(f"{where(key)}: unknown key (keys of a [[job]] table: "
                           f"{', '.join(JOB_KEYS)})")
        if key == "hosts":
            values[key] = _read_hosts(raw, where(key))
        elif key == "start":
            values[key] = _read_start(raw, where(key))
        else:
            values[key] = FIELDS[key].parse(raw, where(key))
    return JobEntry(**values)


def _read_hosts(raw: Any, where: str) -> tuple[str, ...]:
    items = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(items, list) or not all(isinstance(h, str) for h in items):
        raise RunError(f"{where} {show_value(raw)}: expected a list of hosts "
                       f"(\"h1\", \"h2\", ...) or one string \"h1,h2\"")
    hosts = [h.strip() for h in items if h.strip()]
    if not hosts:
        raise RunError(f"{where}: expected at least one host")
    for h in hosts:
        if not (h[:1] == "h" and h[1:].isdigit()):
            raise RunError(f"{where} {h}: not a host name (h1, h2, ...)")
        if hosts.count(h) > 1:
            raise RunError(f"{where} {h}: listed twice")
    return tuple(hosts)


def _read_start(raw: Any, where: str) -> float:
    try:
        start = read_number(raw)
    except ValueError as e:
        raise RunError(f"{where} {show_value(raw)}: {e} (seconds)") from None
    if not (math.isfinite(start) and 0 <= start <= MAX_START):
        raise RunError(f"{where} {show_value(start)}: must be in [0, {MAX_START:g}] seconds")
    return start
