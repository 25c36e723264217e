"""Runtime files as p4lang's tutorials write them (``s1-runtime.json``), read and applied.

    {"target": "bmv2",
     "p4info": "build/basic.p4.p4info.txtpb",
     "bmv2_json": "build/basic.json",
     "table_entries": [
       {"table": "MyIngress.ipv4_lpm", "default_action": true,
        "action_name": "MyIngress.drop", "action_params": {}},
       {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.1.1", 32]},
        "action_name": "MyIngress.ipv4_forward",
        "action_params": {"dstAddr": "08:00:00:00:01:11", "port": 1}}],
     "multicast_group_entries": [
       {"multicast_group_id": 1, "replicas": [{"egress_port": 1, "instance": 1}]}],
     "clone_session_entries": [
       {"clone_session_id": 5, "replicas": [{"egress_port": 3, "instance": 0}],
        "packet_length_bytes": 0}]}

A match value is a number or a string (decimal, ``0x..``, an IPv4 or a MAC address) for
an exact field, ``[value, prefix_len]`` for lpm, ``[value, mask]`` for ternary and
``[low, high]`` for range; ternary, range and optional entries need a ``priority``.
``p4info`` and ``bmv2_json`` (the device config: ``ina p4c -o`` output for the built-in
switch, p4c-bm2-ss output for BMv2) are paths relative to the current directory, as the
tutorials run them from the exercise's directory, or else to the runtime file's own.

``apply_runtime_file`` does what the tutorials' controller does: it pushes the pipeline
(the device config wrapped in a ``p4.tmp.P4DeviceConfig``, as BMv2's PI server takes
it), sets the default actions, inserts the entries, then the multicast groups and clone
sessions. Every problem is a ``RuntimeFileError`` that names the file, the line and the
entry: ``s1-runtime.json:14: table_entries[1].match: ...``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.entities import CloneSession, MulticastGroup, Replica, TableEntry, encode_entity
from controller.errors import P4RuntimeClientError
from controller.p4info_schema import P4InfoSchema, load_p4info
from controller.p4runtime_client import P4RuntimeClient

KEYS = ("target", "p4info", "bmv2_json", "table_entries", "multicast_group_entries",
        "clone_session_entries")
TABLE_ENTRY_KEYS = ("table", "match", "action_name", "action_params", "default_action",
                    "priority")
TARGETS = ("bmv2",)


class RuntimeFileError(Exception):
    """A runtime file that cannot be read or applied; the message says where."""


@dataclass
class Located:
    """An entity of the file and where it stands (for errors)."""

    item: TableEntry | MulticastGroup | CloneSession
    at: tuple[Any, ...]


@dataclass
class RuntimeFile:
    path: Path
    p4info: Path
    device_config: Path
    entries: list[Located] = field(default_factory=list)
    where: Any = None

    @property
    def default_actions(self) -> list[Located]:
        return [e for e in self.entries if isinstance(e.item, TableEntry) and e.item.is_default]

    @property
    def inserts(self) -> list[Located]:
        return [e for e in self.entries
                if not (isinstance(e.item, TableEntry) and e.item.is_default)]


def load_runtime_file(path: str | Path) -> RuntimeFile:
    """Read and check ``path`` (structure and files; names are checked when applied)."""
    from topologies.file_positions import read_json

    data, where = read_json(path, RuntimeFileError, "runtime file")
    if not isinstance(data, dict):
        raise where.error("expected an object with target, p4info, bmv2_json, "
                          "table_entries, ...")
    for key in data:
        if key not in KEYS:
            raise where.error(f"unknown key {key!r} (keys: {', '.join(KEYS)})", key)
    target = data.get("target")
    if target not in TARGETS:
        raise where.error(f"target {target!r}: expected \"bmv2\" (the built-in switch takes "
                          "what BMv2 takes)", *(["target"] if "target" in data else []))
    files = {key: _file(data, key, Path(path), where) for key in ("p4info", "bmv2_json")}
    rf = RuntimeFile(Path(path), files["p4info"], files["bmv2_json"], where=where)
    for i, raw in enumerate(_list(data, "table_entries", where)):
        rf.entries.append(Located(_table_entry(raw, where, ("table_entries", i)),
                                  ("table_entries", i)))
    for i, raw in enumerate(_list(data, "multicast_group_entries", where)):
        at = ("multicast_group_entries", i)
        group_id = _number(raw, "multicast_group_id", where, at)
        rf.entries.append(Located(MulticastGroup(group_id, _replicas(raw, where, at)), at))
    for i, raw in enumerate(_list(data, "clone_session_entries", where)):
        at = ("clone_session_entries", i)
        session = CloneSession(_number(raw, "clone_session_id", where, at),
                               _replicas(raw, where, at),
                               packet_length_bytes=_number(raw, "packet_length_bytes", where,
                                                           at, default=0))
        rf.entries.append(Located(session, at))
    return rf


def device_config_message(data: bytes) -> bytes:
    """``data`` (a device config) wrapped as BMv2's PI server and p4lang's
    ``p4runtime_lib`` wrap it: a serialized ``p4.tmp.P4DeviceConfig``."""
    try:
        from p4.tmp import p4config_pb2  # type: ignore[import-not-found]
    except ImportError:
        raise RuntimeFileError("p4.tmp.p4config_pb2 is not installed (./setup.sh installs "
                               "it with the project)") from None
    return bytes(p4config_pb2.P4DeviceConfig(reassign=True, device_data=data)
                 .SerializeToString())


def apply_runtime_file(client: P4RuntimeClient, rf: RuntimeFile) -> dict[str, int]:
    """Push the pipeline and write every entity of ``rf`` (see the module docstring);
    how many of each kind were written."""
    try:
        info = load_p4info(rf.p4info)
    except (OSError, P4RuntimeClientError, ValueError) as e:
        raise RuntimeFileError(f"{rf.where('p4info')}: {rf.p4info}: {e}") from None
    schema = P4InfoSchema(info)
    encoded = []
    for located in rf.default_actions + rf.inserts:
        try:
            encoded.append((located, encode_entity(schema, located.item)))
        except P4RuntimeClientError as e:
            raise rf.where.error(str(e), *located.at) from None
    try:
        client.set_pipeline(info, device_config_message(rf.device_config.read_bytes()))
    except OSError as e:
        raise RuntimeFileError(f"{rf.where('bmv2_json')}: {rf.device_config}: "
                               f"{e.strerror}") from None
    except P4RuntimeClientError as e:
        raise RuntimeFileError(f"{rf.path}: SetForwardingPipelineConfig: {e}") from None
    counts = {"default actions": 0, "table entries": 0, "multicast groups": 0,
              "clone sessions": 0}
    for located, entity in encoded:
        item = located.item
        is_default = isinstance(item, TableEntry) and item.is_default
        try:
            client.write([("MODIFY" if is_default else "INSERT", entity)])
        except P4RuntimeClientError as e:
            raise rf.where.error(str(e), *located.at) from None
        kind = ("default actions" if is_default else "table entries"
                if isinstance(item, TableEntry) else "multicast groups"
                if isinstance(item, MulticastGroup) else "clone sessions")
        counts[kind] += 1
    return counts


# ------------------------------------------------------------------ reading


def _file(data: dict[str, Any], key: str, path: Path, where: Any) -> Path:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise where.error(f"missing {key!r} (a file name)", *([key] if key in data else []))
    for candidate in (Path(value), path.parent / value):
        if candidate.is_file():
            return candidate
    raise where.error(f"{value}: no such file (in the current directory or beside the "
                      f"runtime file)", key)


def _list(data: dict[str, Any], key: str, where: Any) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise where.error("expected a list", key)
    return value


def _object(raw: object, where: Any, at: tuple[Any, ...]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise where.error("expected an object", *at)
    return raw


def _number(raw: object, key: str, where: Any, at: tuple[Any, ...],
            default: int | None = None) -> int:
    obj = _object(raw, where, at)
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        what = "missing" if key not in obj else f"{value!r} is not a non-negative integer"
        raise where.error(f"{key}: {what}", *at, *([key] if key in obj else []))
    return value


def _replicas(raw: dict[str, Any], where: Any, at: tuple[Any, ...]) -> list[Replica]:
    items = raw.get("replicas")
    if not isinstance(items, list):
        raise where.error("replicas: expected a list of {egress_port, instance}", *at)
    return [Replica(_number(r, "egress_port", where, (*at, "replicas", i)),
                    _number(r, "instance", where, (*at, "replicas", i), default=0))
            for i, r in enumerate(items)]


def _table_entry(raw: object, where: Any, at: tuple[Any, ...]) -> TableEntry:
    obj = _object(raw, where, at)
    for key in obj:
        if key not in TABLE_ENTRY_KEYS:
            raise where.error(f"unknown key {key!r} (keys: {', '.join(TABLE_ENTRY_KEYS)})",
                              *at, key)
    table, action = obj.get("table"), obj.get("action_name")
    if not isinstance(table, str) or not table:
        raise where.error("missing 'table'", *at)
    if not isinstance(action, str) or not action:
        raise where.error("missing 'action_name'", *at)
    params = obj.get("action_params", {})
    if not isinstance(params, dict):
        raise where.error("expected an object of parameter names and values", *at,
                          "action_params")
    match = obj.get("match", {})
    if not isinstance(match, dict):
        raise where.error("expected an object of match field names and values", *at,
                          "match")
    is_default = obj.get("default_action", False)
    if not isinstance(is_default, bool):
        raise where.error("expected true or false", *at, "default_action")
    if is_default and match:
        raise where.error("a default action has no match", *at, "match")
    priority = obj.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or priority < 0:
        raise where.error(f"{priority!r} is not a non-negative integer", *at, "priority")
    return TableEntry(table, {name: tuple(v) if isinstance(v, list) else v
                              for name, v in match.items()},
                      action, params, priority=priority, is_default=is_default)
