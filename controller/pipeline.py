"""The pipeline a controller pushes: a P4Info file and a device config file.

For the built-in switch the device config is the ``ina p4c -o`` artifact, and
``compile_pipeline`` makes both files from P4 source as ``ina p4c`` does. For BMv2
(``simple_switch_grpc``) give the P4Info and the BMv2 JSON of ``p4c-bm2-ss``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class PipelineError(ValueError):
    """A program that does not compile or files that cannot be read."""


@dataclass(frozen=True)
class PipelineFiles:
    p4info: Path
    config: Path


def compile_pipeline(program: str | Path, out_dir: str | Path,
                     include_dirs: list[str] | None = None,
                     defines: dict[str, str | None] | None = None) -> PipelineFiles:
    """Compile P4 source for the built-in switch; errors print as p4c prints them."""
    from switch.frontend import CompileError, compile_file
    from switch.frontend.artifact import dump_artifact
    from switch.frontend.p4info import p4info_text

    source = Path(program)
    if not source.is_file():
        raise PipelineError(f"{program}: no such P4 program")
    try:
        compiled = compile_file(str(source), include_dirs or [], defines or {})
    except CompileError as e:
        raise PipelineError(str(e)) from None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = PipelineFiles(out / f"{source.stem}.p4info.txtpb", out / f"{source.stem}.json")
    files.p4info.write_text(p4info_text(compiled))
    files.config.write_text(dump_artifact(compiled))
    return files


def given_pipeline(p4info: str | Path, config: str | Path) -> PipelineFiles:
    """Precompiled files (e.g. ``p4c-bm2-ss`` output for BMv2), checked to exist."""
    for path, what in ((p4info, "P4Info"), (config, "device config")):
        if not Path(path).is_file():
            raise PipelineError(f"{path}: no such {what} file")
    return PipelineFiles(Path(p4info), Path(config))
