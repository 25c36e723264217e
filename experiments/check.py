"""The correctness checks of an all-reduce: every worker's result is bit-identical, and
within an error bound of the exact float64 sum. Which bound depends on the algorithm
(``experiments.algorithms`` says which check each one takes):

* ``check_allreduce``, the quantized sum of in-network aggregation. The bound per
  element is the one ``hosts.quantize`` states for the agreed exponent of the
  element's block (the switch max-combines every worker's proposal, so the check
  recomputes that maximum from the inputs): ``N * 0.5 / f``, plus the rounding of the
  result to float32 (one float32 ulp of the largest value the result may take;
  rounding to nearest costs half of it, the other half covers the reference being a
  float64 sum rather than a real-number one).
* ``check_float32_sum``, a sum of N float32 values in float32 arithmetic, in any order
  (the host-based algorithms). Every value takes part in at most N - 1 roundings,
  each with a relative error of at most u = 2**-24, so the computed sum is within
  gamma(N-1) * sum(|x_i|) of the real sum, gamma(m) = m*u / (1 - m*u) (Higham,
  "Accuracy and Stability of Numerical Algorithms", section 4.2; it holds for any
  summation order and through gradual underflow, where additions are exact). The
  reference, the float64 sum, is within gamma64(N-1) * sum(|x_i|) of the real sum
  too, and sum(|x_i|) is itself computed in float64, so the allowance is
  (gamma(N-1) + gamma64(N-1)) * A / (1 - gamma64(N)) with A the float64 sum of the
  magnitudes. For N = 1 it is 0: the result must be the input.
"""

from __future__ import annotations

from collections.abc import Callable
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


F32_UNIT_ROUNDOFF = 2.0 ** -24
F64_UNIT_ROUNDOFF = 2.0 ** -53


def _gamma(m: int, u: float) -> float:
    return m * u / (1 - m * u)


def float32_sum_allowance(inputs: list[Floats]) -> npt.NDArray[np.float64]:
    """The largest |result - float64 sum| a float32 sum of ``inputs`` in any order
    can have, per element (see the module docstring)."""
    n = len(inputs)
    magnitude = np.zeros(inputs[0].size, dtype=np.float64)
    for x in inputs:
        magnitude += np.abs(x.reshape(-1).astype(np.float64))
    factor = ((_gamma(n - 1, F32_UNIT_ROUNDOFF) + _gamma(n - 1, F64_UNIT_ROUNDOFF))
              / (1 - _gamma(n, F64_UNIT_ROUNDOFF)))
    return factor * magnitude


def check_allreduce(inputs: list[Floats], outputs: list[Floats], k: int,
                    scaling: Scaling) -> CheckResult:
    """Check the in-network workers' ``outputs`` against their ``inputs`` (same
    order): the quantized sum's bound."""
    return compare(inputs, outputs, lambda exact: error_allowance(inputs, k, scaling, exact),
                   "the quantization bound")


def check_float32_sum(inputs: list[Floats], outputs: list[Floats]) -> CheckResult:
    """Check ``outputs`` of an all-reduce that sums float32 values in float32 (the
    host-based algorithms) against their ``inputs`` (same order)."""
    return compare(inputs, outputs, lambda exact: float32_sum_allowance(inputs),
                   "the float32 summation bound")


def compare(inputs: list[Floats], outputs: list[Floats],
            allowance: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]],
            bound_name: str) -> CheckResult:
    """Bit-identity of ``outputs`` and their distance from the exact sum of ``inputs``
    against ``allowance(exact)``, the largest error allowed per element."""
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
    if exact.size == 0:
        return CheckResult(identical, identical, True, True, 0.0, 0.0, -1,
                           "bit-identical on every worker (no values)" if identical
                           else "the workers' results differ")
    allowed = allowance(exact)
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
    message = "; ".join(problems) or f"bit-identical on every worker and within {bound_name}"
    return CheckResult(identical and within, identical, within, is_exact,
                       float(error.max()), float(ratio[worst]), worst, message)
