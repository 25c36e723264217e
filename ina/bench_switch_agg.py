"""``ina bench switch`` on an aggregation program: contributions in, RESULTs out.

The switch gets N worker ports (``--workers``, the far ends of N veth pairs). The
project's controller installs job 1 over P4Runtime, on a one-switch topology of these
N workers, as ``ina ctl job create`` does on a star: its ``ina_job`` rows, multicast
group, ``ina_result_rewrite`` rows and zeroed register cells. The job has S slots,
S = the window (``--window``, default 64, as the workers' default).

One thread plays every worker. Chunk c is sent by all N workers, in turn, as slot
c mod S, version (c div S) mod 2, with the same K values per worker for every chunk
(K is read from the program's ``ina_lane_*`` registers), and is complete when every
worker has its RESULT. Two phases, figures only:

- latency: one chunk at a time;
- throughput: ``--count`` contributions (``count / N`` chunks), with at most S
  chunks in flight: chunk c goes out once every chunk up to c - S is complete, as the
  workers' window works. Printed: contributions/s in, RESULTs/s out, the goodput
  (K float32-equivalent values = 32 K bits reduced per complete chunk, per second:
  the rate at which each worker's tensor is all-reduced) and the per-chunk latency
  under that load.

A chunk's latency runs from its first contribution sent to its last RESULT received,
so it includes the time the sender takes to send the N contributions. There is no
retransmission: a second without any RESULT ends a phase, and the figures say how many
chunks completed. Every RESULT's values are compared with the exact sum.
"""

from __future__ import annotations

import re
import select
import socket
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from p4.config.v1 import p4info_pb2

from controller.controller import Controller
from controller.errors import P4RuntimeClientError
from controller.jobs import JobError
from controller.topology import Topology, TopologyError
from hosts.frame import FRAME_OVERHEAD, Endpoints, build_frame
from hosts.wire import FLAG_RESULT, HEADER, HEADER_SIZE, INA_UDP_PORT, VALUE_DTYPE
from ina.switch_under_test import (
    Figures,
    RunningSwitch,
    cpu_text,
    host_socket,
    percentiles_text,
    print_port_counters,
)

JOB_ID = 1
LATENCY_CHUNKS = 200
STALL_S = 1.0  # a phase ends after this long without a RESULT
_LANE = re.compile(r"(^|\.)ina_lane_(\d+)$")
_PORT = INA_UDP_PORT.to_bytes(2, "big")
_FLAGS_AT = FRAME_OVERHEAD + 5
_CHUNK_AT = FRAME_OVERHEAD + 8
_VALUES_AT = FRAME_OVERHEAD + HEADER_SIZE


def lanes(info: p4info_pb2.P4Info) -> int:
    """K: the number of ``ina_lane_<i>`` registers of the program (0 if none)."""
    return sum(1 for r in info.registers if _LANE.search(r.preamble.name))


def worker_topology(address: str, workers: int) -> Topology:
    """Switch ``s1`` (device 0 at ``address``) with worker ``w<i>`` on port i."""
    return Topology.from_json({
        "hosts": [{"name": f"w{i}", "ip": f"10.0.0.{i}", "mac": f"02:00:00:00:00:{i:02x}"}
                  for i in range(1, workers + 1)],
        "switches": [{"name": "s1", "device_id": 0, "grpc_address": address}],
        "links": [[f"w{i}", f"s1:{i}"] for i in range(1, workers + 1)],
    }, "benchmark topology")


@dataclass
class Phase:
    """What one phase measured (chunks numbered from ``first``)."""

    first: int
    chunks: int
    workers: int
    sent_at: dict[int, float] = field(default_factory=dict)
    results: dict[int, int] = field(default_factory=dict)  # chunk -> RESULTs received
    latencies_ms: list[float] = field(default_factory=list)
    result_frames: int = 0
    wrong: int = 0
    contributions: int = 0
    seconds: float = 0.0

    @property
    def complete(self) -> int:
        return len(self.latencies_ms)


class Workers:
    """The N workers' raw sockets and their pre-built frames."""

    def __init__(self, sw: RunningSwitch, topo: Topology, aggregator: str, k: int):
        self.k = k
        self.socks: list[socket.socket] = []
        self.prefixes: list[bytes] = []
        self.values: list[bytes] = []
        switch_mac = topo.switches["s1"].mac
        total = np.zeros(k, dtype=np.int64)
        for i, (_, far_end) in enumerate(sw.pairs[:len(topo.hosts)]):
            host = topo.hosts[f"w{i + 1}"]
            ep = Endpoints.make(host.mac, switch_mac, host.ip, aggregator)
            self.prefixes.append(build_frame(ep, bytes(HEADER_SIZE + 4 * k))[:FRAME_OVERHEAD])
            values = np.arange(k, dtype=np.int64) * (i + 1) + 1000 * i
            total += values
            self.values.append(values.astype(VALUE_DTYPE).tobytes())
            self.socks.append(host_socket(far_end))
        self.expected = total.astype(VALUE_DTYPE).tobytes()
        self.by_fd = {s.fileno(): i for i, s in enumerate(self.socks)}

    def close(self) -> None:
        for s in self.socks:
            s.close()

    def send_chunk(self, chunk: int, slots: int) -> None:
        slot, version = chunk % slots, (chunk // slots) % 2
        for sock, prefix, values in zip(self.socks, self.prefixes, self.values, strict=True):
            sock.send(prefix + HEADER.pack(JOB_ID, slot, version, 0, 0, 0, chunk) + values)

    def receive(self, phase: Phase, wait: float) -> int:
        """Take the RESULTs that arrive within ``wait`` seconds; how many."""
        ready = select.select(self.socks, [], [], wait)[0]
        got = 0
        for sock in ready:
            while True:
                try:
                    frame = sock.recv(4096, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                if self._is_result(frame):
                    got += 1
                    self._count(phase, frame, time.perf_counter())
        return got

    def _is_result(self, frame: bytes) -> bool:
        return (len(frame) >= _VALUES_AT and frame[12:14] == b"\x08\x00" and frame[23] == 17
                and frame[36:38] == _PORT and bool(frame[_FLAGS_AT] & FLAG_RESULT))

    def _count(self, phase: Phase, frame: bytes, now: float) -> None:
        chunk = int.from_bytes(frame[_CHUNK_AT:_CHUNK_AT + 4], "big")
        if chunk not in phase.sent_at:
            return  # an earlier phase's
        phase.result_frames += 1
        if frame[_VALUES_AT:_VALUES_AT + 4 * self.k] != self.expected:
            phase.wrong += 1
        n = phase.results.get(chunk, 0) + 1
        phase.results[chunk] = n
        if n == phase.workers:
            phase.latencies_ms.append((now - phase.sent_at[chunk]) * 1000)


def drive(workers: Workers, first: int, chunks: int, window: int, slots: int) -> Phase:
    """Send chunks first .. first + chunks - 1 with at most ``window`` in flight."""
    phase = Phase(first, chunks, len(workers.socks))
    end = first + chunks
    low = nxt = first  # the oldest incomplete chunk, the next one to send
    start = time.perf_counter()
    while low < end:
        while nxt < end and nxt < low + window:
            phase.sent_at[nxt] = time.perf_counter()
            workers.send_chunk(nxt, slots)
            phase.contributions += phase.workers
            nxt += 1
        if not workers.receive(phase, STALL_S):
            break
        while low < end and phase.results.get(low, 0) >= phase.workers:
            low += 1
    phase.seconds = time.perf_counter() - start
    phase.latencies_ms.sort()
    return phase


def _latency_line(phase: Phase) -> str:
    text = percentiles_text(phase.latencies_ms) if phase.latencies_ms else "none complete"
    return f"{phase.complete} of {phase.chunks} chunks complete): {text}"


def bench_aggregation(sw: RunningSwitch, info: p4info_pb2.P4Info, workers: int,
                      window: int, count: int) -> tuple[int, Figures | None]:
    """Install the job, run both phases and print the figures; the exit status and
    the headline figures."""
    k = lanes(info)
    if not k:
        print("ina bench switch: the program has the ina_job table but no ina_lane_<i> "
              "registers, so the number of values per packet is unknown", file=sys.stderr)
        return 1, None
    try:
        topo = worker_topology(sw.address, workers)
        with Controller(topo) as ctl:
            ctl.use_running_pipeline()
            job = ctl.create_job(JOB_ID, list(topo.hosts), slots=window)
    except (JobError, TopologyError, P4RuntimeClientError) as e:
        print(f"ina bench switch: cannot install the job: {e}", file=sys.stderr)
        return 1, None
    print(f"aggregation: job {JOB_ID}, {workers} workers on ports 1..{workers}, K={k} "
          f"values per contribution, {window} slots")
    socks = Workers(sw, topo, job.aggregator["w1"], k)
    try:
        lat = drive(socks, 0, LATENCY_CHUNKS, 1, window)
        print(f"latency, one chunk at a time ({_latency_line(lat)}")
        chunks = max(1, count // workers)
        cpu = sw.cpu_seconds()
        run = drive(socks, LATENCY_CHUNKS, chunks, window, window)
        cpu = sw.cpu_seconds() - cpu
    finally:
        socks.close()
    seconds = run.seconds or float("inf")
    print(f"throughput, window of {window} chunks: {run.contributions / seconds:,.0f} "
          f"contributions/s in, {run.result_frames / seconds:,.0f} results/s out "
          f"({run.complete} of {chunks} chunks complete in {run.seconds:.2f} s; "
          f"{cpu_text(cpu, run.seconds, run.contributions)})")
    print(f"goodput: {run.complete * k * 32 / seconds / 1e6:.2f} Mbit/s of float32 values "
          f"reduced ({run.complete * k / seconds:,.0f} values/s per worker)")
    print(f"latency per chunk under load ({_latency_line(run)}")
    if run.complete < chunks:
        print(f"the throughput phase stopped after {STALL_S:.0f} s without a RESULT: frames "
              "were lost, and the benchmark does not send them again (BMv2 loses some when "
              "many wait at a port: try a smaller --window)")
    wrong = lat.wrong + run.wrong
    total = lat.result_frames + run.result_frames
    print(f"results: {total} RESULTs received, {wrong} with a wrong sum")
    print_port_counters(sw)
    p50 = lat.latencies_ms[len(lat.latencies_ms) // 2] if lat.latencies_ms else None
    return 0, Figures(sw.target, run.contributions / seconds, "contributions/s", cpu,
                      run.seconds, run.contributions, p50,
                      f"{run.complete} of {chunks} chunks")
