"""Python classes for P4 aggregate values, generated as source.

A header is an object with ``__slots__``: ``valid`` and one ``f_<field>`` per field
(varbit fields also keep their current width in ``w_<field>``). Structs and unions hold
their members (nested objects are created once and never replaced: assignment copies
in place, so references stay valid for the whole packet). A header stack holds
``elems`` (a list of element objects) and ``nxt`` (the next index).

For each header type the extraction and emission code is planned here: the fields are
cut into byte-aligned runs read with one ``struct`` format, so extracting a header costs
one ``unpack_from`` plus one store per field.

A run of consecutive fields that lane fusion (``switch.engine.lanes``) steps through is
held as one numpy array instead (``a_<first field>``, of the fields' exact integer
dtype): fused code reads and writes it whole, extraction views the packet's bytes and
emission converts the array to bytes in one step, and each field of the run stays
readable and writable by its own name through a property (``f_<field>``), so every
other use of the header is unchanged.

Such arrays are copied on write: a header's array may be shared (the zeros of a new
header, the copies a multicast makes, a value fused code stored into two headers, the
packet's own bytes that extraction views), and a shared array is read-only. Its byte
order is either (extraction leaves the wire's, arithmetic makes the machine's).
Whoever writes into an array in place (the fields' properties, fused code storing part
of a run) first replaces a read-only one by a copy; everything else replaces the array
whole. So a read-only array never changes, and the bytes a deparser made of one can be
used again (``rt.wire_bytes``).
"""

from __future__ import annotations

import keyword
import re
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from switch.engine.rt import array_field, wire_bytes
from switch.frontend import types as T


def attr(name: str) -> str:
    return "f_" + name


def ident(text: str) -> str:
    s = re.sub(r"\W", "_", text)
    if not s or s[0].isdigit() or keyword.iskeyword(s):
        s = "_" + s
    return s


def scalar_width(t: T.Type) -> int:
    if isinstance(t, T.Bits):
        return t.width
    if isinstance(t, T.Bool):
        return 1
    if isinstance(t, T.SerEnum):
        return t.underlying.width
    if isinstance(t, T.NewType):
        return scalar_width(t.underlying)
    if isinstance(t, T.Error | T.Enum):
        return 32
    raise TypeError(f"{t} is not a scalar")


def is_signed(t: T.Type) -> bool:
    if isinstance(t, T.Bits):
        return t.signed
    if isinstance(t, T.SerEnum):
        return t.underlying.signed
    if isinstance(t, T.NewType):
        return is_signed(t.underlying)
    return False


def strip(t: T.Type) -> T.Type:
    """The representation type (new types are their underlying type)."""
    while isinstance(t, T.NewType):
        t = t.underlying
    return t


@dataclass
class FieldPlan:
    attr: str
    width: int
    signed: bool
    is_bool: bool
    varbit: bool = False
    max_width: int = 0
    array: str = ""  # the attribute of the array run holding the field, if any


def struct_leaves(t: T.Type, path: str) -> list[FieldPlan]:
    """The scalar leaves of a header field of type ``t`` at ``path`` (one plan unless
    ``t`` is a struct, whose fields are laid out in order)."""
    t = strip(t)
    if isinstance(t, T.Struct):
        out: list[FieldPlan] = []
        for f in t.fields:
            out += struct_leaves(f.type, f"{path}.{attr(f.name)}")
        return out
    return [FieldPlan(path, scalar_width(t), is_signed(t), isinstance(t, T.Bool))]


_CODES = {8: "B", 16: "H", 32: "I", 64: "Q"}


@dataclass
class Chunk:
    """One item of a struct format: a single aligned field (``field`` set) or a run of
    fields packed into ``nbytes`` bytes."""

    code: str
    fields: list[tuple[FieldPlan, int]]  # (field, shift within the run)
    nbytes: int
    split48: bool = False  # a 48-bit field read as H + I
    array: str = ""  # a whole array run, read and written as its bytes


def plan_chunks(fields: list[FieldPlan]) -> list[Chunk] | None:
    """Cut fixed-width fields into byte-aligned runs (None if the header is not a whole
    number of bytes or has a varbit)."""
    if any(f.varbit for f in fields):
        return None
    total = sum(f.width for f in fields)
    if total % 8:
        return None
    chunks: list[Chunk] = []
    run: list[FieldPlan] = []
    run_bits = 0
    arrays: dict[str, Chunk] = {}
    for f in fields:
        if f.array and not run:
            c = arrays.get(f.array)
            if c is None:
                c = arrays[f.array] = Chunk("", [], 0, array=f.array)
                chunks.append(c)
            c.fields.append((f, 0))
            c.nbytes += f.width // 8
            c.code = f"{c.nbytes}s"
            continue
        if not run and f.width in _CODES and not f.is_bool:
            code = _CODES[f.width]
            chunks.append(Chunk(code.lower() if f.signed else code, [(f, 0)], f.width // 8))
            continue
        if not run and f.width == 48 and not f.signed:
            chunks.append(Chunk("HI", [(f, 0)], 6, split48=True))
            continue
        run.append(f)
        run_bits += f.width
        if run_bits % 8 == 0:
            n = run_bits // 8
            shifted = []
            pos = run_bits
            for g in run:
                pos -= g.width
                shifted.append((g, pos))
            code = _CODES.get(run_bits, f"{n}s")
            chunks.append(Chunk(code, shifted, n))
            run, run_bits = [], 0
    assert not run
    return chunks


def _direct(c: Chunk) -> bool:
    """A chunk that ``struct`` reads as the value of its one field."""
    f, shift = c.fields[0]
    return len(c.fields) == 1 and c.code in "BHIQbhiq" and shift == 0 and not f.is_bool \
        and f.width == c.nbytes * 8


def array_attr(t: T.Header, first: int) -> str:
    """The attribute holding the array run that starts at field ``first``."""
    return "a_" + t.fields[first].name


def _array_fields_ok(t: T.Header, lo: int, hi: int) -> bool:
    if not 0 <= lo < hi <= len(t.fields):
        return False
    kinds = {strip(f.type) for f in t.fields[lo:hi]}
    if len(kinds) != 1:
        return False
    (k,) = kinds
    if not isinstance(k, T.Bits) or k.width not in (8, 16, 32, 64):
        return False
    offset = 0
    for f in t.fields[:lo]:
        ft = strip(f.type)
        if isinstance(ft, T.Varbit):
            return False
        offset += T.width_of(ft)
    return offset % 8 == 0


class TypeGen:
    """Generates (once per type) the classes of aggregate values."""

    def __init__(self) -> None:
        self.names: dict[object, str] = {}
        self.source: list[str] = []
        self.layouts: dict[str, list[FieldPlan]] = {}
        # global name -> object the classes use (struct formats, numpy dtypes, ...)
        self.globals: dict[str, Any] = {"_np_frombuffer": np.frombuffer,
                                        "_np_array_equal": np.array_equal,
                                        "_array_field": array_field}
        # the array chunks' converters to wire bytes (one per dtype), by global name
        self._wire: dict[str, str] = {}
        self._used: set[str] = set()
        # header class -> its pack() as (struct format without the byte order, the
        # argument expressions on "self."), for headers with a fixed layout
        self.pack_plans: dict[str, tuple[str, list[str]]] = {}
        # header type -> its array runs as (first field index, count), planned before
        # the header's class is generated
        self._array_runs: dict[T.Header, list[tuple[int, int]]] = {}

    def _unique(self, base: str) -> str:
        name = ident(base)
        n = name
        i = 1
        while n in self._used:
            i += 1
            n = f"{name}_{i}"
        self._used.add(n)
        return n

    # ------------------------------------------------------------------ entry

    def cls(self, t: T.Type) -> str:
        t = strip(t)
        key: object = t
        if isinstance(t, T.Stack):
            key = ("stack", self.cls(t.element), t.size)
        name = self.names.get(key)
        if name is not None:
            return name
        if isinstance(t, T.Header):
            name = self._unique("H_" + t.name)
            self.names[key] = name
            self._header(name, t)
        elif isinstance(t, T.Struct):
            name = self._unique("S_" + t.name)
            self.names[key] = name
            self._struct(name, t.fields, union=False)
        elif isinstance(t, T.HeaderUnion):
            name = self._unique("U_" + t.name)
            self.names[key] = name
            self._struct(name, t.fields, union=True)
        elif isinstance(t, T.Stack):
            elem = self.cls(t.element)
            name = self._unique(f"K_{elem}_{t.size}")
            self.names[key] = name
            self._stack(name, elem, t.size)
        else:
            raise TypeError(f"no class for {t}")
        return name

    def default(self, t: T.Type) -> str:
        """Python expression for a fresh default value of type ``t``."""
        t = strip(t)
        if isinstance(t, T.Bool):
            return "False"
        if isinstance(t, (T.Header, T.Struct, T.HeaderUnion, T.Stack)):
            return f"{self.cls(t)}()"
        if isinstance(t, T.Tuple):
            inner = ", ".join(self.default(e) for e in t.elements)
            return f"({inner},)" if t.elements else "()"
        if isinstance(t, T.String):
            return "''"
        return "0"

    def field_plans(self, t: T.Header) -> list[FieldPlan]:
        """The header's fields in wire order; the fields of a struct-typed field are
        its leaves, with a dotted ``attr`` (``f_p.f_hi``)."""
        plans = []
        in_array = {i: array_attr(t, first) for first, n in self._array_runs.get(t, [])
                    for i in range(first, first + n)}
        for i, f in enumerate(t.fields):
            ft = strip(f.type)
            if isinstance(ft, T.Varbit):
                plans.append(FieldPlan(attr(f.name), 0, False, False, True, ft.max_width))
            elif i in in_array:
                plans.append(FieldPlan(attr(f.name), scalar_width(ft), is_signed(ft), False,
                                       array=in_array[i]))
            else:
                plans += struct_leaves(ft, attr(f.name))
        return plans

    # ----------------------------------------------------------- array runs

    def plan_array(self, t: T.Header, first: int, count: int) -> bool:
        """Hold fields ``first .. first + count - 1`` of header ``t`` in one array (merged
        with the runs planned already that it overlaps or touches). False when they
        cannot be: not one integer type of 8, 16, 32 or 64 bits, not starting on a byte,
        or the header's class exists already."""
        if self.names.get(t) is not None:
            return False
        runs = self._array_runs.get(t, [])
        lo, hi = first, first + count
        keep = []
        for a, n in runs:
            if a <= hi and lo <= a + n:
                lo, hi = min(lo, a), max(hi, a + n)
            else:
                keep.append((a, n))
        if not _array_fields_ok(t, lo, hi):
            return False
        self._array_runs[t] = sorted(keep + [(lo, hi - lo)])
        return True

    def array_slot(self, t: T.Header, first: int, count: int) -> tuple[str, int, int] | None:
        """(attribute, offset of field ``first`` in it, run length) when fields
        ``first .. first + count - 1`` lie in one array run of ``t``."""
        for a, n in self._array_runs.get(t, []):
            if a <= first and first + count <= a + n:
                return array_attr(t, a), first - a, n
        return None

    def _zeros(self, dtype_name: str, size: int) -> str:
        """A global name for a read-only array of ``size`` zeros (copying it is faster
        than making zeros)."""
        name = f"_Z{dtype_name}_{size}"
        if name not in self.globals:
            z = np.zeros(size, self.globals[dtype_name])
            z.flags.writeable = False
            self.globals[name] = z
        return name

    def dtype_name(self, t: T.Type, big_endian: bool = False) -> str:
        """A global name for the numpy dtype of ``bit<W>``/``int<W>`` values (W in 8,
        16, 32, 64), native or big-endian."""
        st = strip(t)
        assert isinstance(st, T.Bits)
        dt = np.dtype(f"{'>' if big_endian else '='}{'i' if st.signed else 'u'}{st.width // 8}")
        name = f"_DT{'BE' if big_endian else ''}_{'i' if st.signed else 'u'}{st.width}"
        self.globals[name] = dt
        return name

    # ---------------------------------------------------------------- classes

    def _header(self, name: str, t: T.Header) -> None:
        plans = self.field_plans(t)
        self.layouts[name] = plans
        # a struct-typed field is an object of its struct class, created once
        nested = {attr(f.name): self.cls(f.type) for f in t.fields
                  if isinstance(strip(f.type), T.Struct)}
        # array runs: attribute -> (dtype global, length); their fields are properties
        arrays: dict[str, tuple[str, int]] = {}
        for first, n in self._array_runs.get(t, []):
            arrays[array_attr(t, first)] = (self.dtype_name(t.fields[first].type), n)
        plain = [p for p in plans if not p.array]
        in_runs = {p.attr for p in plans if p.array}
        slots = ["valid"] + [attr(f.name) for f in t.fields if attr(f.name) not in in_runs] \
            + list(arrays) + ["w_" + p.attr[2:] for p in plans if p.varbit]
        src = [f"class {name}:", f"    __slots__ = {tuple(slots)!r}",
               f"    TYPE_NAME = {t.name!r}",
               "    LAYOUT = " + repr([(p.attr, p.width, p.signed, p.is_bool, p.varbit, p.max_width)
                                        for p in plans]),
               f"    WIDTH = {sum(p.width for p in plans)}"]
        position: dict[str, int] = {}
        for p in plans:
            if p.array:
                j = position.get(p.array, 0)
                position[p.array] = j + 1
                src.append(f"    {p.attr} = _array_field({p.array!r}, {j})")
        src += ["    def __init__(self):", "        self.valid = False"]
        for a, cls in nested.items():
            src.append(f"        self.{a} = {cls}()")
        for a, (dt, size) in arrays.items():
            src.append(f"        self.{a} = {self._zeros(dt, size)}")
        for p in plain:
            if "." not in p.attr:
                src.append(f"        self.{p.attr} = {'False' if p.is_bool else '0'}")
            if p.varbit:
                src.append(f"        self.w_{p.attr[2:]} = 0")
        src += ["    def zero(self):"]
        src += [f"        self.{p.attr} = {'False' if p.is_bool else '0'}"
                for p in plain] or ["        pass"]
        src += [f"        self.{a} = {self._zeros(*arrays[a])}" for a in arrays]
        src += [f"        self.w_{p.attr[2:]} = 0" for p in plans if p.varbit]
        # arrays are shared read-only (copied on write); marking one costs more than
        # looking whether it is marked
        def share(a: str, src: str, dst: str) -> str:
            return (f"        if {src}.{a}.flags.writeable:\n"
                    f"            {src}.{a}.flags.writeable = False\n"
                    f"        {dst}.{a} = {src}.{a}")

        src += ["    def copy(self):", f"        n = _new({name})"]
        src += [f"        n.{s} = self.{s}.copy()" if s in nested else share(s, "self", "n")
                if s in arrays else f"        n.{s} = self.{s}" for s in slots]
        src += ["        return n", "    def assign(self, o):"]
        src += [f"        self.{s}.assign(o.{s})" if s in nested else share(s, "o", "self")
                if s in arrays else f"        self.{s} = o.{s}" for s in slots]
        src += ["    def invalidate_all(self):", "        self.valid = False"]
        # a varbit is equal only with the same width (P4_16 spec, varbit operations)
        conds = " and ".join([f"self.{p.attr} == o.{p.attr}" for p in plain]
                             + [f"_np_array_equal(self.{a}, o.{a})" for a in arrays]
                             + [f"self.w_{p.attr[2:]} == o.w_{p.attr[2:]}"
                                for p in plans if p.varbit]) or "True"
        src += ["    def eq(self, o):",
                f"        return self.valid == o.valid and (not self.valid or ({conds}))"]
        src += self._pack_method(name, plans)
        src.append("")
        self.source.extend(src)

    def _pack_method(self, name: str, plans: list[FieldPlan]) -> list[str]:
        chunks = plan_chunks(plans)
        if chunks is None:
            return ["    def pack(self):", "        return _pack_generic(self)"]
        fmt = "".join(c.code for c in chunks)
        sname = f"_ST_{name}"
        self.globals[sname] = struct.Struct(">" + fmt)
        args: list[str] = []
        self.pack_plans[name] = (fmt, args)
        for c in chunks:
            if c.array:
                args.append(f"{self._wire_fn(c)}(self.{c.array})")
                continue
            if c.split48:
                f = c.fields[0][0]
                args += [f"self.{f.attr} >> 32", f"self.{f.attr} & 0xFFFFFFFF"]
                continue
            if len(c.fields) == 1 and c.fields[0][1] == 0 and c.code in "BHIQbhiq":
                f = c.fields[0][0]
                args.append(f"self.{f.attr}")
                continue
            parts = []
            for f, shift in c.fields:
                v = f"self.{f.attr}"
                if f.signed:
                    v = f"({v} & {(1 << f.width) - 1})"
                parts.append(f"({v} << {shift})" if shift else v)
            expr = " | ".join(parts)
            if c.code.endswith("s"):
                expr = f"({expr}).to_bytes({c.nbytes}, 'big')"
            args.append(expr)
        return ["    def pack(self):", f"        return {sname}.pack({', '.join(args)})"]

    def extract_lines(self, cls_name: str, obj: str, data: str, pos: str) -> list[str]:
        """Statements that fill header ``obj`` from ``data`` at byte offset ``pos``
        (the caller checked alignment and length). ``data`` is immutable (``bytes``):
        an array run becomes a read-only big-endian view of it, without a copy."""
        plans = self.layouts[cls_name]
        chunks = plan_chunks(plans)
        assert chunks is not None
        names = []
        lines = []
        vals = []
        i = 0
        fmt = ""
        offset = 0
        for c in chunks:
            fmt += f"{c.nbytes}x" if c.array else c.code
            offset += c.nbytes
            if c.array:
                f = c.fields[0][0]
                be = self.dtype_name(T.Bits(f.width, f.signed), big_endian=True)
                at = f"{pos} + {offset - c.nbytes}" if offset > c.nbytes else pos
                vals.append((c, f"_np_frombuffer({data}, {be}, {len(c.fields)}, {at})"))
                continue
            if c.split48:
                names += [f"_x{i}", f"_x{i + 1}"]
                vals.append((c, f"(_x{i} << 32) | _x{i + 1}"))
                i += 2
            elif _direct(c):  # unpacked straight into the field
                names.append(f"{obj}.{c.fields[0][0].attr}")
            else:
                names.append(f"_x{i}")
                src = f"_x{i}"
                if c.code.endswith("s") and not c.array:
                    src = f"int.from_bytes(_x{i}, 'big')"
                vals.append((c, src))
                i += 1
        sname = f"_ST_{cls_name}"
        if fmt != "".join(c.code for c in chunks):
            sname = f"_SX_{cls_name}"
            self.globals[sname] = struct.Struct(">" + fmt)
        if len(names) == 1:
            lines.append(f"{names[0]}, = {sname}.unpack_from({data}, {pos})")
        elif names:
            lines.append(f"{', '.join(names)} = {sname}.unpack_from({data}, {pos})")
        for c, src in vals:
            if c.array:
                lines.append(f"{obj}.{c.array} = {src}")
                continue
            if c.split48:
                lines.append(f"{obj}.{c.fields[0][0].attr} = {src}")
                continue
            if c.code.endswith("s") and len(c.fields) > 1:
                lines.append(f"_r = {src}")
                src = "_r"
            for f, shift in c.fields:
                m = (1 << f.width) - 1
                v = f"({src} >> {shift}) & {m}" if shift else f"{src} & {m}"
                if f.signed:
                    h = 1 << (f.width - 1)
                    v = f"(({v}) ^ {h}) - {h}"
                elif f.is_bool:
                    v = f"({v}) != 0"
                lines.append(f"{obj}.{f.attr} = {v}")
        lines.append(f"{obj}.valid = True")
        return lines

    def _wire_fn(self, c: Chunk) -> str:
        """The global converting the chunk's array to its bytes on the wire."""
        f = c.fields[0][0]
        be = self.dtype_name(T.Bits(f.width, f.signed), big_endian=True)
        name = self._wire.get(be)
        if name is None:
            name = self._wire[be] = f"_W{be}"
            self.globals[name] = wire_bytes(self.globals[be])
        return name

    def header_nbytes(self, cls_name: str) -> int | None:
        plans = self.layouts[cls_name]
        if plan_chunks(plans) is None:
            return None
        return sum(p.width for p in plans) // 8

    def owns_fields(self, t: T.Header) -> bool:
        """Whether ``extract_lines`` sets every attribute of a header of type ``t`` (a
        fixed layout of whole bytes, no struct-typed field), so an extraction may
        fill an object fresh from ``_new`` rather than a default one."""
        name = self.cls(t)
        return self.header_nbytes(name) is not None and not any(
            isinstance(strip(f.type), T.Struct) for f in t.fields)

    def partial_factory(self, t: T.Struct, skip: frozenset[str]) -> str:
        """The global name of a function returning a fresh default value of struct
        ``t`` whose members named in ``skip`` (attributes) are left unset: a parser
        that sets them itself uses it (see ``switch.engine.codegen_parser``)."""
        name = self._unique(f"_mk_{self.cls(t)}")
        lines = self._fresh_lines(t, "_v", 0, skip)
        self.source.extend([f"def {name}():", *("    " + ln for ln in lines),
                            "    return _v", ""])
        return name

    def _fresh_lines(self, t: T.Type, var: str, depth: int = 0,
                     skip: frozenset[str] = frozenset()) -> list[str]:
        """Lines that set local ``var`` to a fresh default value of aggregate ``t``,
        building the headers and structs inside it in place (a struct's constructor
        is one Python call, not one per member). Stacks, and headers with struct
        fields, are made by their constructors; members named in ``skip`` are left
        unset."""
        t = strip(t)
        name = self.cls(t)
        if isinstance(t, T.Header):
            plans = self.layouts[name]
            if any("." in p.attr for p in plans) or \
                    any(isinstance(strip(f.type), T.Struct) for f in t.fields):
                return [f"{var} = {name}()"]
            lines = [f"{var} = _new({name})", f"{var}.valid = False"]
            for first, n in self._array_runs.get(t, []):
                dt = self.dtype_name(t.fields[first].type)
                lines.append(f"{var}.{array_attr(t, first)} = {self._zeros(dt, n)}")
            for p in plans:
                if not p.array:
                    lines.append(f"{var}.{p.attr} = {'False' if p.is_bool else '0'}")
                if p.varbit:
                    lines.append(f"{var}.w_{p.attr[2:]} = 0")
            return lines
        if isinstance(t, (T.Struct, T.HeaderUnion)):
            lines = [f"{var} = _new({name})"]
            for i, f in enumerate(t.fields):
                ft = strip(f.type)
                if attr(f.name) in skip:
                    continue
                if isinstance(ft, (T.Header, T.Struct, T.HeaderUnion)):
                    sub = f"_m{depth}_{i}"
                    lines += self._fresh_lines(ft, sub, depth + 1)
                    lines.append(f"{var}.{attr(f.name)} = {sub}")
                else:
                    lines.append(f"{var}.{attr(f.name)} = {self.default(ft)}")
            return lines
        return [f"{var} = {name}()"]

    def _copy_lines(self, t: T.Type, src: str, dst: str, n: int) -> list[str]:
        """Lines that set ``dst`` to a copy of header ``src`` made in place (one call
        for a whole struct; see ``copy``), or by its ``copy`` method."""
        t = strip(t)
        if not isinstance(t, T.Header) or any(isinstance(strip(f.type), T.Struct)
                                              for f in t.fields):
            return [f"{dst} = {src}.copy()"]
        name = self.cls(t)
        s, c = f"_s{n}", f"_c{n}"
        lines = [f"{s} = {src}", f"{c} = _new({name})", f"{c}.valid = {s}.valid"]
        for first, _count in self._array_runs.get(t, []):
            a = array_attr(t, first)
            lines += [f"if {s}.{a}.flags.writeable:", f"    {s}.{a}.flags.writeable = False",
                      f"{c}.{a} = {s}.{a}"]
        for p in self.layouts[name]:
            if not p.array:
                lines.append(f"{c}.{p.attr} = {s}.{p.attr}")
            if p.varbit:
                lines.append(f"{c}.w_{p.attr[2:]} = {s}.w_{p.attr[2:]}")
        return lines + [f"{dst} = {c}"]

    def _struct(self, name: str, fields: tuple[T.FieldType, ...], union: bool) -> None:
        inits: list[str] = []
        copies: list[str] = []
        assigns = []
        eqs = []
        inval = []
        for f in fields:
            a = attr(f.name)
            ft = strip(f.type)
            if isinstance(ft, (T.Header, T.Struct, T.HeaderUnion)):
                self.cls(ft)
                sub = f"_m{len(inits)}"
                inits += self._fresh_lines(ft, sub, 1)
                inits.append(f"self.{a} = {sub}")
                copies += self._copy_lines(ft, f"self.{a}", f"n.{a}", len(copies))
                assigns.append(f"self.{a}.assign(o.{a})")
                eqs.append(f"self.{a}.eq(o.{a})")
                inval.append(f"self.{a}.invalidate_all()")
            elif isinstance(ft, T.Stack):
                c = self.cls(ft)
                inits.append(f"self.{a} = {c}()")
                copies.append(f"n.{a} = self.{a}.copy()")
                assigns.append(f"self.{a}.assign(o.{a})")
                eqs.append(f"self.{a}.eq(o.{a})")
                inval.append(f"self.{a}.invalidate_all()")
            else:
                inits.append(f"self.{a} = {self.default(ft)}")
                copies.append(f"n.{a} = self.{a}")
                assigns.append(f"self.{a} = o.{a}")
                eqs.append(f"self.{a} == o.{a}")
        slots = tuple(attr(f.name) for f in fields)
        src = [f"class {name}:", f"    __slots__ = {slots!r}",
               f"    FIELDS = {tuple(f.name for f in fields)!r}",
               "    def __init__(self):"] + ["        " + s for s in inits or ["pass"]]
        src += ["    def copy(self):", f"        n = _new({name})"]
        src += ["        " + s for s in copies] + ["        return n"]
        src += ["    def assign(self, o):"] + ["        " + s for s in assigns or ["pass"]]
        src += ["    def invalidate_all(self):"] + ["        " + s for s in inval or ["pass"]]
        src += ["    def eq(self, o):", f"        return {' and '.join(eqs) or 'True'}"]
        if union:
            valid = " or ".join(f"self.{attr(f.name)}.valid" for f in fields) or "False"
            src += ["    @property", "    def valid(self):", f"        return {valid}"]
        src.append("")
        self.source.extend(src)

    def _stack(self, name: str, elem: str, size: int) -> None:
        self.source.extend([
            f"class {name}:",
            "    __slots__ = ('elems', 'nxt')",
            f"    SIZE = {size}",
            "    def __init__(self):",
            f"        self.elems = [{elem}() for _ in range({size})]",
            "        self.nxt = 0",
            "    def copy(self):",
            f"        n = _new({name})",
            "        n.elems = [e.copy() for e in self.elems]",
            "        n.nxt = self.nxt",
            "        return n",
            "    def assign(self, o):",
            "        for a, b in zip(self.elems, o.elems):",
            "            a.assign(b)",
            "        self.nxt = o.nxt",
            "    def invalidate_all(self):",
            "        for a in self.elems:",
            "            a.invalidate_all()",
            "        self.nxt = 0",
            "    def eq(self, o):",
            "        return all(a.eq(b) for a, b in zip(self.elems, o.elems))",
            "",
        ])
