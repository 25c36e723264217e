"""The README's sections and fenced code blocks, as the tests that run what the README
shows read them (``from readme_sections import blocks, section``: pyproject puts
tests/support on the tests' path)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()

_FENCED = re.compile(r"^[ \t]*```(\w*)\n(.*?)^[ \t]*```$", re.S | re.M)


def section(title: str) -> str:
    """The section whose heading is ``## TITLE``, up to the next ``## `` heading or the
    end of the README; KeyError naming the title if there is none."""
    m = re.search(rf"^## {re.escape(title)}$", README, re.M)
    if m is None:
        raise KeyError(f"README.md has no section '## {title}'")
    end = README.find("\n## ", m.end())
    return README[m.start():end if end >= 0 else None]


def blocks(text: str, lang: str | None = None) -> list[str]:
    """The contents of the fenced code blocks of ``text``, in order (fences at the start
    of a line, indented ones too): all of them, or those of language ``lang`` (``""``:
    the ones that name none)."""
    return [body for tag, body in _FENCED.findall(text) if lang is None or tag == lang]
