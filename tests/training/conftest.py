"""The training tests drive the in-network agent against the switch model of the host
tests (``tests/hosts/switch_model.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hosts"))
