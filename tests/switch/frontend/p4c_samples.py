"""``ina p4c`` against ``p4c-bm2-ss`` on p4c's own samples: the v1model programs of
``testdata/p4_16_samples`` that p4c's BMv2 test suite runs (``backends/bmv2``'s list:
every ``*-bmv2.p4`` that includes ``v1model.p4``, ``dash/*-bmv2.p4``,
``fabric_*/fabric.p4``, ``omec/*.p4``, ``pins/*.p4``, ``parser-inline/*.p4``, and any
other v1model program with an ``.stf`` beside it), and the programs of
``testdata/p4_16_bmv_errors`` that p4c-bm2-ss must reject.

    .venv/bin/python tests/switch/frontend/p4c_samples.py PATH/TO/p4c [-j 2] [NAME ...]

compiles each with both (from the sample's directory, as p4c's driver does) and prints
every disagreement, then the tally; the exit status is 1 when a disagreement is not one
of ``KNOWN_DIFFERENCES``. ``test_p4c_samples.py`` runs the same comparison under pytest
when ``INA_P4C_SOURCE`` names a p4c checkout. Use the checkout of the p4c release
installed (``p4c-bm2-ss --version``): newer samples may need a newer compiler.
"""

from __future__ import annotations

import argparse
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
for _p in (str(REPO), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from p4c_compare import P4C, Outcome, compile_both, difference  # noqa: E402

V1MODEL = re.compile(r"include.*v1model\.p4")

# Samples on which ina p4c and p4c-bm2-ss 1.2.5.16 disagree because p4c is wrong (the
# README's list), by their path under testdata/.
KNOWN_DIFFERENCES: dict[str, str] = {
    "p4_16_samples/issue2735-bmv2.p4":
        "p4c-bm2-ss leaves a register declared through a typedef out of the P4Info (and "
        "crashes on one the program uses, tests/stf/extern/register_typedef.p4)",
}


def samples(p4c: Path) -> list[str]:
    """The programs, as paths relative to ``p4c/testdata``."""
    testdata = p4c / "testdata"
    root = testdata / "p4_16_samples"
    found: set[Path] = set()
    for p in root.glob("*-bmv2.p4"):
        if V1MODEL.search(p.read_text(errors="replace")):
            found.add(p)
    for pattern in ("dash/*-bmv2.p4", "fabric_*/fabric.p4", "omec/*.p4", "pins/*.p4",
                    "parser-inline/*.p4"):
        found.update(root.glob(pattern))
    for stf in root.rglob("*.stf"):
        p = stf.with_suffix(".p4")
        if p.exists() and V1MODEL.search(p.read_text(errors="replace")):
            found.add(p)
    found.update((testdata / "p4_16_bmv_errors").glob("*-bmv2.p4"))
    return sorted(p.relative_to(testdata).as_posix() for p in found)


def compare(p4c: Path, name: str) -> Outcome:
    """Run in a worker process: both compilers, from the sample's own directory."""
    path = p4c / "testdata" / name
    return compile_both(path.name, path.parent, timeout=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("p4c", type=Path, help="a checkout of p4lang/p4c")
    parser.add_argument("names", nargs="*", help="only these programs (under testdata/)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print the tally and the names of the disagreements only")
    args = parser.parse_intermixed_args(argv)
    if P4C is None:
        parser.error("p4c-bm2-ss is not on PATH")
    if not (args.p4c / "testdata" / "p4_16_samples").is_dir():
        parser.error(f"{args.p4c}: not a p4c checkout (no testdata/p4_16_samples)")
    names = args.names or samples(args.p4c)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(compare, [args.p4c] * len(names), names))
    agree = known = 0
    unexpected: list[str] = []
    for name, out in zip(names, outcomes, strict=True):
        diff = difference(name, out)
        if diff is None:
            agree += 1
        elif name in KNOWN_DIFFERENCES:
            known += 1
        else:
            unexpected.append(name)
            print(name if args.quiet else diff + "\n", flush=True)
    accepted = sum(o.p4c_ok for o in outcomes)
    print(f"{len(names)} programs ({accepted} accepted by p4c-bm2-ss): {agree} agree, "
          f"{known} known differences, {len(unexpected)} disagreements")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
