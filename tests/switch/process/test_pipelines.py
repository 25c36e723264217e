"""``ina switch --pipelines N``: a program with a ``@pipeline_key`` field runs as N
pipelines (processes) that the kernel feeds by the key, and P4Runtime still sees one
switch: a table entry reaches every pipeline, a register element reads from the
pipeline that changed it, a counter reads as the pipelines' sum. A program without the
annotation, and options the pipelines cannot share, are refused with the reason."""

from __future__ import annotations

import select
import socket
import struct
import time
from pathlib import Path

import pytest
from readme_sections import section
from switchproc_helpers import ROOT, SwitchProc, ina, need_root, veth_pairs

from controller import P4RuntimeClient, TableEntry
from controller.values import Exact

KEYED = Path(__file__).resolve().parent / "programs" / "keyed_totals.p4"
DST = 0x0200000000DD
ETH_KEYED = 0x88B5


def _frame(key: int, value: int) -> bytes:
    return (DST.to_bytes(6, "big") + bytes.fromhex("020000000001") + ETH_KEYED.to_bytes(2, "big")
            + struct.pack("!HII", key, value, 0))


def _receive(sock: socket.socket, want: int, timeout: float = 10.0) -> list[bytes]:
    out: list[bytes] = []
    end = time.monotonic() + timeout
    while len(out) < want and time.monotonic() < end:
        if not select.select([sock], [], [], 0.2)[0]:
            continue
        while True:
            try:
                frame = sock.recv(2048, socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            if frame[12:14] == ETH_KEYED.to_bytes(2, "big"):
                out.append(frame)
    return out


def _host(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.setsockopt(263, 23, 1)  # PACKET_IGNORE_OUTGOING
    s.bind((iface, 3))
    return s


@pytest.mark.slow
@pytest.mark.parametrize("pipelines", [2, 3])
def test_several_pipelines_are_one_switch(tmp_path: Path, pipelines: int) -> None:
    need_root()
    with veth_pairs(2) as pairs:
        sw = SwitchProc(tmp_path, [str(KEYED), "--pipelines", str(pipelines),
                                   *[a for i, (s, _) in enumerate(pairs)
                                     for a in ("-i", f"{i + 1}@{s}")]])
        src, sink = _host(pairs[0][1]), _host(pairs[1][1])
        try:
            sw.wait_ready()
            assert f"{pipelines} pipelines" in sw.stderr
            with P4RuntimeClient(sw.address, device_id=0) as client:
                client.fetch_pipeline()
                src.send(_frame(1, 5))
                assert _receive(sink, 1, timeout=1.0) == []  # no route yet
                client.insert(TableEntry("next_hop", {"h.eth.dst": Exact(DST)}, "to",
                                         {"port": 2}))
                keys = list(range(16))
                expected: dict[int, int] = {1: 5}
                for rnd in range(3):
                    for k in keys:
                        src.send(_frame(k, 100 * rnd + k))
                        expected[k] = expected.get(k, 0) + 100 * rnd + k
                out = _receive(sink, 3 * len(keys))
                assert len(out) == 3 * len(keys)
                totals: dict[int, list[int]] = {}
                for f in out:
                    key, _value, total = struct.unpack("!HII", f[14:24])
                    totals.setdefault(key, []).append(total)
                # each key's totals run in order: all its frames went to one pipeline
                for k in keys:
                    assert max(totals[k]) == expected[k], (k, totals[k])
                regs = client.read_register("totals")
                assert {k: regs[k] for k in keys} == {k: expected[k] for k in keys}
                counts = client.read_counter("seen")
                assert {k: counts[k].packets for k in keys} == \
                    {k: 3 + (k == 1) for k in keys}
                # a controller's write reaches the pipeline that owns the element
                client.write_register("totals", 3, 1000)
                assert client.read_register("totals", 3) == {3: 1000}
                src.send(_frame(3, 5))
                (f,) = _receive(sink, 1)
                assert struct.unpack("!HII", f[14:24]) == (3, 5, 1005)
                assert client.read_register("totals", 3) == {3: 1005}
            cli = sw.cli("counters", "--json")
            assert cli.returncode == 0, cli.stderr
            assert f'"rx_packets": {3 * len(keys) + 2}' in cli.stdout, cli.stdout
        finally:
            src.close()
            sink.close()
            code = sw.stop()
        assert code == 0, sw.stderr


def test_a_program_without_a_key_runs_one_pipeline(tmp_path: Path) -> None:
    need_root()
    with veth_pairs(1) as pairs:
        sw = SwitchProc(tmp_path, [str(ROOT / "p4" / "ipv4_forward.p4"), "--pipelines", "2",
                                   "-i", f"1@{pairs[0][0]}"])
        code = sw.proc.wait(timeout=120)
        sw.stop()
    assert code == 1
    assert "--pipelines 2: " in sw.stderr and "annotates no header field @pipeline_key" \
        in sw.stderr, sw.stderr
    assert "Traceback" not in sw.stderr


def test_options_several_pipelines_cannot_share() -> None:
    for extra, what in ((["--no-p4"], "needs the program on the command line"),
                        ([str(KEYED), "--pcap", "/tmp"], "--pcap exclude each other"),
                        ([str(KEYED), "--", "--cpu-port", "64"], "--cpu-port exclude each other")):
        result = ina("switch", "--pipelines", "2", *extra, timeout=60)
        assert result.returncode == 2, result.stderr
        assert what in result.stderr, result.stderr


@pytest.mark.slow
def test_readme_pipelines_command_runs_as_written(tmp_path: Path) -> None:
    need_root()
    (line,) = [ln for ln in section("Starting the switch by hand").splitlines()
               if "--pipelines" in ln and ln.startswith(".venv/bin/ina switch ")]
    argv = line.rstrip(" &").split()[2:]
    with veth_pairs(2) as pairs:
        argv = [a.replace("veth1", pairs[0][0]).replace("veth2", pairs[1][0]) for a in argv]
        cut = argv.index("--")
        sw = SwitchProc(tmp_path, argv[:cut])  # its own control socket and gRPC port
        try:
            sw.wait_ready()
            assert "program " in sw.stderr and ", 2 pipelines," in sw.stderr, sw.stderr
        finally:
            code = sw.stop()
    assert code == 0, sw.stderr
