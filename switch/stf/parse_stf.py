"""Parse STF files, the packet test format of p4c's BMv2 tests, into typed commands.

One command per line; ``#`` starts a comment; command words are case-insensitive. The
syntax is that of p4c's STF grammar (``tools/stf``) plus the direct commands its BMv2
runner passes to ``simple_switch_CLI``:

    packet PORT HEX...                    expect PORT [HEX-OR-*...][$]
    add TABLE [PRIO] KEY:VALUE... ACTION(ARG:VALUE, ...) [= HANDLE]
    setdefault TABLE ACTION(ARG:VALUE, ...)
    mc_mgrp_create GID                    mc_node_create RID PORT...
    mc_node_associate GID NODE            mc_node_update NODE PORT...
    mirroring_add SESSION PORT            mirroring_add_mc SESSION GID
    register_read REG INDEX [VALUE]       register_write REG INDEX VALUE
    register_reset REG                    counter_read CTR INDEX
    counter_write CTR INDEX PACKETS BYTES check_counter CTR(INDEX) [packets|bytes OP N]
    meter_set_rates METER INDEX R:B...    meter_array_set_rates METER R:B...
    wait                                  remove all

The values of ``register_read`` and ``register_write`` may be negative (``-1``), for
registers of ``int<W>``, which both targets read and write as the program sees them.

Key values in ``add``: a number (decimal, ``0x``, ``0b``, ``0o``; hex, binary and
octal digits may be ``*``, don't care), ``VALUE/LEN``, ``VALUE&&&MASK`` or ``LO->HI``.
How a value becomes an exact, lpm, ternary, range or optional match depends on the
table's key, so that conversion happens in the runner. The command types are in
``switch.stf.commands``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from switch.stf.commands import (
    ActionCall,
    CheckCounter,
    Command,
    CounterRead,
    CounterWrite,
    Expect,
    KeyLpm,
    KeyMatch,
    KeyNumber,
    KeyRange,
    KeyTernary,
    KeyValue,
    KeyWildcard,
    McMgrpCreate,
    McMgrpDestroy,
    McNodeAssociate,
    McNodeCreate,
    McNodeDestroy,
    McNodeDissociate,
    McNodeUpdate,
    MeterGetRates,
    MeterRates,
    MirroringAdd,
    MirroringAddMc,
    MirroringDelete,
    MirroringGet,
    NoPacket,
    Packet,
    RegisterRead,
    RegisterReset,
    RegisterWrite,
    RemoveAll,
    SetDefault,
    StfFile,
    StfNumber,
    TableAdd,
    Wait,
)

__all__ = ["StfDiagnostic", "StfError", "parse_line", "parse_number", "parse_key_value",
           "parse_stf", "parse_stf_file"]

# ---------------------------------------------------------------------------- errors


@dataclass(frozen=True)
class StfDiagnostic:
    file: str
    line: int
    message: str

    def format(self) -> str:
        where = f"{self.file}({self.line})" if self.line else self.file
        return f"{where}: error: {self.message}"


class StfError(Exception):
    """Syntax errors of an STF file; ``str()`` has one ``file(line): error: ...`` per
    error."""

    def __init__(self, diagnostics: list[StfDiagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))


class _LineError(Exception):
    """A syntax error on the line being parsed."""


# ---------------------------------------------------------------------------- numbers

_NAME = r"[A-Za-z_$][\w$]*(?:\[\d+\])?(?:\.[A-Za-z_$][\w$]*(?:\[\d+\])?)*"
_NAME_RE = re.compile(_NAME + r"\Z")
_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01"}
_BITS = {16: 4, 8: 3, 2: 1}
_PREFIX = {"0x": 16, "0o": 8, "0b": 2}


def parse_number(text: str, *, wildcards: bool = False) -> StfNumber:
    """Parse a decimal, ``0x``, ``0o`` or ``0b`` number; with ``wildcards``, non-decimal
    digits may be ``*``. Raises ValueError with a message naming the text."""
    t = text.strip()
    radix = _PREFIX.get(t[:2].lower())
    if radix is None:
        if not t.isdigit():
            raise ValueError(f"invalid number '{text}'")
        return StfNumber(t, int(t), 10, None, 0)
    digits = t[2:].replace("_", "")
    if not digits:
        raise ValueError(f"invalid number '{text}'")
    bits = _BITS[radix]
    value = care = 0
    for ch in digits:
        value <<= bits
        care <<= bits
        if ch == "*":
            if not wildcards:
                raise ValueError(f"'*' is not allowed in '{text}'")
        elif ch in _DIGITS[radix]:
            value |= int(ch, radix)
            care |= (1 << bits) - 1
        else:
            raise ValueError(f"invalid digit '{ch}' in '{text}'")
    return StfNumber(t, value, radix, care, bits * len(digits))


def parse_int(text: str) -> int:
    return parse_number(text).value


def parse_key_value(text: str) -> KeyValue:
    """``VALUE``, ``VALUE/LEN``, ``VALUE&&&MASK``, ``LO->HI`` or ``*``."""
    t = text.strip()
    if t == "*":
        return KeyWildcard()
    if "&&&" in t:
        value, _, mask = t.partition("&&&")
        return KeyTernary(parse_number(value, wildcards=True), parse_number(mask))
    if "->" in t:
        low, _, high = t.partition("->")
        return KeyRange(parse_number(low), parse_number(high))
    if "/" in t:
        value, _, length = t.partition("/")
        if not length.strip().isdigit():
            raise ValueError(f"invalid prefix length in '{text}'")
        return KeyLpm(parse_number(value, wildcards=True), int(length))
    return KeyNumber(parse_number(t, wildcards=True))


# ---------------------------------------------------------------------------- packet data


def parse_packet_data(text: str) -> bytes:
    """The packet's bytes, converted as p4c's runner converts them: two hex digits at a
    time, so a trailing lone digit is a byte of its own (``5`` is 0x05); no digits at
    all is an empty packet."""
    digits = "".join(text.split())
    bad = next((c for c in digits if c not in _DIGITS[16]), None)
    if bad is not None:
        raise _LineError(f"packet: invalid hex digit '{bad}'")
    if len(digits) % 2:
        return bytes.fromhex(digits[:-1]) + bytes([int(digits[-1], 16)])
    return bytes.fromhex(digits)


def parse_expect_data(text: str) -> tuple[str | None, bool]:
    """The expected nibbles (upper case, ``*`` wildcards) and whether a trailing ``$``
    demands the packet end there."""
    digits = "".join(text.split())
    exact = digits.endswith("$")
    if exact:
        digits = digits[:-1]
    if not digits:
        if exact:
            raise _LineError("expect: '$' without packet data")
        return None, False
    bad = next((c for c in digits if c not in _DIGITS[16] and c != "*"), None)
    if bad is not None:
        raise _LineError(f"expect: invalid character '{bad}' in packet data")
    return digits.upper(), exact


# ---------------------------------------------------------------------------- commands

_KEY_RE = re.compile(r"\s*(" + _NAME + r"(?:\(\))?)\s*:\s*([^\s(),:]+)")
_ACTION_RE = re.compile(r"\s*(" + _NAME + r")\s*\(")
_HANDLE_RE = re.compile(r"\s*=\s*([A-Za-z_$][\w$]*)\s*\Z")
_CHECK_COUNTER_RE = re.compile(
    r"(" + _NAME + r")\s*\(\s*([^\s()]+)\s*\)"
    r"(?:\s+(packets|bytes)\s*(==|!=|<=|>=|<|>)\s*(\S+))?\s*\Z",
    re.IGNORECASE,
)


def _words(rest: str, command: str, count: int, names: tuple[str, ...]) -> list[str]:
    words = rest.split()
    if len(words) != count:
        usage = " ".join(names)
        raise _LineError(f"{command}: expected {usage}")
    return words


def _int(text: str, what: str) -> int:
    try:
        return parse_int(text)
    except ValueError as e:
        raise _LineError(f"{what}: {e}") from None


def _signed_int(text: str, what: str) -> int:
    """A number that may be negative: ``-`` before a decimal, hex, octal or binary one."""
    if text.startswith("-"):
        return -_int(text[1:], what)
    return _int(text, what)


def _name(text: str, what: str) -> str:
    if not _NAME_RE.match(text):
        raise _LineError(f"{what}: invalid name '{text}'")
    return text


def _port(text: str, command: str) -> int:
    if not text.isdigit():
        raise _LineError(f"{command}: invalid port '{text}'")
    return int(text)


def _parse_args(text: str, action: str) -> tuple[tuple[str, int], ...]:
    args: list[tuple[str, int]] = []
    if not text.strip():
        return ()
    for item in text.split(","):
        name, colon, value = item.partition(":")
        name = name.strip()
        if not colon or not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
            raise _LineError(f"action {action}: expected NAME:VALUE, got '{item.strip()}'")
        args.append((name, _int(value, f"action {action} argument {name}")))
    return tuple(args)


def _parse_action(text: str, pos: int, command: str) -> tuple[ActionCall, int]:
    m = _ACTION_RE.match(text, pos)
    if m is None:
        found = text[pos:].strip() or "end of line"
        raise _LineError(f"{command}: expected KEY:VALUE or ACTION(...), found '{found}'")
    close = text.find(")", m.end())
    if close < 0:
        raise _LineError(f"{command}: missing ')' after the arguments of {m.group(1)}")
    return ActionCall(m.group(1), _parse_args(text[m.end():close], m.group(1))), close + 1


def parse_add(rest: str, line: int) -> TableAdd:
    words = rest.split(None, 1)
    if not words:
        raise _LineError("add: expected TABLE [PRIORITY] KEY:VALUE... ACTION(...)")
    table = _name(words[0], "add")
    text = words[1] if len(words) > 1 else ""
    priority: int | None = None
    first = text.split(None, 1)
    if first and first[0].isdigit():
        priority = int(first[0])
        text = first[1] if len(first) > 1 else ""
    keys: list[KeyMatch] = []
    pos = 0
    while True:
        m = _KEY_RE.match(text, pos)
        if m is None:
            break
        try:
            keys.append(KeyMatch(m.group(1), parse_key_value(m.group(2))))
        except ValueError as e:
            raise _LineError(f"add: key {m.group(1)}: {e}") from None
        pos = m.end()
    action, pos = _parse_action(text, pos, "add")
    tail = text[pos:]
    handle: str | None = None
    if tail.strip():
        hm = _HANDLE_RE.match(tail)
        if hm is None:
            raise _LineError(f"add: unexpected text after the action: '{tail.strip()}'")
        handle = hm.group(1).lstrip("$")
    return TableAdd(line, table, priority, tuple(keys), action, handle)


def parse_setdefault(rest: str, line: int) -> SetDefault:
    words = rest.split(None, 1)
    if len(words) < 2:
        raise _LineError("setdefault: expected TABLE ACTION(...)")
    table = _name(words[0], "setdefault")
    action, pos = _parse_action(words[1], 0, "setdefault")
    if words[1][pos:].strip():
        raise _LineError(f"setdefault: unexpected text after the action: "
                         f"'{words[1][pos:].strip()}'")
    return SetDefault(line, table, action)


def _parse_packet(rest: str, line: int) -> Packet:
    words = rest.split(None, 1)
    if not words:
        raise _LineError("packet: expected PORT HEX")
    port = _port(words[0], "packet")
    return Packet(line, port, parse_packet_data(words[1] if len(words) > 1 else ""))


def _parse_expect(rest: str, line: int) -> Expect:
    words = rest.split(None, 1)
    if not words:
        raise _LineError("expect: expected PORT [HEX]")
    port = _port(words[0], "expect")
    pattern, exact = parse_expect_data(words[1] if len(words) > 1 else "")
    return Expect(line, port, pattern, exact)


def _parse_check_counter(rest: str, line: int) -> CheckCounter:
    m = _CHECK_COUNTER_RE.match(rest.strip())
    if m is None:
        raise _LineError("check_counter: expected COUNTER(INDEX) [packets|bytes OP VALUE]")
    name, index_text, kind, op, value = m.groups()
    index: int | str
    if re.fullmatch(r"\$?[A-Za-z_][\w$]*", index_text):
        index = index_text.lstrip("$")
    else:
        index = _int(index_text, "check_counter index")
    if kind is None:
        return CheckCounter(line, name, index)
    return CheckCounter(line, name, index, kind.lower(), op, _int(value, "check_counter"))


def _parse_rates(words: list[str], command: str) -> tuple[tuple[float, int], ...]:
    if not words:
        raise _LineError(f"{command}: expected RATE:BURST...")
    rates: list[tuple[float, int]] = []
    for word in words:
        rate, colon, burst = word.partition(":")
        try:
            rates.append((float(rate), int(burst)))
        except ValueError:
            raise _LineError(f"{command}: expected RATE:BURST, got '{word}'") from None
        if not colon:
            raise _LineError(f"{command}: expected RATE:BURST, got '{word}'")
    return tuple(rates)


def _parse_mc_ports(words: list[str], command: str) -> tuple[int, ...]:
    return tuple(_port(w, command) for w in words)


def _parse_simple(command: str, rest: str, line: int) -> Command:
    """The commands whose operands are plain words."""
    w = rest.split()
    c = command
    if c == "wait" or c == "no_packet":
        if w:
            raise _LineError(f"{c}: unexpected text '{rest.strip()}'")
        return Wait(line) if c == "wait" else NoPacket(line)
    if c == "remove":
        if [x.lower() for x in w] != ["all"]:
            raise _LineError("remove: only 'remove all' is supported")
        return RemoveAll(line)
    if c == "mc_mgrp_create":
        (gid,) = _words(rest, c, 1, ("GROUP",))
        return McMgrpCreate(line, _int(gid, c))
    if c == "mc_mgrp_destroy":
        (gid,) = _words(rest, c, 1, ("GROUP",))
        return McMgrpDestroy(line, _int(gid, c))
    if c in ("mc_node_create", "mc_node_update"):
        if len(w) < 1:
            raise _LineError(f"{c}: expected {'RID' if c == 'mc_node_create' else 'NODE'} PORT...")
        if c == "mc_node_create":
            return McNodeCreate(line, _int(w[0], c), _parse_mc_ports(w[1:], c))
        return McNodeUpdate(line, _int(w[0], c), _parse_mc_ports(w[1:], c))
    if c == "mc_node_destroy":
        (node,) = _words(rest, c, 1, ("NODE",))
        return McNodeDestroy(line, _int(node, c))
    if c in ("mc_node_associate", "mc_node_dissociate"):
        gid, node = _words(rest, c, 2, ("GROUP", "NODE"))
        cls = McNodeAssociate if c == "mc_node_associate" else McNodeDissociate
        return cls(line, _int(gid, c), _int(node, c))
    if c == "mirroring_add":
        session, port = _words(rest, c, 2, ("SESSION", "PORT"))
        return MirroringAdd(line, _int(session, c), _int(port, c))
    if c == "mirroring_add_mc":
        session, gid = _words(rest, c, 2, ("SESSION", "GROUP"))
        return MirroringAddMc(line, _int(session, c), _int(gid, c))
    if c in ("mirroring_delete", "mirroring_get"):
        (session,) = _words(rest, c, 1, ("SESSION",))
        cls2 = MirroringDelete if c == "mirroring_delete" else MirroringGet
        return cls2(line, _int(session, c))
    if c == "register_read":
        if len(w) not in (2, 3):
            raise _LineError(f"{c}: expected REGISTER INDEX [VALUE]")
        expected = _signed_int(w[2], c) if len(w) == 3 else None
        return RegisterRead(line, _name(w[0], c), _int(w[1], c), expected)
    if c == "register_write":
        reg, index, value = _words(rest, c, 3, ("REGISTER", "INDEX", "VALUE"))
        return RegisterWrite(line, _name(reg, c), _int(index, c), _signed_int(value, c))
    if c == "register_reset":
        (reg,) = _words(rest, c, 1, ("REGISTER",))
        return RegisterReset(line, _name(reg, c))
    if c == "counter_read":
        ctr, index = _words(rest, c, 2, ("COUNTER", "INDEX"))
        return CounterRead(line, _name(ctr, c), _int(index, c))
    if c == "counter_write":
        ctr, index, pkts, nbytes = _words(rest, c, 4, ("COUNTER", "INDEX", "PACKETS", "BYTES"))
        return CounterWrite(line, _name(ctr, c), _int(index, c), _int(pkts, c), _int(nbytes, c))
    if c == "meter_get_rates":
        meter, index = _words(rest, c, 2, ("METER", "INDEX"))
        return MeterGetRates(line, _name(meter, c), _int(index, c))
    if c == "meter_set_rates":
        if len(w) < 3:
            raise _LineError(f"{c}: expected METER INDEX RATE:BURST...")
        return MeterRates(line, _name(w[0], c), _int(w[1], c), _parse_rates(w[2:], c))
    if c == "meter_array_set_rates":
        if len(w) < 2:
            raise _LineError(f"{c}: expected METER RATE:BURST...")
        return MeterRates(line, _name(w[0], c), None, _parse_rates(w[1:], c))
    raise _LineError(f"unknown command '{command}'")


def parse_line(text: str, line: int) -> Command | None:
    """Parse one line (comments already removed or not); None for a blank line.
    Raises _LineError on a syntax error."""
    text = text.split("#", 1)[0].strip()
    if not text:
        return None
    parts = text.split(None, 1)
    command = parts[0].lower()
    rest = parts[1] if len(parts) > 1 else ""
    if command == "packet":
        return _parse_packet(rest, line)
    if command == "expect":
        return _parse_expect(rest, line)
    if command == "add":
        return parse_add(rest, line)
    if command == "setdefault":
        return parse_setdefault(rest, line)
    if command == "check_counter":
        return _parse_check_counter(rest, line)
    return _parse_simple(command, rest, line)


def parse_stf(text: str, filename: str = "<stf>") -> StfFile:
    """Parse STF text; raises StfError listing every syntax error with its line."""
    result = StfFile(filename)
    errors: list[StfDiagnostic] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            command = parse_line(raw, number)
        except _LineError as e:
            errors.append(StfDiagnostic(filename, number, str(e)))
            continue
        if command is not None:
            result.commands.append(command)
    if errors:
        raise StfError(errors)
    return result


def parse_stf_file(path: str | Path) -> StfFile:
    """Read and parse an STF file; an unreadable file is an StfError too."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise StfError([StfDiagnostic(str(path), 0, f"cannot read: {reason}")]) from None
    return parse_stf(text, str(path))
