"""Fixtures for the P4Runtime client tests: the test program compiled once, and in-process
P4Runtime servers of the built-in switch on ephemeral ports.

Port 2 of each server is looped back: what the switch sends out of port 2 comes in
again on port 2 (so a PacketOut to port 2 can return as a PacketIn)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from p4runtime_client_helpers import (
    CPU_PORT,
    HERE,
    LOOPED_PORT,
    Pipeline,
    Switch,
    compile_program,
)

from controller import P4RuntimeClient
from switch.runtime import P4RuntimeServer


@pytest.fixture(scope="session")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    return compile_program(HERE / "p4runtime_client_test.p4", tmp_path_factory.mktemp("ctl"))


@pytest.fixture(scope="session")
def forward_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    root = HERE.parents[1]
    return compile_program(root / "p4" / "ipv4_forward.p4", tmp_path_factory.mktemp("fwd"))


@pytest.fixture
def make_switch() -> Iterator[Callable[[int], Switch]]:
    """Factory for running P4Runtime servers (device id as argument)."""
    made: list[P4RuntimeServer] = []

    def make(device_id: int = 1) -> Switch:
        outputs: list[tuple[int, bytes]] = []
        server: P4RuntimeServer

        def output(port: int, frame: bytes) -> None:
            outputs.append((port, frame))
            if port == LOOPED_PORT:
                for out_port, out_frame in server.inject(LOOPED_PORT, frame):
                    output(out_port, out_frame)

        server = P4RuntimeServer(device_id=device_id, address="127.0.0.1:0",
                                 cpu_port=CPU_PORT, on_output=output)
        port = server.start()
        made.append(server)
        return Switch(server, f"127.0.0.1:{port}", outputs)

    yield make
    for server in made:
        server.stop(grace=0)


@pytest.fixture
def switch(make_switch: Callable[[int], Switch]) -> Switch:
    return make_switch(1)


@pytest.fixture
def clients() -> Iterator[list[P4RuntimeClient]]:
    made: list[P4RuntimeClient] = []
    yield made
    for c in made:
        c.close()


@pytest.fixture
def client(switch: Switch, pipeline: Pipeline, clients: list[P4RuntimeClient]
           ) -> P4RuntimeClient:
    """The primary controller of ``switch`` with the test program committed."""
    c = P4RuntimeClient(switch.address, device_id=1, election_id=(0, 10), name="s1")
    clients.append(c)
    c.connect()
    c.set_pipeline(pipeline.p4info, pipeline.config)
    return c
