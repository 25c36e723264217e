"""P4Runtime ``MeterConfig`` <-> the engine's meter rates.

P4Runtime rates are units (bytes or packets, per the meter's P4Info unit) per second and
bursts are units; the engine takes BMv2's ``[(CIR, CBS), (PIR, PBS)]`` with rates in
units per microsecond. The server keeps the config a client wrote and reads that back
(exact read-write symmetry without float round trips).
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from switch.runtime.errors import invalid_argument

MeterSpec = p4info_pb2.MeterSpec
Rates = list[tuple[float, int]]


def meter_rates(config: p4runtime_pb2.MeterConfig, spec: p4info_pb2.MeterSpec,
                what: str) -> Rates:
    """Check a config against the meter type and convert it to engine rates."""
    c = config
    if min(c.cir, c.cburst, c.pir, c.pburst, c.eburst) < 0:
        raise invalid_argument(f"{what}: meter rates and bursts must not be negative")
    kind = spec.type
    if kind == MeterSpec.TWO_RATE_THREE_COLOR:
        if c.eburst:
            raise invalid_argument(f"{what}: eburst is only for single-rate three-color meters")
    else:
        if c.pir != c.cir or c.pburst != c.cburst:
            raise invalid_argument(f"{what}: a single-rate meter needs pir == cir and "
                                   "pburst == cburst")
        if kind == MeterSpec.SINGLE_RATE_TWO_COLOR and c.eburst:
            raise invalid_argument(f"{what}: eburst is not used by a two-color meter")
    if c.cir > c.pir:
        raise invalid_argument(f"{what}: cir ({c.cir}) is larger than pir ({c.pir})")
    return [(c.cir / 1e6, int(c.cburst)), (c.pir / 1e6, int(c.pburst))]
