"""Shared pieces of the P4Runtime client tests (the fixtures are in conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from switch.runtime import P4RuntimeServer

HERE = Path(__file__).parent
CPU_PORT = 255
LOOPED_PORT = 2


@dataclass
class Pipeline:
    p4info: Path
    config: Path


def compile_program(source: Path, out_dir: Path) -> Pipeline:
    from switch.frontend import compile_file
    from switch.frontend.artifact import dump_artifact
    from switch.frontend.p4info import p4info_text

    program = compile_file(str(source))
    p4info = out_dir / f"{source.stem}.p4info.txtpb"
    config = out_dir / f"{source.stem}.json"
    p4info.write_text(p4info_text(program))
    config.write_text(dump_artifact(program))
    return Pipeline(p4info, config)


@dataclass
class Switch:
    server: P4RuntimeServer
    address: str
    outputs: list[tuple[int, bytes]]
