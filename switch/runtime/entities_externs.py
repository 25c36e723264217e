"""Extern entities: counters, direct counters, meters, direct meters, registers, value
sets and digest configs.

Counters, meters, registers and value sets only take MODIFY (INSERT and DELETE are
INVALID_ARGUMENT); an unset ``index`` means every cell, for reads and for writes. A
negative index is INVALID_ARGUMENT and one past the end OUT_OF_RANGE. Per-color meter
counters are UNIMPLEMENTED, and so is ``ExternEntry`` (v1model has no P4Info externs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from p4.v1 import p4runtime_pb2

from switch.runtime.codec import P4DataCodec, decode_match, encode_match
from switch.runtime.entities_table import find_entry
from switch.runtime.errors import (
    already_exists,
    invalid_argument,
    not_found,
    out_of_range,
    resource_exhausted,
    unimplemented,
)
from switch.runtime.meters import meter_rates
from switch.runtime.schema import TableInfo
from switch.runtime.state import EntryExtras, PipelineState

Update = p4runtime_pb2.Update

NO_COLOR_COUNTERS = "per-color meter counters (counter_data) are not supported"


def _modify_only(utype: int, what: str) -> None:
    if utype != Update.MODIFY:
        raise invalid_argument(f"{what} only takes MODIFY updates (got "
                               f"{Update.Type.Name(utype)})")


def _indices(has_index: bool, index: int, size: int, what: str) -> Iterable[int]:
    if not has_index:
        return range(size)
    if index < 0:
        raise invalid_argument(f"{what}: negative index {index}")
    if index >= size:
        raise out_of_range(f"{what}: index {index} is out of range (size {size})")
    return (index,)


def _check_counter_data(data: p4runtime_pb2.CounterData, what: str) -> None:
    if data.packet_count < 0 or data.byte_count < 0:
        raise invalid_argument(f"{what}: counter values must not be negative")


# ----------------------------------------------------------------------------- counters


def write_counter(state: PipelineState, utype: int, e: p4runtime_pb2.CounterEntry) -> None:
    c = state.schema.counter(e.counter_id)
    name = c.preamble.name
    _modify_only(utype, f"counter {name}")
    indices = _indices(e.HasField("index"), e.index.index, c.size, f"counter {name}")
    if not e.HasField("data"):
        return
    _check_counter_data(e.data, f"counter {name}")
    for i in indices:
        state.switch.counter_write(name, i, e.data.packet_count, e.data.byte_count)


def read_counters(state: PipelineState, e: p4runtime_pb2.CounterEntry
                  ) -> Iterator[p4runtime_pb2.Entity]:
    counters = (list(state.schema.counters.values()) if e.counter_id == 0
                else [state.schema.counter(e.counter_id)])
    for c in counters:
        name = c.preamble.name
        for i in _indices(e.HasField("index"), e.index.index, c.size, f"counter {name}"):
            packets, nbytes = state.switch.counter_read(name, i)
            ent = p4runtime_pb2.Entity()
            out = ent.counter_entry
            out.counter_id = c.preamble.id
            out.index.index = i
            out.data.packet_count = packets
            out.data.byte_count = nbytes
            yield ent


def _direct_table(state: PipelineState, te: p4runtime_pb2.TableEntry, kind: str) -> TableInfo:
    t = state.schema.table(te.table_id)
    if getattr(t, f"direct_{kind}") is None:
        raise invalid_argument(f"table {t.name} has no direct {kind}")
    if te.is_default_action:
        raise unimplemented(f"table {t.name}: direct resources of default entries are not "
                            "supported")
    return t


def write_direct_counter(state: PipelineState, utype: int,
                         e: p4runtime_pb2.DirectCounterEntry) -> None:
    _modify_only(utype, "a direct counter entry")
    t = _direct_table(state, e.table_entry, "counter")
    handle = find_entry(state, t, e.table_entry)
    if e.HasField("data"):
        _check_counter_data(e.data, f"table {t.name} direct counter")
        state.switch.direct_counter_write(t.name, handle, e.data.packet_count, e.data.byte_count)


def _direct_targets(state: PipelineState, te: p4runtime_pb2.TableEntry, kind: str
                    ) -> Iterator[tuple[TableInfo, int, Any]]:
    """(table, handle, entry spec) of the entries a direct-resource read selects."""
    if te.table_id == 0:
        if te.is_default_action:
            raise unimplemented("direct resources of default entries are not supported")
        if len(te.match) or te.priority:
            raise invalid_argument(f"a direct {kind} read of all tables (table_id 0) takes no "
                                   "match or priority")
        tables = [t for t in state.schema.tables.values()
                  if getattr(t, f"direct_{kind}") is not None]
    else:
        tables = [_direct_table(state, te, kind)]
    for t in tables:
        if len(te.match):
            handle = find_entry(state, t, te)
            for h, spec in state.switch.table_entries(t.name):
                if h == handle:
                    yield t, h, spec
        else:
            for h, spec in state.switch.table_entries(t.name):
                yield t, h, spec


def _key_entry(t: TableInfo, spec: Any, out: p4runtime_pb2.TableEntry) -> None:
    out.table_id = t.id
    out.match.extend(encode_match(t.fields, spec.keys))
    if t.needs_priority:
        out.priority = spec.priority or 0


def read_direct_counters(state: PipelineState, e: p4runtime_pb2.DirectCounterEntry
                         ) -> Iterator[p4runtime_pb2.Entity]:
    for t, handle, spec in _direct_targets(state, e.table_entry, "counter"):
        packets, nbytes = state.switch.direct_counter_read(t.name, handle)
        ent = p4runtime_pb2.Entity()
        out = ent.direct_counter_entry
        _key_entry(t, spec, out.table_entry)
        out.data.packet_count = packets
        out.data.byte_count = nbytes
        yield ent


# ------------------------------------------------------------------------------- meters


def write_meter(state: PipelineState, utype: int, e: p4runtime_pb2.MeterEntry) -> None:
    m = state.schema.meter(e.meter_id)
    name = m.preamble.name
    _modify_only(utype, f"meter {name}")
    indices = _indices(e.HasField("index"), e.index.index, m.size, f"meter {name}")
    if e.HasField("counter_data"):
        raise unimplemented(NO_COLOR_COUNTERS)
    rates = meter_rates(e.config, m.spec, f"meter {name}") if e.HasField("config") else []
    for i in indices:
        state.switch.meter_set_rates(name, i, rates)
        if rates:
            config = p4runtime_pb2.MeterConfig()
            config.CopyFrom(e.config)
            state.meter_configs[(name, i)] = config
        else:
            state.meter_configs.pop((name, i), None)


def read_meters(state: PipelineState, e: p4runtime_pb2.MeterEntry
                ) -> Iterator[p4runtime_pb2.Entity]:
    if e.HasField("counter_data"):
        raise unimplemented(NO_COLOR_COUNTERS)
    meters = (list(state.schema.meters.values()) if e.meter_id == 0
              else [state.schema.meter(e.meter_id)])
    for m in meters:
        name = m.preamble.name
        for i in _indices(e.HasField("index"), e.index.index, m.size, f"meter {name}"):
            ent = p4runtime_pb2.Entity()
            out = ent.meter_entry
            out.meter_id = m.preamble.id
            out.index.index = i
            config = state.meter_configs.get((name, i))
            if config is not None:
                out.config.CopyFrom(config)
            yield ent


def write_direct_meter(state: PipelineState, utype: int,
                       e: p4runtime_pb2.DirectMeterEntry) -> None:
    _modify_only(utype, "a direct meter entry")
    t = _direct_table(state, e.table_entry, "meter")
    handle = find_entry(state, t, e.table_entry)
    if e.HasField("counter_data"):
        raise unimplemented(NO_COLOR_COUNTERS)
    assert t.direct_meter is not None
    rates = (meter_rates(e.config, t.direct_meter.spec, f"table {t.name} direct meter")
             if e.HasField("config") else [])
    state.switch.direct_meter_set_rates(t.name, handle, rates)
    old = state.extras(t.name, handle)
    config = None
    if rates:
        config = p4runtime_pb2.MeterConfig()
        config.CopyFrom(e.config)
    state.entries[(t.name, handle)] = EntryExtras(old.controller_metadata, old.metadata,
                                                  old.idle_timeout_ns, config)


def read_direct_meters(state: PipelineState, e: p4runtime_pb2.DirectMeterEntry
                       ) -> Iterator[p4runtime_pb2.Entity]:
    if e.HasField("counter_data"):
        raise unimplemented(NO_COLOR_COUNTERS)
    for t, handle, spec in _direct_targets(state, e.table_entry, "meter"):
        ent = p4runtime_pb2.Entity()
        out = ent.direct_meter_entry
        _key_entry(t, spec, out.table_entry)
        config = state.extras(t.name, handle).meter_config
        if config is not None:
            out.config.CopyFrom(config)
        yield ent


# ---------------------------------------------------------------------------- registers


def write_register(state: PipelineState, utype: int, e: p4runtime_pb2.RegisterEntry) -> None:
    r = state.schema.register(e.register_id)
    name = r.preamble.name
    _modify_only(utype, f"register {name}")
    indices = _indices(e.HasField("index"), e.index.index, r.size, f"register {name}")
    if not e.HasField("data"):
        raise invalid_argument(f"register {name}: a write needs data")
    codec = P4DataCodec(state.schema.p4info.type_info)
    value = codec.decode(r.type_spec, e.data, f"register {name}")
    for i in indices:
        state.switch.register_write(name, i, value)


def read_registers(state: PipelineState, e: p4runtime_pb2.RegisterEntry
                   ) -> Iterator[p4runtime_pb2.Entity]:
    registers = (list(state.schema.registers.values()) if e.register_id == 0
                 else [state.schema.register(e.register_id)])
    codec = P4DataCodec(state.schema.p4info.type_info)
    for r in registers:
        name = r.preamble.name
        for i in _indices(e.HasField("index"), e.index.index, r.size, f"register {name}"):
            ent = p4runtime_pb2.Entity()
            out = ent.register_entry
            out.register_id = r.preamble.id
            out.index.index = i
            out.data.CopyFrom(codec.encode(r.type_spec, state.switch.register_read(name, i)))
            yield ent


# --------------------------------------------------------------------------- value sets


def write_value_set(state: PipelineState, utype: int, e: p4runtime_pb2.ValueSetEntry) -> None:
    vs = state.schema.value_set(e.value_set_id)
    name = vs.preamble.name
    _modify_only(utype, f"value set {name}")
    if len(e.members) > vs.size:
        raise resource_exhausted(f"value set {name} holds at most {vs.size} members "
                                 f"(got {len(e.members)})")
    members = []
    canonical: list[p4runtime_pb2.ValueSetMember] = []
    seen: set[tuple[bytes, ...]] = set()
    for m in e.members:
        values = decode_match(vs.match, m.match, f"value set {name}")
        member = p4runtime_pb2.ValueSetMember(match=encode_match(vs.match, values))
        key = tuple(fm.SerializeToString() for fm in member.match)
        if key in seen:
            raise already_exists(f"value set {name}: duplicate member")
        seen.add(key)
        members.append(list(values))
        canonical.append(member)
    state.switch.value_set_set(name, members)
    state.value_sets[vs.preamble.id] = canonical


def read_value_sets(state: PipelineState, e: p4runtime_pb2.ValueSetEntry
                    ) -> Iterator[p4runtime_pb2.Entity]:
    sets = (list(state.schema.value_sets.values()) if e.value_set_id == 0
            else [state.schema.value_set(e.value_set_id)])
    for vs in sets:
        ent = p4runtime_pb2.Entity()
        ent.value_set_entry.value_set_id = vs.preamble.id
        ent.value_set_entry.members.extend(state.value_sets.get(vs.preamble.id, []))
        yield ent


# ------------------------------------------------------------------------ digest config


def write_digest_entry(state: PipelineState, utype: int, e: p4runtime_pb2.DigestEntry) -> None:
    d = state.schema.digest(e.digest_id)
    name = d.preamble.name
    configured = e.digest_id in state.digest_configs
    if utype == Update.DELETE:
        if not configured:
            raise not_found(f"digest {name} is not enabled")
        del state.digest_configs[e.digest_id]
        return
    if utype == Update.INSERT and configured:
        raise already_exists(f"digest {name} is already enabled")
    if utype == Update.MODIFY and not configured:
        raise not_found(f"digest {name} is not enabled: INSERT it first")
    c = e.config
    if c.max_timeout_ns < 0 or c.max_list_size < 0 or c.ack_timeout_ns < 0:
        raise invalid_argument(f"digest {name}: config values must not be negative")
    config = p4runtime_pb2.DigestEntry.Config()
    config.CopyFrom(c)
    state.digest_configs[e.digest_id] = config


def read_digest_entries(state: PipelineState, e: p4runtime_pb2.DigestEntry
                        ) -> Iterator[p4runtime_pb2.Entity]:
    """The configs of the enabled digests; naming one that is not enabled is NOT_FOUND,
    as on BMv2."""
    if e.digest_id:
        name = state.schema.digest(e.digest_id).preamble.name
        if e.digest_id not in state.digest_configs:
            raise not_found(f"digest {name} is not enabled")
        ids = [e.digest_id]
    else:
        ids = sorted(state.digest_configs)
    for did in ids:
        ent = p4runtime_pb2.Entity()
        ent.digest_entry.digest_id = did
        ent.digest_entry.config.CopyFrom(state.digest_configs[did])
        yield ent
