"""The control channel between a job's agents and the controller, agent side.

An in-network agent started with a control socket (``ina agent --control PATH``)
connects to the controller over that Unix socket (filesystem sockets cross Mininet's
network namespaces) and says which job and rank it is. The controller uses the channel
only when the job's tree must change, never on the data path:

- ``pause``: a link or switch of the tree failed. The agent stops sending and answers
  with its ``progress``: the first wire chunk whose RESULT it lacks, and the end of
  what it has sent.
- ``resume`` from a wire chunk: the new tree is installed (its cells empty: a new
  epoch); every agent goes back to the first chunk some agent lacks and continues
  (``AllReduceRun.rewind``). It reports ``moving`` at the first RESULT after it.
- ``fallback`` from a wire chunk, with an algorithm and every rank's address: no tree
  can serve the job; the agents finish it over TCP (``hosts.fallback``).
- ``abort`` with the reason: the job cannot finish (its workers are cut off from each
  other); the agent fails with that message.
- ``finish``: every agent is done. An agent that is done waits for it (or for the
  channel to close), so that a fault at the very end still finds every agent to
  resend what the others lack.

Agents also report ``stalled`` when their slots make no progress for a while (and
``unstalled`` when they move again): a hint that makes the controller probe sooner and
confirms what its probes say about the job's links, never a verdict of its own.
Without a controller (it died, or is restarting) the job runs on, since the data
plane needs none; the agent reconnects when a new controller listens on the same
path.

Messages are JSON objects, one per line, with an ``op`` (the constants below).
``JobControl`` is the agent's end; ``hosts.worker.Worker`` calls ``tick`` between
batches and ``linger`` at the end of a run.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hosts.protocol import AllReduceError, AllReduceRun
from hosts.transport import Transport

# agent -> controller
HELLO = "hello"  # job, rank, pid, state ("running" or "done")
PROGRESS = "progress"  # seq, next, sent: the answer to a pause
MOVING = "moving"  # seq: the first RESULT after resume seq
STALLED = "stalled"  # waited: no RESULT for that long with chunks outstanding
UNSTALLED = "unstalled"  # RESULTs come again after a stall
DONE = "done"  # end: the run's last wire chunk + 1
# controller -> agent
PAUSE = "pause"  # seq
RESUME = "resume"  # seq, from
FALLBACK = "fallback"  # seq, from, algo, peers (rank order), port
ABORT = "abort"  # error
FINISH = "finish"
_LOST = "_lost"  # not on the wire: the connection closed

POLL = 0.05
"""The longest the worker waits for datagrams before it looks at the channel."""
SAMPLE = 0.05
"""The timeline's sampling period (seconds)."""
PAUSE_LIMIT = 300.0
"""How long a paused agent waits for the controller's next word before it fails."""
LINGER_LIMIT = 15.0
"""How long a finished agent waits for ``finish`` before it leaves anyway: longer than
a switch takes to restart and a job to wait for the fabric to heal (``--hold``)."""
STALL_FLOOR = 0.2
"""A stall is at least this long, and one and a half smoothed RTTs: every chunk in
flight should have had its answer by then."""
FIRST_STALL = 1.0
"""Before its first answer gives the run an RTT, a stall is this long: a job's first
chunks take longer than the rest (a slow switch, a deep tree, the exponent round), and
an agent that called that a stall would vouch for a link the probes only found slow."""


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


class LineReader:
    """Messages out of a byte stream of JSON lines."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        out = []
        for line in lines:
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(msg, dict) and isinstance(msg.get("op"), str):
                out.append(msg)
        return out


class ControlError(AllReduceError):
    """The control channel failed, or the controller aborted the job."""


@dataclass
class ControlReport:
    """What the channel saw, for the agent's stats: every pause with the chunk the
    job continued from, the wire chunks this agent sent again because of it, how it
    went on (``ina`` or the fallback's algorithm), and the progress over time."""

    pauses: list[dict[str, Any]] = field(default_factory=list)
    finished_with: str = "ina"
    fallback: dict[str, Any] | None = None
    stalls: int = 0
    timeline: list[tuple[float, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"pauses": self.pauses, "finished_with": self.finished_with,
                "fallback": self.fallback, "stalls": self.stalls,
                "chunks_resent": sum(p.get("resent", 0) for p in self.pauses),
                "timeline": [[round(t, 4), c] for t, c in self.timeline]}


class JobControl:
    """Rank ``rank``'s end of job ``job_id``'s control channel at ``path``."""

    def __init__(self, path: str, job_id: int, rank: int, *,
                 clock: Callable[[], float] = time.monotonic, retry: float = 0.5,
                 segment: int | None = None) -> None:
        self.path = path
        self.job_id = job_id
        self.rank = rank
        self.clock = clock
        self.retry = retry
        self.segment = segment
        self.commands: queue.Queue[dict[str, Any]] = queue.Queue()
        self.report = ControlReport()
        self.state = "running"
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None
        # per run
        self._t0 = 0.0
        self._next_sample = 0.0
        self._remaining = -1
        self._last_move = 0.0
        self._stalled = False
        self._moving_seq: int | None = None

    # --------------------------------------------------------------- the socket

    def start(self, timeout: float = 5.0) -> JobControl:
        """Connect (and keep reconnecting in the background); ``ControlError`` when the
        controller does not answer within ``timeout`` seconds."""
        self._thread = threading.Thread(target=self._serve, name="ina-control",
                                        daemon=True)
        self._thread.start()
        if not self._connected.wait(timeout):
            self.close()
            raise ControlError(f"job {self.job_id}: no controller listens on {self.path}")
        return self

    def _serve(self) -> None:
        while not self._closed.is_set():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.path)
            except OSError:
                sock.close()
                self._closed.wait(self.retry)
                continue
            with self._lock:
                self._sock = sock
            self.send({"op": HELLO, "job": self.job_id, "rank": self.rank,
                       "pid": os.getpid(), "state": self.state})
            self._connected.set()
            reader = LineReader()
            try:
                while True:
                    data = sock.recv(65536)
                    if not data:
                        break
                    for msg in reader.feed(data):
                        self.commands.put(msg)
            except OSError:
                pass
            with self._lock:
                self._sock = None
            sock.close()
            self._connected.clear()
            self.commands.put({"op": _LOST})
            self._closed.wait(self.retry)

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def send(self, message: dict[str, Any]) -> bool:
        with self._lock:
            if self._sock is None:
                return False
            try:
                self._sock.sendall(encode(message))
            except OSError:
                return False
        return True

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _next(self, timeout: float) -> dict[str, Any] | None:
        try:
            return self.commands.get(timeout=timeout) if timeout > 0 else \
                self.commands.get_nowait()
        except queue.Empty:
            return None

    # ------------------------------------------------------ steering the worker

    def begin(self, run: AllReduceRun, now: float) -> None:
        """A run starts: its timeline counts from ``now``."""
        self.state = "running"
        self._t0 = self._last_move = now
        self._next_sample = now
        self._remaining = run.remaining
        self._stalled = False
        self._sample(run, now)

    def tick(self, run: AllReduceRun, transport: Transport, now: float) -> None:
        """Between two batches: follow the controller's commands (a ``pause`` holds
        the worker here until it may go on), note progress and stalls."""
        if run.remaining != self._remaining:
            if run.remaining < self._remaining or self._remaining < 0:
                self._moved(now)
            self._remaining = run.remaining
        elif run.active and not self._stalled:
            srtt = run.estimator.srtt
            wait = FIRST_STALL if srtt is None else max(STALL_FLOOR, 1.5 * srtt)
            if now - self._last_move > wait:
                self._stalled = True
                self.report.stalls += 1
                self.send({"op": STALLED, "waited": round(now - self._last_move, 4)})
        if now >= self._next_sample:
            self._sample(run, now)
        while (cmd := self._next(0)) is not None:
            self._obey(cmd, run, transport)

    def _moved(self, now: float) -> None:
        self._last_move = now
        if self._stalled:
            self.send({"op": UNSTALLED})
        self._stalled = False
        if self._moving_seq is not None:
            self.send({"op": MOVING, "seq": self._moving_seq, "at": now})
            self._moving_seq = None

    def _sample(self, run: AllReduceRun, now: float) -> None:
        done = (run.end - run.base) - run.remaining
        self.report.timeline.append((now - self._t0, done))
        self._next_sample = now + SAMPLE

    def linger(self, run: AllReduceRun, transport: Transport) -> bool:
        """The run is done: tell the controller and wait for ``finish``. True when the
        controller rewound the run (it must be driven again)."""
        self._sample(run, self.clock())
        self.state = "done"
        if not self.send({"op": DONE, "end": run.end}):
            return False
        deadline = self.clock() + LINGER_LIMIT
        while self.clock() < deadline:
            cmd = self._next(0.05)
            if cmd is None:
                continue
            op = cmd["op"]
            if op in (FINISH, _LOST):
                return False
            self._obey(cmd, run, transport)
            if not run.done:
                self.state = "running"
                return True
            if op in (PAUSE, FALLBACK):  # went on to the end at once
                if not self.send({"op": DONE, "end": run.end}):
                    return False
                deadline = self.clock() + LINGER_LIMIT
        return False

    def _obey(self, cmd: dict[str, Any], run: AllReduceRun, transport: Transport) -> None:
        op = cmd["op"]
        if op == ABORT:
            raise ControlError(str(cmd.get("error") or f"job {self.job_id}: aborted by the "
                                                       "controller"))
        if op == PAUSE:
            self._pause(int(cmd["seq"]), run, transport)
        # resume/fallback out of a pause, finish while running, _lost: nothing to do

    def _pause(self, seq: int, run: AllReduceRun, transport: Transport) -> None:
        """Stop, report, and wait for the controller's decision."""
        run.pause()
        first, sent = run.progress()
        self.send({"op": PROGRESS, "seq": seq, "next": first, "sent": sent})
        paused_at = self.clock()
        record: dict[str, Any] = {"seq": seq, "at": round(paused_at - self._t0, 4),
                                  "next": first, "sent": sent}
        self.report.pauses.append(record)
        while True:
            cmd = self._next(POLL)
            if transport.wait(0.0):
                transport.recv()  # the old tree's stragglers: its cells are gone
            now = self.clock()
            if cmd is None:
                if now - paused_at > PAUSE_LIMIT:
                    raise ControlError(f"job {self.job_id}: paused by the controller and "
                                       f"told nothing for {PAUSE_LIMIT:g} s")
                continue
            op = cmd["op"]
            if op == _LOST:
                raise ControlError(f"job {self.job_id}: the controller went away while "
                                   "the job was paused for a recovery")
            if op == ABORT:
                self._obey(cmd, run, transport)
            if op == PAUSE:  # a second fault during the recovery: report again
                seq = int(cmd["seq"])
                record["seq"] = seq
                self.send({"op": PROGRESS, "seq": seq, "next": first, "sent": sent})
                continue
            if op not in (RESUME, FALLBACK) or int(cmd["seq"]) != seq:
                continue
            start = int(cmd["from"])
            record["from"] = start
            record["resent"] = max(0, sent - start)
            if op == RESUME:
                record["resumed"] = round(now - self._t0, 4)
                self._moving_seq = seq
                self._remaining = run.end - start
                self._last_move = now
                transport.send(run.rewind(start, now))
                return
            self._fallback(cmd, run, now)
            return

    def _fallback(self, cmd: dict[str, Any], run: AllReduceRun, now: float) -> None:
        from hosts.baselines.mesh import MeshError
        from hosts.baselines.tcp import ConnectError, connect_tcp_mesh, parse_peers
        from hosts.fallback import finish_on_hosts

        algo = str(cmd["algo"])
        peers = parse_peers(",".join(cmd["peers"]), int(cmd["port"]))
        try:
            mesh = connect_tcp_mesh(self.rank, peers)
            try:
                t0 = self.clock()
                self.send({"op": MOVING, "seq": int(cmd["seq"]), "at": t0})
                stats = finish_on_hosts(run, int(cmd["from"]), mesh, algo, self.segment)
                seconds = self.clock() - t0
                sent, received = mesh.traffic.bytes_sent, mesh.traffic.bytes_received
            finally:
                mesh.close()
        except (ConnectError, MeshError) as e:
            raise ControlError(f"job {self.job_id}: the fallback to {algo} failed: "
                               f"{e}") from None
        self.report.finished_with = algo
        self.report.fallback = {"algo": algo, "from": stats.start,
                                "at": round(now - self._t0, 4), "chunks": stats.chunks,
                                "exponents": stats.exponents, "seconds": round(seconds, 4),
                                "bytes_sent": sent, "bytes_received": received}
        self._moving_seq = None
