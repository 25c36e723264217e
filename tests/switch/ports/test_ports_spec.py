"""Parsing of ``-i PORT@IFACE`` and ``--impair PORT:KEY=VALUE,...`` specs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from switch.ports import (
    ImpairmentConfig,
    PortError,
    SpecError,
    parse_impairment_spec,
    parse_port_spec,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1@s1-eth1", (1, "s1-eth1")),
        ("0@veth0", (0, "veth0")),
        (" 12 @ s1-eth12 ", (12, "s1-eth12")),
        ("511@a23456789012345", (511, "a23456789012345")),
    ],
)
def test_port_spec_ok(text: str, expected: tuple[int, str]) -> None:
    assert parse_port_spec(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s1-eth1", "expected PORT@IFACE"),
        ("x@s1-eth1", "port 'x' is not a non-negative integer"),
        ("-1@s1-eth1", "port '-1' is not a non-negative integer"),
        ("1@", "the interface name is empty"),
        ("1@a234567890123456", "longer than 15 characters"),
        ("1@a/b", "not a valid interface name"),
        ("1@a b", "not a valid interface name"),
        ("1@eth0:1", "not a valid interface name"),
    ],
)
def test_port_spec_errors(text: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_port_spec(text)
    assert f"bad interface spec {text!r}" in str(info.value)
    assert message in str(info.value)
    assert isinstance(info.value, PortError) and isinstance(info.value, ValueError)


def test_impair_spec_examples() -> None:
    assert parse_impairment_spec("2:loss=0.05,delay=2ms") == (
        2,
        ImpairmentConfig(loss=0.05, delay_ms=2.0),
    )
    assert parse_impairment_spec("all:loss=0.01,seed=7") == (
        None,
        ImpairmentConfig(loss=0.01, seed=7),
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:loss=5%", ImpairmentConfig(loss=0.05)),
        ("1:delay=500us", ImpairmentConfig(delay_ms=0.5)),
        ("1:delay=0.1s", ImpairmentConfig(delay_ms=100.0)),
        ("1:delay=3", ImpairmentConfig(delay_ms=3.0)),
        ("1:delay_ms=1.5", ImpairmentConfig(delay_ms=1.5)),
        ("1:reorder=0.1,dup=0.2", ImpairmentConfig(reorder=0.1, duplicate=0.2)),
        ("1:duplicate=1", ImpairmentConfig(duplicate=1.0)),
        ("1:seed=0x10,direction=both", ImpairmentConfig(seed=16, direction="both")),
        ("1:dir=ingress,seed=-3", ImpairmentConfig(seed=-3, direction="ingress")),
        ("*:LOSS=0.5", ImpairmentConfig(loss=0.5)),
        (" 3 : loss = 0.1 , delay = 2 ms ", ImpairmentConfig(loss=0.1, delay_ms=2.0)),
    ],
)
def test_impair_spec_forms(text: str, expected: ImpairmentConfig) -> None:
    assert parse_impairment_spec(text)[1] == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("loss=0.05", "expected PORT:KEY=VALUE"),
        ("x:loss=0.05", "port 'x' is neither a non-negative integer nor 'all'"),
        ("1:", "nothing after '1:'"),
        ("1:loss", "expected KEY=VALUE, got 'loss'"),
        ("1:loss=", "no value for 'loss'"),
        ("1:los=0.1", "unknown key 'los' (known: loss, delay, reorder, duplicate, seed, dir"),
        ("1:loss=abc", "loss must be a probability"),
        ("1:loss=1.5", "loss must be between 0 and 1"),
        ("1:reorder=-0.1", "reorder must be between 0 and 1"),
        ("1:dup=200%", "dup must be between 0 and 1"),
        ("1:delay=2h", "delay must be a duration"),
        ("1:delay=-2ms", "delay must be a duration"),
        ("1:delay=120s", "delay must be between 0 and 60000 ms"),
        ("1:seed=1.5", "seed must be an integer"),
        ("1:direction=up", "direction must be one of egress, ingress, both"),
        ("1:loss=0.1,loss=0.2", "'loss' is given twice"),
        ("1:loss=0.1,,delay=1", "expected KEY=VALUE, got ''"),
    ],
)
def test_impair_spec_errors(text: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_impairment_spec(text)
    assert str(info.value).startswith(f"bad impairment spec {text!r}: ")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"loss": 2}, "loss must be between 0 and 1"),
        ({"loss": float("nan")}, "loss must be between 0 and 1"),
        ({"loss": "0.1"}, "loss must be a number"),
        ({"delay_ms": -1}, "delay must be between"),
        ({"delay_ms": float("inf")}, "delay must be between"),
        ({"seed": 1.0}, "seed must be an integer"),
        ({"direction": "out"}, "direction must be one of"),
    ],
)
def test_config_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        ImpairmentConfig(**kwargs)  # type: ignore[arg-type]


def test_config_identity_and_directions() -> None:
    assert ImpairmentConfig().is_identity
    assert ImpairmentConfig(seed=5, direction="both").is_identity
    assert not ImpairmentConfig(delay_ms=1).is_identity
    both = ImpairmentConfig(direction="both")
    assert both.applies_to("egress") and both.applies_to("ingress")
    ingress = ImpairmentConfig(direction="ingress")
    assert ingress.applies_to("ingress") and not ingress.applies_to("egress")


probabilities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(
    loss=probabilities,
    delay=st.floats(min_value=0.0, max_value=60_000.0, allow_nan=False),
    reorder=probabilities,
    duplicate=probabilities,
    seed=st.integers(min_value=-(2**64), max_value=2**64),
    direction=st.sampled_from(["egress", "ingress", "both"]),
    port=st.none() | st.integers(min_value=0, max_value=2**16),
)
def test_to_spec_round_trip(
    loss: float,
    delay: float,
    reorder: float,
    duplicate: float,
    seed: int,
    direction: str,
    port: int | None,
) -> None:
    config = ImpairmentConfig(loss, delay, reorder, duplicate, seed, direction)
    text = f"{'all' if port is None else port}:{config.to_spec()}"
    assert parse_impairment_spec(text) == (port, config)
