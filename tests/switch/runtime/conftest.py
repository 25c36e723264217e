"""Fixtures for the P4Runtime server tests: every server listens on 127.0.0.1 with an
ephemeral port, and the test program is compiled once per session."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from p4rt_helpers import CPU_PORT, DEVICE_ID, PROGRAM, Client, P4Info

from switch.runtime import P4RuntimeServer


@dataclass
class Compiled:
    program: object
    p4info: object
    device_config: bytes
    names: P4Info


@pytest.fixture(scope="session")
def compiled() -> Compiled:
    from switch.frontend import compile_text
    from switch.frontend.artifact import dump_artifact
    from switch.frontend.p4info import build_p4info

    program = compile_text(PROGRAM, "p4rt_test.p4")
    info = build_p4info(program)
    return Compiled(program, info, dump_artifact(program).encode(), P4Info(info))


@dataclass
class Outputs:
    """Frames the switch sent out of non-CPU ports after packet-outs."""

    frames: list[tuple[int, bytes]] = field(default_factory=list)

    def __call__(self, port: int, frame: bytes) -> None:
        self.frames.append((port, frame))


@pytest.fixture
def outputs() -> Outputs:
    return Outputs()


@pytest.fixture
def server(outputs: Outputs) -> Iterator[P4RuntimeServer]:
    srv = P4RuntimeServer(device_id=DEVICE_ID, address="127.0.0.1:0", cpu_port=CPU_PORT,
                          on_output=outputs)
    srv.start()
    yield srv
    srv.stop(grace=0)


@pytest.fixture
def address(server: P4RuntimeServer) -> str:
    return f"127.0.0.1:{server.port}"


@pytest.fixture
def clients(address: str) -> Iterator[list[Client]]:
    """A list to register extra clients in; all are closed at the end."""
    made: list[Client] = []
    yield made
    for c in made:
        c.close()


@pytest.fixture
def client(address: str, clients: list[Client], compiled: Compiled) -> Client:
    """The primary controller, with the test program committed."""
    c = Client(address, election_id=(0, 10))
    clients.append(c)
    c.set_pipeline(compiled.p4info, compiled.device_config)
    return c
