"""The pytest plugin's ina_network on BMv2 (the README's example test runs it on the
built-in switch): a two-switch network whose hosts ping, and a checked in-network job."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.slow
def test_ina_network_on_bmv2(ina_network: Any) -> None:
    net = ina_network("linear,2,1", target="bmv2")
    assert net.hosts == ["h1", "h2"]
    assert net.pingall() == 0
    outcome = net.allreduce(size=5_000)
    assert outcome.check.ok and len(outcome.outputs) == 2
    assert net.ctl.topology.switches.keys() == {"s1", "s2"}
