"""One scripted sequence of P4Runtime requests, sent to the built-in switch and to BMv2
by the differential test (``test_p4rt_vs_bmv2.py``). Importing the parts, in the order
of ``PARTS``, registers their steps in ``STEPS`` in that order; ``run_script`` runs them
all against one target. The steps build on each other's state: a step's docstring or
comment says what it expects when that is not obvious."""

from __future__ import annotations

import importlib

from p4rt_session import STEPS, Answer, run_script

PARTS = ("p4rt_script_pipeline", "p4rt_script_tables", "p4rt_script_externs",
         "p4rt_script_packets")
for _part in PARTS:
    importlib.import_module(_part)

__all__ = ["STEPS", "Answer", "run_script"]
