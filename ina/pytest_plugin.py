"""The project's pytest plugin (entry point ``pytest11``): fixtures for tests of P4
programs and networks, with nothing to import.

- ``ina_switch(program, ports=2, target=None, ...)``: a switch running ``program`` on
  veth pairs, programmed over P4Runtime, with ``send``/``expect``/``expect_nothing``
  and its ``client`` (``ina.testing_switch``).
- ``ina_network(topo="star,3", target=None, ...)``: a Mininet network of any topology
  with the controller, routes and ARP, ``pingall`` and checked in-network jobs
  (``allreduce``; ``ina.testing_network``).

Both are factories: call them in the test; what they start is stopped when the test
ends. ``target`` defaults to ``--ina-target`` (``builtin``: ``ina switch``; ``bmv2``:
``simple_switch_grpc``). They skip the test, with the reason, where the switch cannot
run (not root, BMv2 missing). Only one Mininet network runs at a time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ina", "ina-emulator's switches and networks")
    group.addoption("--ina-target", default="builtin", choices=("builtin", "bmv2"),
                    help="the switch of ina_switch and ina_network: builtin (ina switch, "
                         "default) or bmv2 (simple_switch_grpc)")


@pytest.fixture
def ina_switch(request: pytest.FixtureRequest, tmp_path: Path
               ) -> Iterator[Callable[..., Any]]:
    """``ina_switch(program, ports=2, target=None, device_id=1, defines=None,
    cpu_port=None)`` -> a ``VethSwitch`` (see the plugin's docstring)."""
    from ina.testing_switch import SwitchStartError, missing, veth_switch

    with contextlib.ExitStack() as stack:
        count = 0

        def start(program: str | Path, ports: int = 2, target: str | None = None,
                  **options: Any) -> Any:
            nonlocal count
            target = target or request.config.getoption("--ina-target")
            why = missing(target)
            if why:
                pytest.skip(f"ina_switch ({target}): {why}")
            count += 1
            try:
                return stack.enter_context(veth_switch(
                    program, ports, target, work_dir=tmp_path / f"switch{count}", **options))
            except SwitchStartError as e:
                pytest.fail(f"ina_switch: {e}", pytrace=False)

        yield start


@pytest.fixture
def ina_network(request: pytest.FixtureRequest, tmp_path: Path
                ) -> Iterator[Callable[..., Any]]:
    """``ina_network(topo="star,3", target=None, k=64, bw=None, ecmp=True)`` -> a
    ``TestNetwork`` (see the plugin's docstring)."""
    from experiments.allreduce_net import need_root, target_missing
    from ina.testing_network import NetworkError, test_network

    with contextlib.ExitStack() as stack:
        def start(topo: str = "star,3", target: str | None = None, **options: Any) -> Any:
            target = target or request.config.getoption("--ina-target")
            why = need_root() or target_missing(target)
            if why:
                pytest.skip(f"ina_network ({target}): {why}")
            try:
                return stack.enter_context(test_network(topo, target,
                                                        work_dir=tmp_path / "net", **options))
            except NetworkError as e:
                pytest.fail(f"ina_network: {e}", pytrace=False)

        yield start
