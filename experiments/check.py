"""The correctness check of an all-reduce: every worker's result is bit-identical, and
within the quantizer's error bound of the exact float64 sum.

The bound per element is the one ``hosts.quantize`` states for the agreed exponent of
the element's block (the switch max-combines every worker's proposal, so the check
recomputes that maximum from the inputs): ``N * 0.5 / f``, plus the rounding of the
result to float32 (one float32 ulp of the largest value the result may take; rounding
to nearest costs half of it, the other half covers the reference being a float64
sum rather than a real-number one).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from hosts.inputs import exact_sum
from hosts.quantize import Quantizer, Scaling

Floats = npt.NDArray[np.float32]


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    bit_identical: bool
    within_bound: bool
    exact: bool  # every element equals the float64 sum exactly
    max_error: float
    max_error_over_bound: float  # the worst element's |error| / its allowed error
    worst_index: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def error_allowance(inputs: list[Floats], k: int, scaling: Scaling,
                    exact: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The largest |result - exact| the quantizer allows, per element."""
    n = len(inputs)
    size = inputs[0].size
    chunks = -(-size // k)
    qz = Quantizer(n, scaling)
    fields = None
    for x in inputs:
        blocks = np.zeros((chunks, k), dtype=np.float32)
        blocks.reshape(-1)[:size] = x.reshape(-1)
        p = qz.propose(blocks)
        fields = p if fields is None else np.maximum(fields, p)
    assert fields is not None
    per_block = qz.error_bound(fields)
    bound = np.repeat(per_block, k)[:size]
    top = np.abs(exact.reshape(-1)) + bound
    with np.errstate(over="ignore"):
        ulp = np.spacing(top.astype(np.float32)).astype(np.float64)
    return bound + np.abs(ulp)


def check_allreduce(inputs: list[Floats], outputs: list[Floats], k: int,
                    scaling: Scaling) -> CheckResult:
    """Check the workers' ``outputs`` against their ``inputs`` (same order)."""
    if len(inputs) != len(outputs) or not inputs:
        raise ValueError(f"check: {len(inputs)} inputs but {len(outputs)} outputs")
    first = outputs[0].reshape(-1)
    for i, out in enumerate(outputs):
        if out.shape != inputs[i].shape or out.dtype != np.float32:
            return CheckResult(False, False, False, False, float("inf"), float("inf"), -1,
                               f"worker {i}: result has shape {out.shape} {out.dtype}, "
                               f"expected {inputs[i].shape} float32")
    identical = all(np.array_equal(first.view(np.uint32), o.reshape(-1).view(np.uint32))
                    for o in outputs[1:])
    exact = exact_sum(inputs).reshape(-1)
    allowed = error_allowance(inputs, k, scaling, exact)
    error = np.abs(first.astype(np.float64) - exact)
    error = np.where(np.isnan(error), np.inf, error)
    ratio = error / np.where(allowed > 0, allowed, np.finfo(np.float64).tiny)
    worst = int(np.argmax(ratio))
    within = bool(ratio[worst] <= 1.0)
    is_exact = bool(np.array_equal(first.astype(np.float64), exact))
    problems = []
    if not identical:
        diff = [i for i, o in enumerate(outputs)
                if not np.array_equal(first.view(np.uint32), o.reshape(-1).view(np.uint32))]
        problems.append(f"workers {diff} differ from worker 0")
    if not within:
        problems.append(f"element {worst}: result {first[worst]!r}, exact sum "
                        f"{exact[worst]!r}, error {error[worst]:.3g} > allowed "
                        f"{allowed[worst]:.3g}")
    message = "; ".join(problems) or "bit-identical on every worker and within the bound"
    return CheckResult(identical and within, identical, within, is_exact,
                       float(error.max()), float(ratio[worst]), worst, message)
