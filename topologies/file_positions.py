"""Positions in JSON and YAML files, for errors that say where: ``FILE:LINE: links[3]``.

A file is read twice: as data (``json`` or ``yaml``), and composed as YAML (JSON is
YAML) for the line of every value by its path of keys and indexes. Where composing
fails there are no line numbers, and errors name the file and the entry alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml


def line_numbers(text: str) -> dict[tuple[Any, ...], int]:
    """The line of every value in ``text``, by its path (``("links", 3)``)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return {}
    out: dict[tuple[Any, ...], int] = {}

    def walk(node: Any, at: tuple[Any, ...]) -> None:
        out[at] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, (*at, key.value))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*at, i))

    if root is not None:
        walk(root, ())
    return out


class Where:
    """Names places in one file; ``error`` makes the exception ``make_error`` builds of
    ``FILE:LINE: PATH: MESSAGE``."""

    def __init__(self, path: str, lines: dict[tuple[Any, ...], int],
                 make_error: Callable[[str], Exception]) -> None:
        self.path = path
        self.lines = lines
        self.make_error = make_error

    def __call__(self, *at: Any) -> str:
        line = self.lines.get(tuple(at))
        head = f"{self.path}:{line}" if line else self.path
        if not at:
            return head
        text = str(at[0]) + "".join(f"[{x}]" if isinstance(x, int) else f".{x}"
                                    for x in at[1:])
        return f"{head}: {text}"

    def error(self, message: str, *at: Any) -> Exception:
        return self.make_error(f"{self(*at)}: {message}")


def read_json(path: str | Path, make_error: Callable[[str], Exception], what: str
              ) -> tuple[Any, Where]:
    """A JSON file's data and its ``Where``; unreadable or invalid JSON is an error that
    names the file (and the line)."""
    name = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise make_error(f"{name}: cannot read the {what}: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise make_error(f"{name}:{e.lineno}: not valid JSON: {e.msg}") from None
    return data, Where(name, line_numbers(text), make_error)
