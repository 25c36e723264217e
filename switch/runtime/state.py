"""One forwarding pipeline as the server sees it: the program, its switch, the P4Info
and the control-plane state the engine does not keep.

The engine stores what the data plane needs (entries, default actions, counters, PRE
groups, ...). What P4Runtime adds on top -- entry cookies and metadata, meter configs
exactly as written, multicast group metadata and the port encoding a client used,
clone-session class of service, value-set members as written, digest configs,
action profile groups as written -- lives
here, keyed by engine names and handles, so that reads give back what was written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from switch.runtime.schema import Schema


@dataclass
class EntryExtras:
    """What a table entry carries besides match and action."""

    controller_metadata: int = 0
    metadata: bytes = b""
    idle_timeout_ns: int = 0
    meter_config: p4runtime_pb2.MeterConfig | None = None  # None: the default (all green)


@dataclass
class PipelineState:
    program: Any  # switch.frontend.program.Program
    switch: Any  # a V1Switch (or anything with its runtime API)
    schema: Schema
    p4info: p4info_pb2.P4Info  # as the client sent it, for GetForwardingPipelineConfig
    device_config: bytes
    cookie: int | None = None
    entries: dict[tuple[str, int], EntryExtras] = field(default_factory=dict)
    defaults: dict[str, EntryExtras] = field(default_factory=dict)  # table -> default entry
    mc_groups: dict[int, p4runtime_pb2.MulticastGroupEntry] = field(default_factory=dict)
    clone_sessions: dict[int, p4runtime_pb2.CloneSessionEntry] = field(default_factory=dict)
    meter_configs: dict[tuple[str, int], p4runtime_pb2.MeterConfig] = field(default_factory=dict)
    value_sets: dict[int, list[p4runtime_pb2.ValueSetMember]] = field(default_factory=dict)
    digest_configs: dict[int, p4runtime_pb2.DigestEntry.Config] = field(default_factory=dict)
    # (action profile id, group id) -> the group as written (weights, watch ports)
    profile_groups: dict[tuple[int, int], p4runtime_pb2.ActionProfileGroup] = field(
        default_factory=dict)
    # engine digest name (the struct type's name) -> P4Info digest id
    digest_ids: dict[str, int] = field(default_factory=dict)

    def extras(self, table: str, handle: int) -> EntryExtras:
        return self.entries.get((table, handle)) or EntryExtras()


def digest_ids(program: Any, p4info: p4info_pb2.P4Info) -> dict[str, int]:
    """Map the names under which the engine reports digests to P4Info digest ids."""
    out: dict[str, int] = {}
    for d in p4info.digests:
        out[d.preamble.name] = d.preamble.id
        spec = d.type_spec
        if spec.WhichOneof("type_spec") == "struct":
            out.setdefault(spec.struct.name, d.preamble.id)
    for name, info in (getattr(program, "digests", None) or {}).items():
        did = getattr(info, "id", 0)
        if did:
            out[name] = did
            type_name = getattr(getattr(info, "type", None), "name", None)
            if type_name:
                out[type_name] = did
    return out
