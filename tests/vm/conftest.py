"""The VM's tools (``vm/``) are not part of the installed package: they run from the
checkout with the system's python3 (``python3 -m vm.image``), and the tests import them
from there."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
