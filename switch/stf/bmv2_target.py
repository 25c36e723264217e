"""The BMv2 target: ``p4c-bm2-ss`` compiles the program (P4Info and BMv2 JSON), a fresh
``simple_switch_grpc`` runs it (``switch.stf.bmv2_process``), and the controller's
P4Runtime client pushes the pipeline; the runner drives ``switch.stf.bmv2_switch``."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from switch.stf.target import Loaded, LoadError

if TYPE_CHECKING:
    from switch.stf.bmv2_process import BMv2Process

TOOLS = ("simple_switch_grpc", "p4c-bm2-ss")
CONNECT_TIMEOUT_S = 20.0


def missing_tools() -> str | None:
    """Why the BMv2 target cannot run here (None when it can)."""
    absent = [t for t in TOOLS if shutil.which(t) is None]
    if not absent:
        return None
    return (f"ina stf --target bmv2 needs simple_switch_grpc and p4c-bm2-ss on PATH "
            f"({' and '.join(absent)} not found)")


def p4c_command(program: Path, include_dirs: Sequence[str | Path],
                defines: Mapping[str, str | None], out: Path) -> list[str]:
    cmd = ["p4c-bm2-ss", "--p4runtime-files", str(out / "program.p4info.txtpb"),
           "-o", str(out / "program.json")]
    for d in include_dirs:
        cmd += ["-I", str(d)]
    for name, value in defines.items():
        cmd += ["-D", name if value is None else f"{name}={value}"]
    return cmd + [str(program)]


class BMv2Target:
    name = "bmv2"

    def load(self, program: Path, include_dirs: Sequence[str | Path],
             defines: Mapping[str, str | None], *, seed: int, trace: bool) -> Loaded:
        """``seed`` is ignored: BMv2's random numbers cannot be seeded."""
        why = missing_tools()
        if why is not None:
            raise LoadError("start", f"error: {why}")
        from switch.stf.bmv2_process import BMv2Process

        process = BMv2Process(debug_log=trace)
        try:
            warnings = self._compile(program, include_dirs, defines, process.workdir)
            return self._start(process, warnings)
        except BaseException:
            process.remove()
            raise

    def _compile(self, program: Path, include_dirs: Sequence[str | Path],
                 defines: Mapping[str, str | None], out: Path) -> list[str]:
        cmd = p4c_command(program, include_dirs, defines, out)
        try:
            done = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise LoadError("start", f"error: cannot run p4c-bm2-ss: {e.strerror}") from None
        text = (done.stderr + done.stdout).strip()
        if done.returncode != 0:
            raise LoadError("compile", text or f"p4c-bm2-ss failed with status "
                                               f"{done.returncode}")
        return text.splitlines() if text else []

    def _start(self, process: BMv2Process, warnings: list[str]) -> Loaded:
        from controller.errors import P4RuntimeClientError
        from controller.p4info_schema import load_p4info
        from controller.p4runtime_client import P4RuntimeClient
        from switch.stf.bmv2_process import BMv2StartError
        from switch.stf.bmv2_switch import BMv2Switch
        from switch.stf.nanomsg import NanomsgError
        from switch.stf.p4info_model import program_from_p4info

        try:
            info = load_p4info(process.workdir / "program.p4info.txtpb")
        except (OSError, P4RuntimeClientError) as e:
            raise LoadError("compile", f"error: p4c-bm2-ss wrote no usable P4Info: {e}") \
                from None
        model = program_from_p4info(info)
        try:
            process.start()
        except BMv2StartError as e:
            raise LoadError("start", f"error: {e}") from None
        client = P4RuntimeClient(process.grpc_address, device_id=process.device_id,
                                 name="simple_switch_grpc", timeout=CONNECT_TIMEOUT_S)
        try:
            switch = BMv2Switch(process, client, model)
        except NanomsgError as e:
            raise LoadError("start", f"error: BMv2's packet or event socket: {e}\n"
                                     f"{process.log_tail()}") from None
        try:
            client.connect()
            client.set_pipeline(info, process.workdir / "program.json")
        except P4RuntimeClientError as e:
            switch.close()
            raise LoadError("start", f"error: pushing the pipeline to BMv2: {e}\n"
                                     f"{process.log_tail()}") from None

        def close() -> None:
            switch.close()
            process.remove()

        return Loaded(model, switch, warnings, close)
