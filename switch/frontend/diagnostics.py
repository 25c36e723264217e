"""Compiler diagnostics printed the way p4c prints them.

    prog.p4(12): error: foo: declaration not found
        x = foo;
            ^^^

A diagnostic may carry p4c's error class (``overlimit``, ``unsupported``, ...), which
p4c prints before the severity: ``prog.p4(12): [--Werror=overlimit] error: ...``.

Passes report through a ``Diagnostics`` collector and call ``check()`` at the end of a
pass; ``CompileError`` carries every diagnostic collected so far.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Protocol

from switch.frontend.ast import Pos


class SourceMap(Protocol):
    """What diagnostics need from the preprocessor's output."""

    def origin(self, line: int) -> object: ...  # has .file and .line

    def source_line(self, line: int) -> str: ...


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" or "warning"
    message: str
    file: str
    line: int  # line in ``file`` (0 when unknown)
    col: int  # 1-based column, 0 when unknown
    source_line: str = ""
    length: int = 1
    kind: str = ""  # p4c's error class, "" when p4c prints none
    related: Diagnostic | None = None  # a second place the message names (its location)

    def format(self) -> str:
        where = f"{self.file}({self.line})" if self.line else self.file
        tag = ""
        if self.kind:
            tag = f"[--W{'error' if self.severity == 'error' else 'warn'}={self.kind}] "
        text = f"{where}: {tag}{self.severity}: {self.message}"
        text += self._source()
        if self.related is not None:
            r = self.related
            text += f"\n{r.file}({r.line})" + r._source()
        return text

    def _source(self) -> str:
        if self.source_line and self.col:
            caret = " " * (self.col - 1) + "^" * max(1, self.length)
            return f"\n{self.source_line.rstrip()}\n{caret}"
        return ""


class CompileError(Exception):
    """Raised when a program has errors; ``str()`` is the full p4c-style report."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))


class Diagnostics:
    """Collects diagnostics for one compilation, mapping positions through the source
    map. ``error`` never raises; ``check`` raises CompileError if any error was seen."""

    def __init__(self, source: SourceMap | None = None, filename: str = "<input>"):
        self.source = source
        self.filename = filename
        self.items: list[Diagnostic] = []

    def _make(self, severity: str, pos: Pos | None, message: str, length: int,
              kind: str = "") -> Diagnostic:
        if pos is None or pos.line == 0:
            return Diagnostic(severity, message, self.filename, 0, 0, kind=kind)
        if self.source is None:
            return Diagnostic(severity, message, self.filename, pos.line, pos.col, "", length,
                              kind)
        origin = self.source.origin(pos.line)
        return Diagnostic(
            severity,
            message,
            getattr(origin, "file", self.filename),
            getattr(origin, "line", pos.line),
            pos.col,
            self.source.source_line(pos.line),
            length,
            kind,
        )

    def error(self, pos: Pos | None, message: str, length: int = 1, kind: str = "",
              related: tuple[Pos, int] | None = None) -> None:
        """Report an error; ``kind`` is p4c's error class when the message is one of the
        target checks p4c classifies (printed as ``[--Werror=kind]``); ``related`` a
        second place the message names, with the length of its caret, which p4c prints
        after the first."""
        d = self._make("error", pos, message, length, kind)
        if related is not None:
            d = dataclasses.replace(d, related=self._make("error", related[0], "", related[1]))
        self.items.append(d)

    def unsupported(self, pos: Pos | None, what: str, length: int = 1) -> None:
        self.error(pos, f"unsupported: {what}", length)

    def warning(self, pos: Pos | None, message: str, length: int = 1, kind: str = "") -> None:
        """Report a warning; ``kind`` is p4c's warning class (``[--Wwarn=kind]``)."""
        self.items.append(self._make("warning", pos, message, length, kind))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    def check(self) -> None:
        if self.errors:
            raise CompileError(self.items)
