"""Per-port packet counters."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

# Drop reasons used by the port layer (keys of ``PortCounters.drops``).
DROP_IMPAIRMENT_LOSS = "impairment_loss"  # dropped by the emulated link (either direction)
DROP_TX_ERROR = "tx_error"  # the kernel refused the frame (too big, link down, no buffers)
DROP_RX_TRUNCATED = "rx_truncated"  # received frame shorter than an Ethernet header
DROP_RX_OVERSIZE = "rx_oversize"  # received frame larger than the receive buffer
DROP_RX_OVERFLOW = "rx_overflow"  # the socket's receive queue was full (kernel statistics)

# Error events that lose no frame (keys of ``PortCounters.errors``).
ERROR_RX = "rx_error"  # recv reported an error: the interface went down or was deleted


@dataclass(frozen=True)
class PortCounters:
    """A snapshot of one port's counters.

    ``rx_*`` count the frames read from the interface and ``tx_*`` the frames the kernel
    accepted for transmission, both on the wire side of the impairments: a frame lost by
    an egress impairment is in ``drops["impairment_loss"]`` but not in ``tx_packets``, an
    egress duplicate is counted twice in ``tx_packets``. ``impaired`` counts the other
    impairment effects: ``duplicated``, ``reordered`` (frames overtaken by a later one)
    and ``delayed``. ``errors`` counts error reports that lost no frame by themselves
    (``rx_error``: the kernel reported the link down or the interface gone).
    """

    rx_packets: int = 0
    rx_bytes: int = 0
    tx_packets: int = 0
    tx_bytes: int = 0
    drops: dict[str, int] = field(default_factory=dict)
    impaired: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)

    @property
    def total_drops(self) -> int:
        return sum(self.drops.values())


class MutableCounters:
    """The live counters of one port, shared by its socket and its impairments."""

    __slots__ = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "drops", "impaired", "errors")

    def __init__(self) -> None:
        self.rx_packets = 0
        self.rx_bytes = 0
        self.tx_packets = 0
        self.tx_bytes = 0
        self.drops: Counter[str] = Counter()
        self.impaired: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()

    def snapshot(self) -> PortCounters:
        return PortCounters(
            rx_packets=self.rx_packets,
            rx_bytes=self.rx_bytes,
            tx_packets=self.tx_packets,
            tx_bytes=self.tx_bytes,
            drops={k: v for k, v in self.drops.items() if v},
            impaired={k: v for k, v in self.impaired.items() if v},
            errors={k: v for k, v in self.errors.items() if v},
        )
