"""The runs of ``ina train``: every combination of the listed values, from the command
line and experiment files.

An experiment file of ``ina train`` is TOML: the options it shares with ``ina run`` at
the top (``topo``, ``bw``, ``loss``, ``k``, ``check``, ...) and a ``[train]`` section
with what is trained (``model``, ``seeds``, ``steps``, ``lr``, ...; any option of
``ina train`` may go there). Several ``[[train]]`` sections make several groups of runs
in one run directory, each section's keys over the top's (the digits MLP with three
seeds and the wide model with one, say)::

    description = "time to accuracy, in-network vs ring"
    topo = "star,4"
    bw = 10
    algo = ["ina", "ring", "local"]

    [[train]]
    model = "mlp"
    seeds = [0, 1, 2]

    [[train]]
    model = "wide-mlp"
    steps = 12

Options on the command line override the file's, in every section. Within a group the
runs go by topology, link rate, loss, model, seed and algorithm (the algorithms of one
seed back to back); the groups' runs are then put together by network (topology, link
rate, switch, K, routing), so that one Mininet network serves every run that can share
it.
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from experiments.options import RunError
from experiments.sweep import Point, Setting, line_of
from experiments.train_options import TRAIN_AXES, TRAIN_FIELDS, TrainOptions

ORDER = ("topo", "bw", "loss", "model", "seed", "algo")
assert set(ORDER) == set(TRAIN_AXES)
SECTION = "train"
FILE_ONLY_KEYS = ("description",)


@dataclass(frozen=True)
class TrainPoint(Point):
    """One training run."""

    options: TrainOptions  # type: ignore[assignment]

    @property
    def label(self) -> str:
        return self.options.label()

    def to_json(self) -> dict[str, Any]:
        o = self.options
        return {"topo": o.topo, "algo": o.algo, "model": o.model, "dataset": o.dataset,
                "seed": o.seed, "bw": o.bw, "loss": o.loss}


@dataclass(frozen=True)
class TrainGroup:
    """The runs of one section: a base and the axes' values."""

    base: TrainOptions = field(default_factory=TrainOptions)
    axes: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def values(self, axis: str) -> tuple[Any, ...]:
        return self.axes.get(axis) or (getattr(self.base, axis),)

    def options(self) -> list[TrainOptions]:
        from dataclasses import replace

        combos = itertools.product(*(self.values(a) for a in ORDER))
        return [replace(self.base, **dict(zip(ORDER, c, strict=True))) for c in combos]


@dataclass(frozen=True)
class TrainSweep:
    groups: tuple[TrainGroup, ...] = (TrainGroup(),)
    name: str = "train"
    description: str = ""
    kind: ClassVar[str] = "train"

    @property
    def base(self) -> TrainOptions:
        return self.groups[0].base

    def points(self) -> list[Point]:
        """Every run, grouped by network (see the module docstring)."""
        runs = [o for g in self.groups for o in g.options()]
        keys: dict[tuple[Any, ...], int] = {}
        for o in runs:
            keys.setdefault((o.topo, o.bw, o.target, o.k, o.routing), len(keys))
        runs.sort(key=lambda o: keys[(o.topo, o.bw, o.target, o.k, o.routing)])
        return [TrainPoint(i, o) for i, o in enumerate(runs)]

    def validate(self) -> None:
        dirs = {g.base.runs_dir for g in self.groups}
        if len(dirs) > 1:
            raise RunError(f"runs_dir: one run directory for all sections, not "
                           f"{', '.join(sorted(dirs))}")
        for p in self.points():
            problem = p.options.cross_check()
            if problem:
                raise RunError(problem)

    def needs_network(self) -> bool:
        return any(p.options.algo != "local" for p in self.points())

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "kind": self.kind,
                "groups": [{"axes": {a: list(g.values(a)) for a in TRAIN_AXES},
                            "options": asdict(g.base)} for g in self.groups]}


def build_group(settings: dict[str, Setting]) -> TrainGroup:
    scalars: dict[str, Any] = {}
    axes: dict[str, tuple[Any, ...]] = {}
    for attr, f in TRAIN_FIELDS.items():
        s = settings.get(attr)
        if s is None:
            continue
        if f.axis:
            items = s.raw if isinstance(s.raw, list) else [s.raw]
            if not items:
                raise RunError(f"{s.where}: the list is empty")
            axes[attr] = tuple(dict.fromkeys(f.parse(item, s.where) for item in items))
        else:
            if isinstance(s.raw, list):
                raise RunError(f"{s.where}: takes one value, not a list")
            scalars[attr] = f.parse(s.raw, s.where)
    return TrainGroup(TrainOptions(**scalars), axes)


def build_train_sweep(sections: list[dict[str, Setting]], name: str = "train",
                      description: str = "") -> TrainSweep:
    """The sweep of the sections' settings (each: option attribute -> Setting)."""
    sweep = TrainSweep(tuple(build_group(s) for s in sections), name, description)
    sweep.validate()
    return sweep


# ----------------------------------------------------------- experiment files


def file_keys() -> list[str]:
    return sorted([f.key for f in TRAIN_FIELDS.values()] + list(FILE_ONLY_KEYS))


@dataclass
class TrainFile:
    top: dict[str, Setting]
    sections: list[dict[str, Setting]]
    description: str = ""


def read_train_file(path: str | Path) -> TrainFile:
    """The settings of an experiment file of ``ina train``; ``RunError`` with the file
    and line of the first problem."""
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
    first_table = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")
                        and "=" not in line.split("]")[0]), len(lines))
    by_key = {f.key: attr for attr, f in TRAIN_FIELDS.items()}

    def read_table(table: dict[str, Any], start: int, stop: int | None, where_section: str
                   ) -> dict[str, Setting]:
        out: dict[str, Setting] = {}
        scope = lines[:stop] if stop is not None else lines
        for key, value in table.items():
            line = line_of(scope, key, start) or line_of(lines, key, start)
            where = f"{path}:{line}: {where_section}{key}" if line else f"{path}: {key}"
            if key == SECTION and not where_section:
                continue
            if isinstance(value, dict):
                raise RunError(f"{where}: a table is not an option (sections: [train] or "
                               f"[[train]]; keys: {', '.join(file_keys())})")
            if key not in by_key and key not in FILE_ONLY_KEYS:
                raise RunError(f"{where}: unknown key (keys: {', '.join(file_keys())})")
            if key in FILE_ONLY_KEYS and where_section:
                raise RunError(f"{where}: belongs at the top of the file, not in a section")
            out[by_key.get(key, key)] = Setting(value, where)
        return out

    top = read_table(doc, 0, first_table, "")
    description = ""
    if "description" in top:
        d = top.pop("description")
        if not isinstance(d.raw, str):
            raise RunError(f"{d.where}: expected a string")
        description = d.raw
    raw = doc.get(SECTION, [{}])
    tables = raw if isinstance(raw, list) else [raw]
    header_lines = [i for i, line in enumerate(lines)
                    if line.strip().replace(" ", "") in ("[train]", "[[train]]")]
    sections = []
    for n, table in enumerate(tables):
        if not isinstance(table, dict):
            raise RunError(f"{path}: {SECTION}: expected a section ([train] or [[train]])")
        start = header_lines[n] if n < len(header_lines) else 0
        stop = header_lines[n + 1] if n + 1 < len(header_lines) else None
        sections.append(read_table(table, start, stop, f"[{SECTION}] "))
    return TrainFile(top, sections, description)


def train_sections(file: TrainFile | None, command_line: dict[str, Setting]
                   ) -> list[dict[str, Setting]]:
    """Each section's settings: the file's top, the section's keys over it, the
    command line's over both."""
    if file is None:
        return [dict(command_line)]
    return [{**file.top, **section, **command_line} for section in file.sections]
