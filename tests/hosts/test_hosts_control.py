"""The control channel end to end, in one process: real ``Worker``s with their
``JobControl`` over in-memory transports to the switch model, and a controller made of
``controller.agent_hub.AgentHub`` that pauses the job when the switch fails and then
resumes it on a fresh switch, has it finish over TCP, or aborts it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from switch_model import single_switch

from controller.agent_hub import AgentHub, AgentLink
from hosts.control import ControlError, JobControl
from hosts.protocol import AllReduceRun, WorkerSettings
from hosts.transport import InMemoryTransport
from hosts.worker import Worker

K = 16
JOB = 7
N = 3
SETTINGS = WorkerSettings(k=K, window=8, timeout=0.02, min_timeout=0.005, max_timeout=0.2)


def inputs(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(4)
    return [rng.standard_normal(size).astype(np.float32) for _ in range(N)]


class ModelNet:
    """The switch model behind in-memory transports; after ``fail_after`` packets it
    fails (everything is lost) until ``repair``."""

    def __init__(self, fail_after: int, drop: bool = True) -> None:
        self.drop = drop
        self.lock = threading.Lock()
        self.switch = single_switch(JOB, N, K)
        self.transports = [InMemoryTransport(lambda p, i=i: self.deliver(i, p))
                           for i in range(N)]
        self.count = 0
        self.fail_after = fail_after
        self.down = False
        self.failed = threading.Event()

    def deliver(self, i: int, payload: bytes) -> None:
        with self.lock:
            self.count += 1
            if self.count == self.fail_after:
                self.down = self.drop
                self.failed.set()
            if self.down:
                return
            outs = self.switch.process(i + 1, payload)
        for port, out in outs:
            self.transports[port - 1].put(out)

    def repair(self) -> None:
        with self.lock:
            self.switch = single_switch(JOB, N, K)  # a fresh switch: empty cells
            self.down = False


class TestController:
    """Collects the agents' messages; ``send`` to every rank."""

    __test__ = False

    def __init__(self, path: Path) -> None:
        self.links: dict[int, AgentLink] = {}
        self.messages: list[tuple[int, dict[str, Any]]] = []
        self.cond = threading.Condition()
        self.hub = AgentHub(path, self.on_message, lambda link: None).start()

    def on_message(self, link: AgentLink, msg: dict[str, Any]) -> None:
        with self.cond:
            assert link.rank is not None
            if msg["op"] == "hello":
                self.links[link.rank] = link
            self.messages.append((link.rank, msg))
            self.cond.notify_all()

    def wait(self, op: str, count: int = N, timeout: float = 20.0) -> list[dict[str, Any]]:
        def found() -> list[dict[str, Any]]:
            return [m for _, m in self.messages if m["op"] == op]
        with self.cond:
            assert self.cond.wait_for(lambda: len(found()) >= count, timeout), (op, self.messages)
            return found()

    def send(self, msg: dict[str, Any]) -> None:
        for link in self.links.values():
            assert link.send(msg)


def run_workers(path: Path, net: ModelNet, xs: list[np.ndarray]
                ) -> tuple[list[Any], list[JobControl], list[threading.Thread]]:
    controls = [JobControl(str(path), JOB, r) for r in range(N)]
    results: list[Any] = [None] * N

    def body(r: int) -> None:
        worker = Worker(net.transports[r], JOB, N, SETTINGS, control=controls[r].start())
        try:
            results[r] = worker.allreduce(xs[r]).values
        except ControlError as e:
            results[r] = e
        finally:
            controls[r].close()

    threads = [threading.Thread(target=body, args=(r,)) for r in range(N)]
    for t in threads:
        t.start()
    return results, controls, threads


def reference(xs: list[np.ndarray]) -> list[np.ndarray]:
    runs = [AllReduceRun(x, JOB, N, SETTINGS) for x in xs]
    sw = single_switch(JOB, N, K)
    inbox: list[list[bytes]] = [[] for _ in runs]

    def send(i: int, payloads: list[bytes]) -> None:
        for p in payloads:
            for port, out in sw.process(i + 1, p):
                inbox[port - 1].append(out)

    for i, r in enumerate(runs):
        send(i, r.start(0.0))
    while any(inbox):
        for i, r in enumerate(runs):
            got, inbox[i] = inbox[i], []
            if got:
                send(i, r.on_packets(got, 0.0))
    return [r.result() for r in runs]


def short_path(tmp_path: Path) -> Path:
    return Path("/tmp") / f"ina-test-control-{id(tmp_path)}.sock"


def scenario(tmp_path: Path, recover: Callable[[TestController, ModelNet], None],
             drop: bool = True) -> tuple[list[Any], list[JobControl], TestController]:
    path = short_path(tmp_path)
    ctl = TestController(path)
    try:
        net = ModelNet(fail_after=450, drop=drop)
        xs = inputs(300 * K)
        results, controls, threads = run_workers(path, net, xs)
        ctl.wait("hello")
        assert net.failed.wait(20)
        recover(ctl, net)
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
        return results, controls, ctl
    finally:
        ctl.hub.close()


def test_paused_and_resumed_on_a_fresh_switch(tmp_path: Path) -> None:
    xs = inputs(300 * K)
    expected = reference(xs)

    def recover(ctl: TestController, net: ModelNet) -> None:
        ctl.wait("stalled", count=1)  # the agents' hint: no progress for a while
        ctl.send({"op": "pause", "seq": 1})
        answers = ctl.wait("progress")
        start = min(a["next"] for a in answers)
        net.repair()
        ctl.send({"op": "resume", "seq": 1, "from": start})
        ctl.wait("moving", count=1)
        ctl.wait("done")
        ctl.send({"op": "finish"})

    results, controls, ctl = scenario(tmp_path, recover)
    for got, want in zip(results, expected, strict=True):
        assert isinstance(got, np.ndarray), got
        assert got.tobytes() == want.tobytes()
    answers = [m for _, m in ctl.messages if m["op"] == "progress"]
    start = min(a["next"] for a in answers)
    for c in controls:
        report = c.report.to_json()
        assert report["finished_with"] == "ina"
        [pause] = report["pauses"]
        assert pause["from"] == start
        assert report["chunks_resent"] == pause["sent"] - start >= 0
        assert report["stalls"] >= 1
        assert report["timeline"][0][1] == 0


def test_finished_on_the_hosts(tmp_path: Path) -> None:
    xs = inputs(300 * K)
    expected = reference(xs)
    ports = [free_port() for _ in range(N)]

    def recover(ctl: TestController, net: ModelNet) -> None:
        ctl.send({"op": "pause", "seq": 1})
        start = min(a["next"] for a in ctl.wait("progress"))
        ctl.send({"op": "fallback", "seq": 1, "from": start, "algo": "ring",
                  "peers": [f"127.0.0.1:{p}" for p in ports], "port": 1})
        ctl.wait("done")
        ctl.send({"op": "finish"})

    results, controls, _ = scenario(tmp_path, recover)
    for got, want in zip(results, expected, strict=True):
        assert isinstance(got, np.ndarray), got
        assert got.tobytes() == want.tobytes()
    report = controls[0].report.to_json()
    assert report["finished_with"] == "ring"
    assert report["fallback"]["chunks"] > 0
    assert report["fallback"]["bytes_sent"] > 0


def test_aborted_with_the_controller_s_reason(tmp_path: Path) -> None:
    def recover(ctl: TestController, net: ModelNet) -> None:
        ctl.send({"op": "pause", "seq": 1})
        ctl.wait("progress")
        ctl.send({"op": "abort", "error": "job 7: h1 is cut off from the other workers"})

    results, _, _ = scenario(tmp_path, recover)
    for got in results:
        assert isinstance(got, ControlError)
        assert str(got) == "job 7: h1 is cut off from the other workers"


def test_without_a_controller_the_job_goes_on(tmp_path: Path) -> None:
    """The controller dies during the run: nothing stops, nobody waits for it."""
    xs = inputs(300 * K)
    expected = reference(xs)

    def recover(ctl: TestController, net: ModelNet) -> None:
        ctl.hub.close()

    results, controls, _ = scenario(tmp_path, recover, drop=False)
    for got, want in zip(results, expected, strict=True):
        assert isinstance(got, np.ndarray), got
        assert got.tobytes() == want.tobytes()


def test_no_controller_at_the_start_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ControlError, match="no controller listens on"):
        JobControl(str(short_path(tmp_path)), JOB, 0, retry=0.05).start(timeout=0.2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Run:
    """What ``JobControl.tick`` reads of a run that has chunks out and no answer."""

    def __init__(self, srtt: float | None) -> None:
        self.remaining, self.active, self.end, self.base = 100, True, 100, 0
        self.estimator = type("Estimator", (), {"srtt": srtt})()


@pytest.mark.parametrize("srtt, quiet_until, stalled_at", [
    (None, 0.99, 1.01),  # no answer yet: the first chunks may take long
    (0.01, 0.19, 0.21),  # a fast run: 200 ms
    (0.5, 0.74, 0.76),  # a slow one: 1.5 smoothed RTTs
])
def test_a_stall_is_reported_after_the_run_could_expect_an_answer(
        srtt: float | None, quiet_until: float, stalled_at: float) -> None:
    sent: list[dict[str, Any]] = []
    control = JobControl("/nonexistent", JOB, 0)
    control.send = lambda message: bool(sent.append(message)) or True  # type: ignore[method-assign]
    run = _Run(srtt)
    control.begin(run, 0.0)  # type: ignore[arg-type]
    control.tick(run, None, quiet_until)  # type: ignore[arg-type]
    assert [m["op"] for m in sent] == []
    control.tick(run, None, stalled_at)  # type: ignore[arg-type]
    assert [m["op"] for m in sent] == ["stalled"]
