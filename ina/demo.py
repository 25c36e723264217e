"""``ina demo``: the main demo job.

For now it runs the project's IPv4 forwarding program on the built-in switch's engine:
compile, install routes through the runtime interface, send packets, and show where each
one went and how the switch rewrote it.
"""

from __future__ import annotations

import struct
import sys
import time
from pathlib import Path

P4_DIR = Path(__file__).resolve().parent.parent / "p4"


def ipv4_frame(src: str, dst: str, ttl: int = 64, payload: bytes = b"hello") -> bytes:
    """An Ethernet/IPv4/UDP frame with a correct IPv4 header checksum."""
    def addr(a: str) -> bytes:
        return bytes(int(x) for x in a.split("."))

    udp = struct.pack("!HHHH", 40000, 9999, 8 + len(payload), 0) + payload
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, ttl, 17, 0,
                         addr(src), addr(dst))
    header = header[:10] + struct.pack("!H", csum16(header)) + header[12:]
    eth = bytes.fromhex("00000000aa01" "000000000001" "0800")
    return eth + header + udp


def csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def run_demo() -> int:
    from switch.engine.runtime import Lpm
    from switch.frontend import CompileError, compile_file
    from switch.v1model import V1Switch

    source = P4_DIR / "ipv4_forward.p4"
    print(f"compiling {source.relative_to(P4_DIR.parent)}")
    try:
        program = compile_file(source)
    except CompileError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"  tables: {', '.join(program.tables)}")
    switch = V1Switch(program)
    routes = [("10.0.1.0", 24, 1, 0x00000000_0101), ("10.0.2.0", 24, 2, 0x00000000_0202),
              ("10.0.2.128", 25, 3, 0x00000000_0203)]
    for net, plen, port, mac in routes:
        value = int.from_bytes(bytes(int(x) for x in net.split(".")), "big")
        switch.table_add("ipv4_lpm", [Lpm(value, plen)], "forward", [port, mac])
        print(f"  route {net}/{plen} -> port {port}")

    print("sending packets from port 0:")
    for dst, ttl in [("10.0.1.7", 64), ("10.0.2.7", 64), ("10.0.2.200", 64), ("10.9.9.9", 64),
                     ("10.0.1.7", 1)]:
        out = switch.inject(0, ipv4_frame("10.0.0.1", dst, ttl))
        if not out:
            print(f"  {dst:<11} ttl={ttl:<3} -> dropped")
        for port, data in out:
            print(f"  {dst:<11} ttl={ttl:<3} -> port {port}, ttl now {data[22]},"
                  f" checksum {'ok' if csum16(data[14:34]) == 0 else 'BAD'}")

    frame = ipv4_frame("10.0.0.1", "10.0.2.7")
    count = 20000
    start = time.perf_counter()
    for _ in range(count):
        switch.inject(0, frame)
    elapsed = time.perf_counter() - start
    print(f"engine throughput: {count / elapsed:,.0f} packets/s (IPv4 LPM forwarding, one core)")
    return 0
