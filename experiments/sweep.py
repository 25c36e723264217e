"""A sweep: every combination of the listed values of the axes, each ``repeat`` times.

``ina run --algo ina,ring --size 1e4,1e6 --topo star,4 --topo star,8 --repeat 3`` and
an experiment file (``experiments/speedup.toml``) both become a ``Sweep``; its
``points()`` come grouped by network (topology, link rate, switch target, K, routing
and the program's slots: what a running Mininet network fixes), so the runner starts
one network per group and only changes the switch ports' impairments between points.
Within a network the order is loss, size, repeat, algorithm: the algorithms of one
repeat run back to back, so a slow drift of the machine shows in every algorithm alike.

An experiment file is TOML with the flags of ``ina run`` as keys (without dashes,
``runs_dir`` for ``--runs-dir``), lists for the axes, plus ``repeat``, a free-text
``description`` and ``[[job]]`` tables for several jobs at once
(``experiments.job_tables``)::

    description = "in-network vs ring"
    topo = ["star,4", "star,8"]
    algo = ["ina", "ring"]
    size = [1e4, 1e5, 1e6]
    bw = 10
    repeat = 3
    check = true

Options given on the command line override the file's.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from experiments.job_tables import read_job_tables
from experiments.options import (
    AXES,
    FIELDS,
    PROGRAM_SLOTS,
    RunError,
    RunOptions,
    read_count,
    show_value,
)

MAX_REPEAT = 1000
FILE_ONLY_KEYS = ("repeat", "description")


@dataclass(frozen=True)
class Setting:
    """A value as given, and where, for error messages: ``--size`` or
    ``speedup.toml:4: size``."""

    raw: Any
    where: str


@dataclass(frozen=True)
class Point:
    """One measurement: the options, which repeat it is and its place in the sweep."""

    index: int
    options: RunOptions
    repeat: int = 0

    @property
    def network_key(self) -> tuple[Any, ...]:
        o = self.options
        # the program's slots (ina train's options have none: the program's default)
        return (o.topo, o.bw, o.target, o.k, o.routing, getattr(o, "slots", PROGRAM_SLOTS))

    @property
    def label(self) -> str:
        o = self.options
        bw = "unshaped" if o.bw is None else f"bw={o.bw:g}"
        text = f"{o.algo} {o.topo} size={compact_count(o.size)} {bw} loss={o.loss:g}"
        if len(o.jobs) > 1:
            text += f" jobs={len(o.jobs)}"
        return text + f" #{self.repeat + 1}"

    def to_json(self) -> dict[str, Any]:
        o = self.options
        return {"topo": o.topo, "algo": o.algo, "size": o.size, "bw": o.bw,
                "loss": o.loss, "repeat": self.repeat}


def network_label(key: tuple[Any, ...]) -> str:
    topo, bw, target, k, routing, slots = key
    rate = "unshaped" if bw is None else f"{bw:g} Mbit/s"
    label = f"{topo}, {rate}, {target} switch, K={k}"
    if slots != PROGRAM_SLOTS:
        label += f", {slots} slots"
    return label if routing == "ecmp" else f"{label}, one shortest path per host"


def compact_count(n: int) -> str:
    """``1000000`` as ``1e6``, ``30000`` as ``3e4``; other numbers as they are."""
    if n >= 10_000:
        digits = str(n).rstrip("0")
        if len(digits) == 1:
            return f"{digits}e{len(str(n)) - 1}"
    return str(n)


@dataclass(frozen=True)
class Sweep:
    base: RunOptions = field(default_factory=RunOptions)
    axes: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    repeat: int = 1
    name: str = "run"
    description: str = ""
    kind: ClassVar[str] = "allreduce"  # the results document's kind (ina train: train)

    def needs_network(self) -> bool:
        """Whether some point runs in Mininet (every point of ``ina run`` does)."""
        return True

    def values(self, axis: str) -> tuple[Any, ...]:
        return self.axes.get(axis) or (getattr(self.base, axis),)

    def points(self) -> list[Point]:
        """Every combination, grouped by network (see the module docstring)."""
        out: list[Point] = []
        for topo in self.values("topo"):
            for bw in self.values("bw"):
                for loss in self.values("loss"):
                    for size in self.values("size"):
                        for rep in range(self.repeat):
                            for algo in self.values("algo"):
                                options = replace(self.base, topo=topo, bw=bw, loss=loss,
                                                  size=size, algo=algo,
                                                  window=self.base.job_window)
                                out.append(Point(len(out), options, rep))
        return out

    def validate(self) -> None:
        """Raise ``RunError`` for the first point whose options do not combine."""
        for p in self.points():
            problem = p.options.cross_check()
            if problem:
                raise RunError(problem)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "repeat": self.repeat,
                "axes": {a: list(self.values(a)) for a in AXES},
                "options": asdict(self.base)}


def build_sweep(settings: dict[str, Setting], name: str = "run") -> Sweep:
    """The sweep the settings describe (keys: option attributes, ``repeat`` and
    ``description``); ``RunError`` naming where a bad value came from."""
    scalars: dict[str, Any] = {}
    axes: dict[str, tuple[Any, ...]] = {}
    for attr, f in FIELDS.items():
        s = settings.get(attr)
        if s is None:
            continue
        if f.axis:
            items = s.raw if isinstance(s.raw, list) else [s.raw]
            if not items:
                raise RunError(f"{s.where}: the list is empty")
            values = [f.parse(item, s.where) for item in items]
            axes[attr] = tuple(dict.fromkeys(values))
        elif f.repeated:
            items = s.raw if isinstance(s.raw, list) else [s.raw]
            scalars[attr] = tuple(f.parse(item, s.where) for item in items)
        else:
            if isinstance(s.raw, list):
                raise RunError(f"{s.where}: takes one value, not a list")
            scalars[attr] = f.parse(s.raw, s.where)
    repeat = 1
    if "repeat" in settings:
        s = settings["repeat"]
        try:
            repeat = read_count(s.raw)
        except ValueError as e:
            raise RunError(f"{s.where} {show_value(s.raw)}: {e}") from None
        if not 1 <= repeat <= MAX_REPEAT:
            raise RunError(f"{s.where} {repeat}: must be in [1, {MAX_REPEAT}]")
    description = ""
    if "description" in settings:
        s = settings["description"]
        if not isinstance(s.raw, str):
            raise RunError(f"{s.where}: expected a string")
        description = s.raw
    sweep = Sweep(RunOptions(**scalars), axes, repeat, name, description)
    sweep.validate()
    return sweep


# ----------------------------------------------------------- experiment files


def file_keys() -> list[str]:
    return sorted([f.key for f in FIELDS.values()] + list(FILE_ONLY_KEYS)) + ["[[job]]"]


def line_of(lines: list[str], key: str, start: int = 0) -> int | None:
    """The line number of ``key`` (a key or a table header) in a TOML file, from line
    ``start + 1`` on."""
    pattern = re.compile(rf"""^\s*(\[+\s*)?(["']?){re.escape(key)}\2\s*[=\]]""")
    for number, line in enumerate(lines[start:], start + 1):
        if pattern.match(line):
            return number
    return None


def read_experiment_file(path: str | Path) -> dict[str, Setting]:
    """The settings of an experiment file; ``RunError`` with the file and line of the
    first problem."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise RunError(f"{path}: cannot read the experiment file: {e.strerror or e}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RunError(f"{path}: not valid TOML: {e}") from None
    lines = text.splitlines()
    by_key = {f.key: attr for attr, f in FIELDS.items()}
    settings: dict[str, Setting] = {}
    for key, value in doc.items():
        line = line_of(lines, key)
        where = f"{path}:{line}: {key}" if line else f"{path}: {key}"
        if key == "job":
            if "jobs" in doc:
                raise RunError(f"{where}: [[job]] tables and jobs = "
                               f"{show_value(doc['jobs'])}: give one of them")
            jobs = read_job_tables(value, path, lines,
                                   lambda key, start: line_of(lines, key, start))
            settings["jobs"] = Setting(jobs, f"{path}:{line}: [[job]]")
            continue
        if key == "train" and isinstance(value, dict | list):
            raise RunError(f"{where}: a [train] section makes this an experiment file of "
                           f"'ina train', not of 'ina run'")
        if isinstance(value, dict):
            raise RunError(f"{where}: a table is not an option (the file is a flat list "
                           f"of options: {', '.join(file_keys())})")
        if key not in by_key and key not in FILE_ONLY_KEYS:
            raise RunError(f"{where}: unknown key (keys: {', '.join(file_keys())})")
        settings[by_key.get(key, key)] = Setting(value, where)
    return settings
