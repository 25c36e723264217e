"""The P4Runtime controller: a typed client per switch, addressed by P4 names."""

from controller.entities import CloneSession, MulticastGroup, Replica, TableEntry
from controller.errors import (
    ArbitrationError,
    EncodeError,
    NoPipelineError,
    P4RuntimeClientError,
    RpcError,
    SchemaError,
    UpdateFailure,
    WriteError,
)
from controller.p4info_schema import P4InfoSchema, load_p4info
from controller.p4runtime_client import CounterValue, P4RuntimeClient, PacketIn
from controller.values import Exact, Lpm, Optional, Range, Ternary

__all__ = [
    "ArbitrationError", "CloneSession", "CounterValue", "EncodeError", "Exact", "Lpm",
    "MulticastGroup", "NoPipelineError", "Optional", "P4InfoSchema", "P4RuntimeClient",
    "P4RuntimeClientError", "PacketIn", "Range", "Replica", "RpcError", "SchemaError",
    "TableEntry", "Ternary", "UpdateFailure", "WriteError", "load_p4info",
]
