"""One of the pipelines 1..N-1 of ``ina switch --pipelines N`` (see
``switch.process.pipelines``): a process the main process starts with one end of a
socket pair, ``python -m switch.process.pipeline_worker FD``.

It reads its set-up from the socket (the program as an artifact, the ports, their
impairments, the seed and the fanout groups of the main process's ports), opens the
ports and joins their groups, and then moves the frames the kernel gives it through its
own copy of the program, as the main process moves its own. Between batches it answers
the main process's requests: a V1Switch method to run (every change of the tables, a
read of a register or counter), a PortSet method (impairments, counters), its data
path's counters. It ends when asked, or when the main process's end of the socket
closes (the main process ended, however it ended).
"""

from __future__ import annotations

import pickle
import selectors
import signal
import socket
import sys
import threading
import time
from typing import Any

from switch.ports import PortSet
from switch.process.dataplane import Dataplane
from switch.process.pipelines import receive_message, send_message

MAX_WAIT_S = 0.5


class _Server:
    """What the data path needs of a P4Runtime server: the switch and its lock."""

    def __init__(self, switch: Any):
        self.switch = switch
        self.lock = threading.RLock()

    def packet_in(self, frame: bytes) -> None:  # no CPU port with several pipelines
        pass

    def poll_digests(self) -> None:
        pass


def _answer(sock: socket.socket, switch: Any, ports: PortSet, dataplane: Dataplane) -> bool:
    """Serve one request; False when the worker is to stop."""
    try:
        message = receive_message(sock)
    except (EOFError, OSError):
        return False
    kind = message[0]
    if kind == "stop":
        return False
    try:
        if kind == "ready":
            value: Any = True
        elif kind == "stats":
            value = dataplane.stats
        else:
            _, name, args, kwargs = message
            target = switch if kind == "switch" else ports
            value = getattr(target, name)(*args, **kwargs)
        reply: tuple[str, Any] = ("ok", value)
    except Exception as e:  # noqa: BLE001 - the main process raises it
        reply = ("error", e)
    try:
        send_message(sock, reply)
    except (pickle.PicklingError, TypeError, AttributeError):
        send_message(sock, ("error", RuntimeError(repr(reply[1]))))
    return True


def serve(sock: socket.socket) -> int:
    from switch.frontend.artifact import load_artifact
    from switch.v1model import V1Switch

    setup = receive_message(sock)
    index = setup["index"]
    try:
        program = load_artifact(setup["artifact"], setup["name"])
        switch = V1Switch(program, seed=setup["seed"], engine=setup.get("engine", "auto"))
        ports = PortSet(setup["ports"], impairments=setup["impairments"])
        ports.open()
        ports.join_fanout(setup["groups"])
    except Exception as e:  # noqa: BLE001 - reported to the main process
        receive_message(sock)  # "ready"
        send_message(sock, ("error", RuntimeError(f"pipeline {index}: {e}")))
        return 1
    dataplane = Dataplane(ports, _Server(switch), None)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(ports.fileno(), selectors.EVENT_READ, "ports")
            sel.register(sock, selectors.EVENT_READ, "main")
            while True:
                deadline = ports.next_deadline()
                wait = MAX_WAIT_S if deadline is None else \
                    min(MAX_WAIT_S, max(0.0, deadline - time.monotonic()))
                readable = False
                for key, _ in sel.select(wait):
                    if key.data == "main":
                        if not _answer(sock, switch, ports, dataplane):
                            return 0
                    else:
                        readable = True
                if readable:
                    dataplane.process(ports.receive(timeout=0))
                elif deadline is not None and time.monotonic() >= deadline:
                    dataplane.process(ports.flush_due())
    finally:
        ports.close()
        dataplane.close()


def main(argv: list[str]) -> int:
    # a Ctrl-C at a terminal reaches the whole process group: the main process stops
    # the pipelines (or its end of the socket closes)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=int(argv[0]))
    try:
        return serve(sock)
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
