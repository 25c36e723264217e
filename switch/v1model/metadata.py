"""v1model constants: standard_metadata, instance types, the drop port."""

from __future__ import annotations

DROP_PORT = 511

# standard_metadata.instance_type values (BMv2 simple_switch)
NORMAL = 0
INGRESS_CLONE = 1
EGRESS_CLONE = 2
COALESCED = 3
RECIRC = 4
REPLICATION = 5
RESUBMIT = 6

STANDARD_METADATA_FIELDS = (
    "ingress_port", "egress_spec", "egress_port", "instance_type", "packet_length",
    "enq_timestamp", "enq_qdepth", "deq_timedelta", "deq_qdepth",
    "ingress_global_timestamp", "egress_global_timestamp", "mcast_grp", "egress_rid",
    "checksum_error", "parser_error", "priority",
)

# bound on ingress passes (resubmit + recirculate) caused by one injected packet
MAX_PASSES = 32
