"""The STF targets by name (``ina stf --target NAME``)."""

from __future__ import annotations

from switch.stf.bmv2_target import BMv2Target
from switch.stf.builtin_target import BuiltinTarget
from switch.stf.target import StfTarget

TARGETS: dict[str, StfTarget] = {t.name: t for t in (BuiltinTarget(), BMv2Target())}


def get_target(name: str) -> StfTarget:
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown STF target {name!r} (targets: "
                         f"{', '.join(TARGETS)})") from None
