"""P4Runtime byte strings, match fields, action parameters and ``P4Data`` values.

Byte strings follow the specification's rules: big-endian, any length (the padded form
``\\x00\\x63`` and the canonical form ``\\x63`` are the same value) as long as the value
fits the P4Info bit width; an empty string or a value that does not fit is
INVALID_ARGUMENT. (The spec's section on bytestrings names OUT_OF_RANGE, but its sections
on match fields, action parameters, packet metadata and register data, which cover every
byte string a client sends, name INVALID_ARGUMENT, and so does BMv2.) Replies always use
the canonical (shortest) form, for read-write symmetry.

Match fields: a "don't care" ternary, lpm, range or optional field must be omitted; a
present field that is a wildcard (mask 0, prefix length 0, the full range) is
INVALID_ARGUMENT, and so are lpm value bits beyond the prefix and ternary value bits
outside the mask. Omitted fields become the engine's wildcard values, and engine
wildcards are omitted again when entries are read back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from p4.config.v1 import p4info_pb2, p4types_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2

from switch.engine.runtime import Exact, Lpm, MatchValue, Optional, Range, Ternary
from switch.runtime.errors import invalid_argument, unimplemented

MatchField = p4info_pb2.MatchField

KIND_NAMES = {
    MatchField.EXACT: "exact",
    MatchField.LPM: "lpm",
    MatchField.TERNARY: "ternary",
    MatchField.RANGE: "range",
    MatchField.OPTIONAL: "optional",
}
PRIORITY_KINDS = frozenset({MatchField.TERNARY, MatchField.RANGE, MatchField.OPTIONAL})


# ------------------------------------------------------------------------ byte strings


def _check_width(width: int, what: str) -> None:
    if width <= 0:
        raise unimplemented(f"{what}: values without a bit width (translated string types) "
                            "are not supported")


def decode_uint(data: bytes, width: int, what: str) -> int:
    """The unsigned value of a byte string that must fit in ``width`` bits."""
    _check_width(width, what)
    if not data:
        raise invalid_argument(f"{what}: empty byte string")
    value = int.from_bytes(data, "big")
    if value.bit_length() > width:
        raise invalid_argument(f"{what}: value 0x{data.hex()} does not fit in {width} bits")
    return value


def decode_int(data: bytes, width: int, what: str) -> int:
    """The signed (two's complement, sign-extended) value of a byte string."""
    _check_width(width, what)
    if not data:
        raise invalid_argument(f"{what}: empty byte string")
    value = int.from_bytes(data, "big", signed=True)
    if not -(1 << (width - 1)) <= value < (1 << (width - 1)):
        raise invalid_argument(f"{what}: value 0x{data.hex()} does not fit in int<{width}>")
    return value


def encode_uint(value: int) -> bytes:
    """The canonical byte string of a non-negative value (at least one byte)."""
    if value < 0:
        raise ValueError(f"negative value {value} for an unsigned byte string")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_int(value: int) -> bytes:
    """The canonical byte string of a signed value (two's complement, shortest)."""
    bits = (value if value >= 0 else ~value).bit_length() + 1
    return value.to_bytes((bits + 7) // 8, "big", signed=True)


# ----------------------------------------------------------------------- match fields


def field_label(field: p4info_pb2.MatchField) -> str:
    return f"match field {field.name or field.id}"


def wildcard(field: p4info_pb2.MatchField) -> MatchValue:
    """The engine value of an omitted (don't care) field."""
    kind = field.match_type
    if kind == MatchField.TERNARY:
        return Ternary(0, 0)
    if kind == MatchField.LPM:
        return Lpm(0, 0)
    if kind == MatchField.RANGE:
        return Range(0, (1 << field.bitwidth) - 1)
    if kind == MatchField.OPTIONAL:
        return Optional(None)
    raise invalid_argument(f"{field_label(field)} is an exact match and cannot be omitted")


def _check_kind(field: p4info_pb2.MatchField) -> None:
    if field.WhichOneof("match") == "other_match_type":
        raise unimplemented(f"{field_label(field)}: match kind {field.other_match_type!r} "
                            "is not supported")
    if field.match_type not in KIND_NAMES:
        raise unimplemented(f"{field_label(field)}: unsupported match type {field.match_type}")


def decode_field(field: p4info_pb2.MatchField, fm: p4runtime_pb2.FieldMatch) -> MatchValue:
    _check_kind(field)
    label = field_label(field)
    width = field.bitwidth
    kind = field.match_type
    given = fm.WhichOneof("field_match_type")
    if given != KIND_NAMES[kind]:
        name = KIND_NAMES[kind]
        article = "an" if name[0] in "aeiou" else "a"
        raise invalid_argument(f"{label} is {article} {name} match, got "
                               f"{given or 'no value'}")
    if kind == MatchField.EXACT:
        return Exact(decode_uint(fm.exact.value, width, label))
    if kind == MatchField.OPTIONAL:
        return Optional(decode_uint(fm.optional.value, width, label))
    if kind == MatchField.LPM:
        plen = fm.lpm.prefix_len
        if plen == 0:
            raise invalid_argument(f"{label}: a don't-care lpm match (prefix length 0) must be "
                                   "omitted")
        if not 0 < plen <= width:
            raise invalid_argument(f"{label}: prefix length {plen} not in [1, {width}]")
        value = decode_uint(fm.lpm.value, width, label)
        if value & ((1 << (width - plen)) - 1):
            raise invalid_argument(f"{label}: value bits beyond the /{plen} prefix must be zero")
        return Lpm(value, plen)
    if kind == MatchField.TERNARY:
        value = decode_uint(fm.ternary.value, width, label)
        mask = decode_uint(fm.ternary.mask, width, label)
        if mask == 0:
            raise invalid_argument(f"{label}: a don't-care ternary match (mask 0) must be "
                                   "omitted")
        if value & ~mask:
            raise invalid_argument(f"{label}: value bits outside the mask must be zero")
        return Ternary(value, mask)
    low = decode_uint(fm.range.low, width, label)
    high = decode_uint(fm.range.high, width, label)
    if low > high:
        raise invalid_argument(f"{label}: range low {low} is larger than high {high}")
    if low == 0 and high == (1 << width) - 1:
        raise invalid_argument(f"{label}: a don't-care range match (the full range) must be "
                               "omitted")
    return Range(low, high)


def decode_match(fields: Sequence[p4info_pb2.MatchField],
                 matches: Sequence[p4runtime_pb2.FieldMatch], what: str) -> tuple[MatchValue, ...]:
    """Engine match values, in P4Info field order, for a TableEntry (or ValueSetMember)
    ``match`` list; omitted fields are wildcards."""
    by_id = {f.id: i for i, f in enumerate(fields)}
    values: list[MatchValue | None] = [None] * len(fields)
    for fm in matches:
        pos = by_id.get(fm.field_id)
        if pos is None:
            raise invalid_argument(f"{what} has no match field with id {fm.field_id}")
        if values[pos] is not None:
            raise invalid_argument(f"{what}: match field id {fm.field_id} given twice")
        values[pos] = decode_field(fields[pos], fm)
    out = []
    for field, value in zip(fields, values, strict=True):
        if value is None:
            _check_kind(field)
            if field.match_type == MatchField.EXACT:
                raise invalid_argument(f"{what}: exact {field_label(field)} is missing")
            value = wildcard(field)
        out.append(value)
    return tuple(out)


def _as_kind(field: p4info_pb2.MatchField, value: MatchValue) -> MatchValue:
    """Bring an engine value to the field's own match kind."""
    width = field.bitwidth
    full = (1 << width) - 1
    kind = field.match_type
    if kind == MatchField.EXACT:
        if isinstance(value, Exact):
            return value
        if isinstance(value, (Optional, Lpm, Ternary)) and value.value is not None:
            return Exact(value.value)
        if isinstance(value, Range) and value.low == value.high:
            return Exact(value.low)
    elif kind == MatchField.LPM:
        if isinstance(value, Lpm):
            return value
        if isinstance(value, Exact):
            return Lpm(value.value, width)
    elif kind == MatchField.TERNARY:
        if isinstance(value, Ternary):
            return value
        if isinstance(value, Exact):
            return Ternary(value.value, full)
        if isinstance(value, Lpm):
            plen = value.prefix_len
            return Ternary(value.value, (full >> (width - plen)) << (width - plen) if plen else 0)
        if isinstance(value, Optional):
            return Ternary(value.value or 0, full if value.value is not None else 0)
    elif kind == MatchField.RANGE:
        if isinstance(value, Range):
            return value
        if isinstance(value, Exact):
            return Range(value.value, value.value)
    elif kind == MatchField.OPTIONAL:
        if isinstance(value, Optional):
            return value
        if isinstance(value, Exact):
            return Optional(value.value)
        if isinstance(value, Ternary):
            return Optional(None if value.mask == 0 else value.value)
    raise ValueError(f"{field_label(field)}: cannot represent {value!r} as "
                     f"{KIND_NAMES.get(kind, kind)}")


def encode_field(field: p4info_pb2.MatchField,
                 value: MatchValue) -> p4runtime_pb2.FieldMatch | None:
    """The canonical FieldMatch of an engine value, or None for a wildcard."""
    v = _as_kind(field, value)
    fm = p4runtime_pb2.FieldMatch(field_id=field.id)
    if isinstance(v, Exact):
        fm.exact.value = encode_uint(v.value)
    elif isinstance(v, Lpm):
        if v.prefix_len == 0:
            return None
        fm.lpm.value = encode_uint(v.value)
        fm.lpm.prefix_len = v.prefix_len
    elif isinstance(v, Ternary):
        if v.mask == 0:
            return None
        fm.ternary.value = encode_uint(v.value & v.mask)
        fm.ternary.mask = encode_uint(v.mask)
    elif isinstance(v, Range):
        if v.low == 0 and v.high == (1 << field.bitwidth) - 1:
            return None
        fm.range.low = encode_uint(v.low)
        fm.range.high = encode_uint(v.high)
    else:
        if v.value is None:
            return None
        fm.optional.value = encode_uint(v.value)
    return fm


def encode_match(fields: Sequence[p4info_pb2.MatchField],
                 values: Sequence[MatchValue]) -> list[p4runtime_pb2.FieldMatch]:
    out = []
    for field, value in zip(fields, values, strict=True):
        fm = encode_field(field, value)
        if fm is not None:
            out.append(fm)
    return out


def needs_priority(fields: Sequence[p4info_pb2.MatchField]) -> bool:
    return any(f.match_type in PRIORITY_KINDS for f in fields)


# ------------------------------------------------------------------- action parameters


def decode_params(action: p4info_pb2.Action, params: Sequence[p4runtime_pb2.Action.Param]
                  ) -> tuple[int, ...]:
    """Parameter values in declaration order; every parameter exactly once."""
    name = action.preamble.name
    by_id = {p.id: i for i, p in enumerate(action.params)}
    values: list[int | None] = [None] * len(action.params)
    for p in params:
        pos = by_id.get(p.param_id)
        if pos is None:
            raise invalid_argument(f"action {name} has no parameter with id {p.param_id}")
        if values[pos] is not None:
            raise invalid_argument(f"action {name}: parameter id {p.param_id} given twice")
        info = action.params[pos]
        values[pos] = decode_uint(p.value, info.bitwidth, f"action {name} parameter {info.name}")
    missing = [action.params[i].name for i, v in enumerate(values) if v is None]
    if missing:
        raise invalid_argument(f"action {name}: missing parameter {missing[0]!r}")
    return tuple(v for v in values if v is not None)


def encode_params(action: p4info_pb2.Action, args: Sequence[int]
                  ) -> list[p4runtime_pb2.Action.Param]:
    out = []
    for info, value in zip(action.params, args, strict=False):
        if value < 0:  # a signed parameter the engine reports as negative
            value &= (1 << info.bitwidth) - 1
        out.append(p4runtime_pb2.Action.Param(param_id=info.id, value=encode_uint(value)))
    return out


# ----------------------------------------------------------------------------- P4Data


class P4DataCodec:
    """``P4Data`` values of the P4Info types registers and digests use.

    Supported: ``bit<W>``, ``int<W>``, ``bool``, serializable enums, new types, and, for
    encoding digests, structs, headers and tuples of those (the engine hands digests over
    as flat tuples of leaf values in declaration order) as well as enums and errors.
    """

    def __init__(self, type_info: p4types_pb2.P4TypeInfo):
        self.info = type_info

    # ------------------------------------------------------------------ scalars

    def _scalar(self, spec: p4types_pb2.P4DataTypeSpec) -> tuple[str, int] | None:
        """("bit"|"int"|"bool", width) for scalar specs, None otherwise."""
        kind = spec.WhichOneof("type_spec")
        if kind == "bitstring":
            bs = spec.bitstring
            which = bs.WhichOneof("type_spec")
            if which == "bit":
                return "bit", bs.bit.bitwidth
            if which == "int":
                return "int", bs.int.bitwidth
            return None
        if kind == "bool":
            return "bool", 1
        if kind == "serializable_enum":
            enum = self.info.serializable_enums.get(spec.serializable_enum.name)
            if enum is None:
                raise invalid_argument(f"unknown serializable enum {spec.serializable_enum.name}")
            return "enum", enum.underlying_type.bitwidth
        if kind == "new_type":
            nt = self.info.new_types.get(spec.new_type.name)
            if nt is not None and nt.WhichOneof("representation") == "original_type":
                return self._scalar(nt.original_type)
        return None

    def decode(self, spec: p4types_pb2.P4DataTypeSpec, data: p4data_pb2.P4Data,
               what: str) -> int:
        """The engine value of a scalar P4Data (registers)."""
        scalar = self._scalar(spec)
        if scalar is None:
            raise unimplemented(f"{what}: P4Data of type {spec.WhichOneof('type_spec')} is not "
                                "supported")
        kind, width = scalar
        given = data.WhichOneof("data")
        if kind == "bool":
            if given != "bool":
                raise invalid_argument(f"{what}: expected a bool, got {given or 'nothing'}")
            return int(data.bool)
        if kind == "enum":
            if given != "enum_value":
                raise invalid_argument(f"{what}: expected an enum_value, got {given or 'nothing'}")
            return decode_uint(data.enum_value, width, what)
        if given != "bitstring":
            raise invalid_argument(f"{what}: expected a bitstring, got {given or 'nothing'}")
        if kind == "int":
            return decode_int(data.bitstring, width, what)
        return decode_uint(data.bitstring, width, what)

    def encode(self, spec: p4types_pb2.P4DataTypeSpec, value: int) -> p4data_pb2.P4Data:
        """The P4Data of a scalar engine value."""
        return self.encode_leaves(spec, iter((value,)))

    def encode_leaves(self, spec: p4types_pb2.P4DataTypeSpec, leaves: Iterator[int]
                      ) -> p4data_pb2.P4Data:
        """The P4Data of a (possibly compound) value given as flat leaf values."""
        out = p4data_pb2.P4Data()
        scalar = self._scalar(spec)
        if scalar is not None:
            kind, width = scalar
            value = next(leaves)
            if kind == "bool":
                out.bool = bool(value)
            elif kind == "enum":
                out.enum_value = encode_uint(value & ((1 << width) - 1))
            elif kind == "int":
                if value >> (width - 1) and value > 0:  # an unsigned view of a signed value
                    value -= 1 << width
                out.bitstring = encode_int(value)
            else:
                out.bitstring = encode_uint(value & ((1 << width) - 1))
            return out
        kind = spec.WhichOneof("type_spec")
        if kind == "struct":
            struct = self._named(self.info.structs, spec.struct.name, "struct")
            for m in struct.members:
                out.struct.members.append(self.encode_leaves(m.type_spec, leaves))
            return out
        if kind == "tuple":
            for m in spec.tuple.members:
                out.tuple.members.append(self.encode_leaves(m, leaves))
            return out
        if kind == "header":
            header = self._named(self.info.headers, spec.header.name, "header")
            out.header.is_valid = True
            for m in header.members:
                bs = m.type_spec
                width = bs.bit.bitwidth if bs.WhichOneof("type_spec") == "bit" else bs.int.bitwidth
                out.header.bitstrings.append(encode_uint(next(leaves) & ((1 << width) - 1)))
            return out
        if kind == "enum":
            enum = self._named(self.info.enums, spec.enum.name, "enum")
            index = next(leaves)
            members = enum.members
            out.enum = members[index].name if 0 <= index < len(members) else str(index)
            return out
        if kind == "error":
            index = next(leaves)
            members = self.info.error.members
            out.error = members[index] if 0 <= index < len(members) else str(index)
            return out
        raise unimplemented(f"P4Data of type {kind} is not supported")

    @staticmethod
    def _named(table: Any, name: str, what: str) -> Any:
        # a protobuf message map creates missing keys on indexing: test first
        if name not in table:
            raise invalid_argument(f"P4Info type_info has no {what} {name!r}")
        return table[name]
