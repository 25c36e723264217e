"""Parsers for the port-related command-line specs of ``ina switch``.

``-i PORT@IFACE`` (as in simple_switch_grpc) and ``--impair PORT:KEY=VALUE,...`` where
PORT is a port number or ``all``. Errors are :class:`SpecError` with the bad text in the
message.
"""

from __future__ import annotations

import math
import re

from .errors import SpecError
from .impair import DIRECTIONS, ImpairmentConfig

#: Linux interface names are at most IFNAMSIZ - 1 = 15 bytes.
IFNAME_MAX = 15

PORT_SPEC_HELP = "expected PORT@IFACE, e.g. 1@s1-eth1"
IMPAIR_SPEC_HELP = (
    "expected PORT:KEY=VALUE[,KEY=VALUE...] with PORT a port number or 'all', "
    "e.g. 2:loss=0.05,delay=2ms or all:loss=0.01,seed=7"
)

_KEYS = {
    "loss": "loss",
    "delay": "delay_ms",
    "delay_ms": "delay_ms",
    "reorder": "reorder",
    "duplicate": "duplicate",
    "dup": "duplicate",
    "seed": "seed",
    "direction": "direction",
    "dir": "direction",
}
_KNOWN = "loss, delay, reorder, duplicate, seed, direction"

_DELAY_RE = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ms|us|s)?$")
_DELAY_UNIT_MS = {"ms": 1.0, "us": 0.001, "s": 1000.0, None: 1.0}


def validate_ifname(name: str) -> str | None:
    """Why ``name`` cannot be a Linux interface name, or None when it can."""
    if not name:
        return "the interface name is empty"
    if len(name.encode()) > IFNAME_MAX:
        return f"interface name {name!r} is longer than {IFNAME_MAX} characters"
    if name in (".", "..") or any(c in name for c in "/:") or any(c.isspace() for c in name):
        return f"{name!r} is not a valid interface name"
    return None


def _parse_port_number(text: str) -> int | None:
    text = text.strip()
    if not text.isascii() or not text.isdigit():
        return None
    return int(text)


def parse_port_spec(text: str) -> tuple[int, str]:
    """``"1@s1-eth1"`` -> ``(1, "s1-eth1")``."""
    port_text, sep, iface = text.partition("@")
    if not sep:
        raise SpecError(f"bad interface spec {text!r}: {PORT_SPEC_HELP}")
    port = _parse_port_number(port_text)
    if port is None:
        raise SpecError(
            f"bad interface spec {text!r}: port {port_text.strip()!r} is not a "
            f"non-negative integer ({PORT_SPEC_HELP})"
        )
    iface = iface.strip()
    problem = validate_ifname(iface)
    if problem is not None:
        raise SpecError(f"bad interface spec {text!r}: {problem}")
    return port, iface


def _parse_probability(key: str, value: str) -> float:
    v = value.strip()
    try:
        p = float(v[:-1]) / 100.0 if v.endswith("%") else float(v)
    except ValueError:
        raise SpecError(f"{key} must be a probability such as 0.05 or 5%, got {value!r}") from None
    if not 0.0 <= p <= 1.0:
        raise SpecError(f"{key} must be between 0 and 1 (0% and 100%), got {value!r}")
    return p


def _parse_delay_ms(value: str) -> float:
    m = _DELAY_RE.match(value.strip().lower())
    if m is None:
        raise SpecError(f"delay must be a duration such as 2ms, 500us or 0.1s, got {value!r}")
    ms = float(m.group(1)) * _DELAY_UNIT_MS[m.group(2)]
    if not math.isfinite(ms):
        raise SpecError(f"delay must be finite, got {value!r}")
    return ms


def _parse_seed(value: str) -> int:
    try:
        return int(value.strip(), 0)
    except ValueError:
        raise SpecError(f"seed must be an integer, got {value!r}") from None


def _parse_direction(value: str) -> str:
    v = value.strip().lower()
    if v not in DIRECTIONS:
        raise SpecError(f"direction must be one of {', '.join(DIRECTIONS)}, got {value!r}")
    return v


def parse_impairment_spec(text: str) -> tuple[int | None, ImpairmentConfig]:
    """``"2:loss=0.05,delay=2ms"`` -> ``(2, ImpairmentConfig(loss=0.05, delay_ms=2.0))``.

    The port is None for ``all``. Probabilities may be written as fractions (``0.05``) or
    percentages (``5%``); a delay without unit is in milliseconds.
    """
    try:
        return _parse_impairment_spec(text)
    except SpecError as e:
        raise SpecError(f"bad impairment spec {text!r}: {e}") from None


def _parse_impairment_spec(text: str) -> tuple[int | None, ImpairmentConfig]:
    port_text, sep, rest = text.partition(":")
    if not sep:
        raise SpecError(IMPAIR_SPEC_HELP)
    port: int | None
    if port_text.strip().lower() in ("all", "*"):
        port = None
    else:
        port = _parse_port_number(port_text)
        if port is None:
            raise SpecError(
                f"port {port_text.strip()!r} is neither a non-negative integer nor 'all'"
            )
    if not rest.strip():
        raise SpecError(f"nothing after '{port_text.strip()}:' ({IMPAIR_SPEC_HELP})")
    values: dict[str, object] = {}
    for item in rest.split(","):
        key_text, eq, value = item.partition("=")
        key = key_text.strip().lower()
        if not eq or not key:
            raise SpecError(f"expected KEY=VALUE, got {item.strip()!r}")
        field = _KEYS.get(key)
        if field is None:
            raise SpecError(f"unknown key {key!r} (known: {_KNOWN})")
        if field in values:
            raise SpecError(f"{key!r} is given twice")
        if not value.strip():
            raise SpecError(f"no value for {key!r}")
        if field in ("loss", "reorder", "duplicate"):
            values[field] = _parse_probability(key, value)
        elif field == "delay_ms":
            values[field] = _parse_delay_ms(value)
        elif field == "seed":
            values[field] = _parse_seed(value)
        else:
            values[field] = _parse_direction(value)
    return port, ImpairmentConfig(**values)  # type: ignore[arg-type]
