"""``ina p4c`` against ``p4c-bm2-ss`` on p4c's own samples (``p4c_samples.py`` says
which): with ``INA_P4C_SOURCE`` naming a checkout of p4lang/p4c (of the release
``p4c-bm2-ss --version`` prints), every sample is compiled by both, and they must agree
(``KNOWN_DIFFERENCES`` lists where p4c-bm2-ss is wrong; each must still differ).

    INA_P4C_SOURCE=/path/to/p4c .venv/bin/pytest -m slow tests/switch/frontend/test_p4c_samples.py

Skipped without INA_P4C_SOURCE, or without p4c-bm2-ss on PATH. Some 370 programs, four
to six minutes on two busy cores. The script itself is tested on a made-up checkout of
two programs (a second or two).
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from p4c_compare import P4C, Outcome, difference  # noqa: E402
from p4c_samples import KNOWN_DIFFERENCES, compare, main, samples  # noqa: E402

SOURCE = Path(os.environ["INA_P4C_SOURCE"]) if os.environ.get("INA_P4C_SOURCE") else None
HAVE_SAMPLES = SOURCE is not None and (SOURCE / "testdata" / "p4_16_samples").is_dir()
NAMES = samples(SOURCE) if HAVE_SAMPLES and SOURCE is not None else ["(no p4c checkout)"]

NEEDS_P4C = pytest.mark.skipif(P4C is None, reason="p4c-bm2-ss is not on PATH")
NEEDS_SAMPLES = pytest.mark.skipif(not HAVE_SAMPLES,
                                   reason="INA_P4C_SOURCE does not name a p4c checkout")


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    assert SOURCE is not None
    with ProcessPoolExecutor(max_workers=2) as pool:
        return dict(zip(NAMES, pool.map(compare, [SOURCE] * len(NAMES), NAMES), strict=True))


@pytest.mark.slow
@NEEDS_P4C
@NEEDS_SAMPLES
@pytest.mark.parametrize("name", NAMES)
def test_ina_p4c_agrees_with_p4c_bm2_ss_on_the_sample(name: str,
                                                       outcomes: dict[str, Outcome]) -> None:
    diff = difference(name, outcomes[name])
    known = KNOWN_DIFFERENCES.get(name)
    if known is not None:
        assert diff is not None, f"{name}: the listed difference is gone ({known})"
        return
    if diff is not None:
        pytest.fail(diff)


@NEEDS_SAMPLES
def test_the_known_differences_are_samples() -> None:
    assert set(KNOWN_DIFFERENCES) <= set(NAMES)


@NEEDS_P4C
def test_the_script_tallies_a_checkout(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The README's command, on a checkout of two samples of our own: a v1model program
    with an .stf (both compilers accept it) and one p4c's BMv2 suite expects to fail."""
    samples_dir = tmp_path / "testdata" / "p4_16_samples"
    errors_dir = tmp_path / "testdata" / "p4_16_bmv_errors"
    samples_dir.mkdir(parents=True)
    errors_dir.mkdir(parents=True)
    stf = HERE.parents[1] / "stf" / "expr" / "folded_side_effects"
    (samples_dir / "folded.p4").write_text(stf.with_suffix(".p4").read_text())
    (samples_dir / "folded.stf").write_text(stf.with_suffix(".stf").read_text())
    (samples_dir / "not-v1model-bmv2.p4").write_text("#include <core.p4>\n")
    bad = HERE / "golden" / "target_errors" / "divide_at_run_time.p4"
    (errors_dir / "divide-bmv2.p4").write_text(bad.read_text())
    assert samples(tmp_path) == ["p4_16_bmv_errors/divide-bmv2.p4",
                                 "p4_16_samples/folded.p4"]
    assert main([str(tmp_path), "-q", "-j", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "2 programs (1 accepted by p4c-bm2-ss): 2 agree, 0 known differences, "
        "0 disagreements")


def test_the_script_wants_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main([str(tmp_path)])
    assert info.value.code == 2
