"""A network's switch processes end when the process that started them dies, even by
SIGKILL (which leaves it no chance to stop them): left behind, they would hold ports and
take CPU from every later measurement. On the built-in switch and on BMv2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from experiments.allreduce_net import need_root, target_missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

STARTER = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path
    from experiments.allreduce_net import AllReduceNet
    net = AllReduceNet("star,2", Path(sys.argv[1]), target=sys.argv[2]).start()
    print(json.dumps([sw.process.pid for sw in net.switches()]), flush=True)
    time.sleep(600)
''')


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.parametrize("target", ["builtin", "bmv2"])
def test_switches_end_when_their_starter_is_killed(tmp_path: Path, target: str) -> None:
    why = need_root() or target_missing(target)
    if why:
        pytest.skip(why)
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path), target],
                               stdout=subprocess.PIPE, text=True, cwd=ROOT)
    pids: list[int] = []
    try:
        line = starter.stdout.readline() if starter.stdout else ""
        assert line, "the network did not start"
        pids += json.loads(line)
        assert len(pids) == 1 and alive(pids[0])
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=10)
        deadline = time.monotonic() + 20
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(alive(p) for p in pids), f"switch processes left behind: {pids}"
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
