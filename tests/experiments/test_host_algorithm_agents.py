"""The agents a host-based algorithm starts: every rank's options, including the
parameter server's host and the segment size that ``ina run`` passes on."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from experiments.algorithms import ALGORITHMS
from experiments.jobspec import JobSpec
from experiments.options import RunError, RunOptions
from hosts.baselines.collective import DEFAULT_SEGMENT

HOSTS = ("h1", "h2", "h3", "h4")


def fake_net() -> Any:
    ips = {h: f"10.0.0.{i}" for i, h in enumerate(HOSTS, start=1)}
    topology = SimpleNamespace(host=lambda name: SimpleNamespace(ip=ips[name]))
    return SimpleNamespace(ctl=SimpleNamespace(topology=topology))


def option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


@pytest.mark.parametrize("algo", ["ring", "ps", "ps-sharded", "hd"])
def test_defaults(tmp_path: Path, algo: str) -> None:
    agents = ALGORITHMS[algo].agents(fake_net(), JobSpec(1, HOSTS, 1000), tmp_path)
    assert [a.host for a in agents] == list(HOSTS)
    for rank, agent in enumerate(agents):
        assert option(agent.args, "--rank") == str(rank)
        assert option(agent.args, "--peers") == "10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4"
        assert option(agent.args, "--segment") == str(DEFAULT_SEGMENT)
        assert "--ps-host" not in agent.args


def test_parameter_server_host_becomes_its_rank(tmp_path: Path) -> None:
    job = JobSpec(1, HOSTS, 1000, ps_host="h3", segment=512)
    agents = ALGORITHMS["ps"].agents(fake_net(), job, tmp_path)
    assert {option(a.args, "--ps-host") for a in agents} == {"2"}
    assert {option(a.args, "--segment") for a in agents} == {"512"}
    # the other algorithms have no server: the option is not theirs
    for algo in ("ring", "ps-sharded", "hd"):
        assert all("--ps-host" not in a.args
                   for a in ALGORITHMS[algo].agents(fake_net(), job, tmp_path))


@pytest.mark.parametrize(("options", "message"), [
    (RunOptions(ps_host="s1"), "--ps-host s1: not a host name (h1, h2, ...)"),
    (RunOptions(ps_host="h5"), "--ps-host h5: not a host of star,4 (hosts: h1, h2, h3, h4)"),
    (RunOptions(segment=0), "--segment 0: must be in [1, 268435456]"),
])
def test_bad_values_name_the_option(options: RunOptions, message: str) -> None:
    with pytest.raises(RunError) as raised:
        options.validate()
    assert str(raised.value) == message
