"""The switch's packet I/O layer: ports on Linux interfaces.

Moves Ethernet frames between Linux interfaces (AF_PACKET raw sockets) and the switch's
processing loop, with link impairments emulated in user space (loss, delay, reordering,
duplication; the target machines have no netem) and optional per-port pcap capture.
Knows nothing about P4.

Limitations: VLAN tags that the kernel strips into packet metadata (veth, NICs with
VLAN offload) are not restored, and frames larger than the MTU produced by GSO/GRO
cannot be sent on; see :mod:`.rawsock`.

- :class:`PortSet` -- the ports of one switch process (see :mod:`.portset`).
- :class:`ImpairmentConfig`, :func:`parse_impairment_spec` -- ``--impair 2:loss=0.05``.
- :func:`parse_port_spec` -- ``-i 1@s1-eth1``.
- :class:`PcapWriter` -- classic libpcap files.
- :class:`PortError` -- every user-facing failure, with a printable message.
"""

from .counters import PortCounters
from .errors import PortError, SpecError
from .impair import ImpairmentConfig
from .pcap import PcapWriter
from .portset import PortSet
from .spec import parse_impairment_spec, parse_port_spec

__all__ = [
    "ImpairmentConfig",
    "PcapWriter",
    "PortCounters",
    "PortError",
    "PortSet",
    "SpecError",
    "parse_impairment_spec",
    "parse_port_spec",
]
