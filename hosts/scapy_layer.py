"""The aggregation header as a scapy layer, for building, dissecting and captures.

Importing this module binds ``InaAgg`` above UDP on port 48879 (either direction), so
``Ether(raw)`` of a capture dissects the header and its values. The hot path does not
use scapy: see ``hosts.wire``.
"""

from __future__ import annotations

from scapy.fields import (
    ByteField,
    FieldListField,
    FlagsField,
    IntField,
    ShortField,
    SignedByteField,
    SignedIntField,
)
from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from hosts.wire import HEADER_SIZE, INA_UDP_PORT

FLAG_NAMES = ["RESULT", "NACK", "NAMED", "NAMED_VERSION", "R4", "R5", "R6", "R7"]


class InaAgg(Packet):
    """Aggregation header followed by its int32 values (all that the datagram holds)."""

    name = "INA aggregation"
    fields_desc = [
        ShortField("job_id", 0),
        ShortField("slot", 0),
        ByteField("version", 0),
        FlagsField("flags", 0, 8, FLAG_NAMES),
        SignedByteField("exponent", 0),
        ByteField("named_slot", 0),
        IntField("chunk", 0),
        FieldListField("values", [], SignedIntField("value", 0)),
    ]


assert len(InaAgg(values=[])) == HEADER_SIZE

bind_layers(UDP, InaAgg, dport=INA_UDP_PORT)
bind_layers(UDP, InaAgg, sport=INA_UDP_PORT)
