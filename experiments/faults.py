"""Faults to inject into a running experiment: what they are, when, and whether they
make sense for a topology.

A fault is one line, ``KIND [NAME] ACTION at TIME``:

    link s1-s3 down at 1.5s     both interfaces of every link between s1 and s3 go down
    link s1-s3 up at 3s         ... and up again
    link h1-s1 down at 1s       a host's link
    switch s2 down at 1s        the switch process is killed
    switch s2 up at 4s          a fresh process starts (no program, tables or registers)
    switch s2 restart at 1s     killed, and a fresh one started at once
    controller down at 1s       the controller dies (its P4Runtime streams and agent
    controller up at 2s         connections close); up: a new one takes over
    controller restart at 1s    both at once
    host h3 down at 2s          the host's link goes down and its agent is killed

``TIME`` is seconds from the moment the agents start (``1.5s``, ``1500ms`` or ``1.5``).
At the ``mininet>`` prompt (``fault ...``) the ``at TIME`` part is optional and counts
from the command. ``parse_fault`` reads one line, ``check_faults`` holds a list to a
topology before anything starts: unknown nodes, links that do not exist, an ``up``
with no ``down`` before it, a time past the run's time limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

ACTIONS: dict[str, tuple[str, ...]] = {
    "link": ("down", "up"),
    "switch": ("down", "up", "restart"),
    "controller": ("down", "up", "restart"),
    "host": ("down",),
}
"""The verbs: every kind of fault and the actions it takes."""

_TIME = re.compile(r"^(?P<value>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>s|ms)?$")


class FaultError(ValueError):
    """A fault spec that cannot be read, or that does not fit the topology."""


@dataclass(frozen=True)
class Fault:
    kind: str  # one of ACTIONS
    target: tuple[str, ...]  # link: its two ends; switch, host: the name; controller: ()
    action: str
    at: float | None  # seconds from the start; None: now (at the prompt)

    @property
    def subject(self) -> str:
        """``link s1-s3``, ``switch s2``, ``controller``."""
        return " ".join([self.kind, "-".join(self.target)] if self.target else [self.kind])

    @property
    def key(self) -> tuple[str, ...]:
        """What the fault acts on, the same for ``link s1-s3`` and ``link s3-s1``."""
        return (self.kind, *sorted(self.target))

    @property
    def text(self) -> str:
        when = "" if self.at is None else f" at {self.at:g}s"
        return f"{self.subject} {self.action}{when}"

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, Any]:
        return {"fault": self.text, "kind": self.kind, "target": list(self.target),
                "action": self.action, "at_s": self.at}


def parse_time(text: str) -> float:
    """``1.5s``, ``1500ms`` or ``1.5`` (seconds), as seconds."""
    m = _TIME.match(text.strip())
    if not m:
        raise FaultError(f"time {text!r} is not a number of seconds like 1.5s or 1500ms")
    value = float(m["value"])
    return value / 1000.0 if m["unit"] == "ms" else value


def parse_fault(text: str, *, need_time: bool = True) -> Fault:
    """One fault spec (see the module docstring); ``FaultError`` saying what is wrong."""
    words = text.split()
    shown = " ".join(words)

    def bad(why: str) -> FaultError:
        return FaultError(f"fault {shown!r}: {why}")

    if not words:
        raise FaultError("empty fault spec (e.g. 'link s1-s3 down at 1.5s')")
    kind = words[0].lower()
    if kind not in ACTIONS:
        raise bad(f"unknown kind {words[0]!r} (kinds: {', '.join(ACTIONS)})")
    rest = words[1:]
    target: tuple[str, ...] = ()
    if kind != "controller":
        if not rest:
            raise bad(f"name the {kind}")
        name, rest = rest[0], rest[1:]
        if kind == "link":
            ends = name.split("-")
            if len(ends) != 2 or not all(ends):
                raise bad(f"a link is named by its two ends, like s1-s3, not {name!r}")
            if ends[0] == ends[1]:
                raise bad(f"a link joins two different nodes, not {name!r}")
            target = (ends[0], ends[1])
        else:
            target = (name,)
    if not rest:
        raise bad(f"say what happens: {' or '.join(ACTIONS[kind])}")
    action = rest[0].lower()
    if action not in ACTIONS[kind]:
        raise bad(f"a {kind} can go {', '.join(ACTIONS[kind])}, not {rest[0]!r}")
    rest = rest[1:]
    at: float | None = None
    if rest:
        if rest[0].lower() != "at" or len(rest) != 2:
            raise bad(f"expected 'at TIME' after {action!r}, got {' '.join(rest)!r}")
        try:
            at = parse_time(rest[1])
        except FaultError as e:
            raise bad(str(e)) from None
    elif need_time:
        raise bad("say when: 'at TIME' (e.g. at 1.5s)")
    return Fault(kind, target, action, at)


def parse_faults(texts: Iterable[str]) -> tuple[Fault, ...]:
    return tuple(parse_fault(t) for t in texts)


def check_faults(faults: Sequence[Fault], hosts: Sequence[str], switches: Sequence[str],
                 links: Iterable[tuple[str, str]], limit: float, sequence: bool = True
                 ) -> str | None:
    """What is wrong with ``faults`` on a topology (None when nothing is): unknown nodes,
    links that do not exist, a time past ``limit`` (the run's time limit, seconds),
    and with ``sequence`` an ``up`` with no ``down`` of the same thing before it."""
    pairs = {frozenset(link) for link in links}
    state: dict[tuple[str, ...], str] = {}  # key -> "down" after a down, until its up
    for f in sorted(faults, key=lambda f: f.at or 0.0):
        where = f"fault {f.text!r}"
        for name in f.target:
            if name not in hosts and name not in switches:
                return f"{where}: no node {name!r} in the topology ({_listing(hosts, switches)})"
        if f.kind == "switch" and f.target[0] not in switches:
            return f"{where}: {f.target[0]} is a host, not a switch"
        if f.kind == "host" and f.target[0] not in hosts:
            return f"{where}: {f.target[0]} is a switch, not a host"
        if f.kind == "link" and frozenset(f.target) not in pairs:
            a, b = f.target
            peers = sorted({n for p in pairs if a in p for n in p if n != a})
            return (f"{where}: there is no link between {a} and {b} ({a}'s links go to "
                    f"{', '.join(peers) or 'nothing'})")
        if f.at is not None and f.at > limit:
            return (f"{where}: {f.at:g} s is past the run's time limit ({limit:g} s: the "
                    "agents give up by then)")
        key = f.key
        if not sequence:
            continue
        if f.action == "up":
            if state.get(key) != "down":
                return (f"{where}: the {f.kind} is not down then (no earlier "
                        f"'{f.subject} down')")
            del state[key]
        elif f.action == "down":
            if state.get(key) == "down":
                return f"{where}: the {f.kind} is down already then"
            state[key] = "down"
        elif state.get(key) == "down":
            return f"{where}: the {f.kind} is down then; bring it up instead"
    return None


def _listing(hosts: Sequence[str], switches: Sequence[str]) -> str:
    def few(names: Sequence[str]) -> str:
        return ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
    return f"hosts: {few(hosts)}; switches: {few(switches)}"
