"""Every ``ina`` verb's --help reads as plain text: the module docstrings some verbs
show carry no reStructuredText markup there."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from ina.cli import build_parser


def _helps(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, str]]:
    yield path, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _helps(sub, f"{path} {name}")


def test_no_help_text_shows_docstring_markup() -> None:
    helps = dict(_helps(build_parser(), "ina"))
    assert {"ina ctl", "ina topo", "ina agent", "ina recovery"} <= set(helps)
    assert [path for path, text in helps.items() if "``" in text] == []
    assert "ina ctl: the controller from the command line." in helps["ina ctl"]
