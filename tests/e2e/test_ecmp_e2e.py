"""ECMP end to end on ``leafspine,2,2,2`` (leaves s1: h1, h2 and s2: h3, h4; spines s3,
s4 on the leaves' ports 3 and 4), on the built-in switch and on BMv2, as ``ina run``
sets the network up (``p4/aggregation.p4``, the controller's routes with ECMP groups).

Eight TCP flows from h1 to h3, from eight source ports, each carry 1 MB that h3 checks
(SHA-256); every flow crosses the spine its 5-tuple's crc16 picks, so s1 sends each
flow's bytes on the predicted uplink and both uplinks carry traffic. The uplinks' bytes
are the switch interfaces' counters (the same on both targets), and on the built-in
switch its own port counters too.
"""

from __future__ import annotations

import json
import struct
import sys
import textwrap
from pathlib import Path

import pytest
from tree_helpers import network_fixture

from experiments.allreduce_net import AllReduceNet
from experiments.run_allreduce import counter_delta, switch_counters
from switch.engine.hashes import crc16

pytestmark = pytest.mark.slow

FLOW_BYTES = 1 << 20
SOURCE_PORTS = list(range(40000, 40008))
SERVER_PORT = 5001
UPLINKS = {3: "s3", 4: "s4"}  # s1's ports to the spines, in ecmp_nhop's member order

SERVER = textwrap.dedent('''
    import hashlib, socket, sys, threading
    port, flows = int(sys.argv[1]), int(sys.argv[2])
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(flows)
    print("ready", flush=True)
    s.settimeout(60)

    def serve(conn):
        digest, count = hashlib.sha256(), 0
        while True:
            data = conn.recv(65536)
            if not data:
                break
            digest.update(data)
            count += len(data)
        conn.sendall(f"{digest.hexdigest()} {count}".encode())
        conn.close()

    threads = []
    for _ in range(flows):
        conn, _ = s.accept()
        conn.settimeout(60)
        threads.append(threading.Thread(target=serve, args=(conn,)))
        threads[-1].start()
    for t in threads:
        t.join()
''')

CLIENT = textwrap.dedent('''
    import hashlib, json, random, socket, sys, threading
    dst, port, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    results = {}

    def flow(sport):
        data = random.Random(sport).randbytes(size)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(60)
        s.bind(("0.0.0.0", sport))
        s.connect((dst, port))
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := s.recv(256):
            reply += chunk
        s.close()
        results[sport] = reply.decode() == f"{hashlib.sha256(data).hexdigest()} {size}"

    threads = [threading.Thread(target=flow, args=(int(p),)) for p in sys.argv[4:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(results), flush=True)
''')


net = network_fixture("leafspine,2,2,2", "ecmp")


def spine_of(sport: int) -> str:
    """The spine s1's ECMP group sends the flow h1:sport -> h3:SERVER_PORT to."""
    key = struct.pack("!4s4sBHH", bytes([10, 0, 0, 1]), bytes([10, 0, 0, 3]), 6, sport,
                      SERVER_PORT)
    return list(UPLINKS.values())[crc16(key) % len(UPLINKS)]


def tx_bytes(net: AllReduceNet, switch: str) -> dict[int, int]:
    """The bytes every uplink interface of ``switch`` has sent (kernel counters)."""
    node = net.net.get(switch)
    return {port: int(Path(f"/sys/class/net/{node.intfs[port].name}/statistics/tx_bytes")
                      .read_text()) for port in UPLINKS}


def run_flows(net: AllReduceNet) -> dict[int, bool]:
    h1, h3 = net.net.get("h1"), net.net.get("h3")
    server = h3.popen([sys.executable, "-c", SERVER, str(SERVER_PORT),
                       str(len(SOURCE_PORTS))], text=True)
    try:
        assert server.stdout.readline().strip() == "ready"
        client = h1.popen([sys.executable, "-c", CLIENT, h3.IP(), str(SERVER_PORT),
                           str(FLOW_BYTES), *map(str, SOURCE_PORTS)], text=True)
        out, err = client.communicate(timeout=180)
        assert client.returncode == 0, err
        _, err = server.communicate(timeout=60)
        assert server.returncode == 0, err
    finally:
        for p in (server,):
            if p.poll() is None:
                p.kill()
                p.wait()
    return {int(k): v for k, v in json.loads(out).items()}


def test_tcp_flows_take_the_spine_their_hash_picks(net: AllReduceNet) -> None:
    predicted = {sport: spine_of(sport) for sport in SOURCE_PORTS}
    assert set(predicted.values()) == {"s3", "s4"}  # the ports are chosen for that
    before, counters_before = tx_bytes(net, "s1"), switch_counters(net)
    results = run_flows(net)
    after = tx_bytes(net, "s1")
    assert results == {sport: True for sport in SOURCE_PORTS}  # every byte arrived intact
    sent = {port: after[port] - before[port] for port in UPLINKS}
    for port, spine in UPLINKS.items():
        data = FLOW_BYTES * sum(s == spine for s in predicted.values())
        # the flows' data plus their TCP/IP/Ethernet headers (under 5%) and handshakes
        assert data <= sent[port] <= data * 1.1 + 100_000, (port, spine, sent, predicted)
    if net.target == "builtin":
        delta = counter_delta(counters_before, switch_counters(net))
        ports = {p["port"]: p for p in delta["s1"]["ports"]}
        for port in UPLINKS:
            assert ports[port]["tx_bytes"] == pytest.approx(sent[port], rel=0.02)

