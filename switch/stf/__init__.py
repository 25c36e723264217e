"""STF tests (p4c's packet test format) run against a v1model switch: the built-in one,
or BMv2 (``run_stf(..., target="bmv2")``; the targets are in ``switch.stf.targets``)."""

from switch.stf.parse_stf import StfError, StfFile, parse_stf, parse_stf_file
from switch.stf.run_stf import StfResult, StfRunner, run_program, run_stf

__all__ = [
    "StfError",
    "StfFile",
    "StfResult",
    "StfRunner",
    "parse_stf",
    "parse_stf_file",
    "run_program",
    "run_stf",
]
