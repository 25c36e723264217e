"""What a topology family is to the spec parser (``topologies.spec``): its name, its
positional arguments with their ranges, its ``InaTopo`` class and how many hosts and
switches a choice of arguments makes (checked before anything is built)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class TopoSpecError(ValueError):
    """A bad topology spec or file; the message says what and where."""


@dataclass(frozen=True)
class Arg:
    """A positional argument: ``name`` as the usage shows it, what it means, its range,
    and its default when it may be left out (only trailing arguments may)."""

    name: str
    meaning: str
    low: int
    high: int
    default: int | None = None
    even: bool = False

    def read(self, text: str, family: str) -> int:
        what = f"{family}'s {self.name} ({self.meaning})"
        try:
            value = int(text)
        except ValueError:
            raise TopoSpecError(f"{what} must be an integer, got {text!r}") from None
        if not self.low <= value <= self.high:
            raise TopoSpecError(f"{what} must be in [{self.low}, {self.high}], got {value}")
        if self.even and value % 2:
            raise TopoSpecError(f"{what} must be even, got {value}")
        return value


@dataclass(frozen=True)
class Family:
    name: str
    topo: Callable[..., Any]  # the InaTopo class: topo(*args, bw=...)
    args: tuple[Arg, ...]
    example: str
    about: str
    counts: Callable[..., tuple[int, int]]  # (hosts, switches) for the args

    @property
    def usage(self) -> str:
        text = self.name
        for a in self.args:
            text += f"[,{a.name}]" if a.default is not None else f",{a.name}"
        return text

    def read_args(self, texts: list[str]) -> list[int]:
        required = sum(1 for a in self.args if a.default is None)
        if not required <= len(texts) <= len(self.args):
            count = (str(len(self.args)) if required == len(self.args)
                     else f"{required} or {len(self.args)}")
            names = ", ".join(f"{a.name} ({a.meaning})" for a in self.args)
            plural = "s" if len(self.args) > 1 else ""
            raise TopoSpecError(f"{self.name} takes {count} argument{plural}: {names} "
                                f"(e.g. {self.example})")
        values = [a.read(t, self.name) for a, t in zip(self.args, texts, strict=False)]
        values += [a.default for a in self.args[len(texts):]]  # type: ignore[misc]
        return values


def read_rate(text: str, family: str) -> float:
    what = f"{family}'s bw (Mbit/s)"
    try:
        value = float(text)
    except ValueError:
        raise TopoSpecError(f"{what} must be a number, got {text!r}") from None
    if not value > 0:
        raise TopoSpecError(f"{what} must be positive, got {text}")
    return value
