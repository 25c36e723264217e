"""The host-based all-reduce algorithms by name (``ina agent --algo NAME``)."""

from __future__ import annotations

from hosts.baselines import hd, ps, ps_sharded, ring
from hosts.baselines.collective import Collective

COLLECTIVES: dict[str, Collective] = {
    m.COLLECTIVE.name: m.COLLECTIVE for m in (ring, ps, ps_sharded, hd)
}


def get_collective(name: str) -> Collective:
    try:
        return COLLECTIVES[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r} (host-based algorithms: "
                         f"{', '.join(COLLECTIVES)})") from None
