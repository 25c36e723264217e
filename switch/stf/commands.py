"""The typed STF commands and key values that ``parse_stf`` produces; every command
carries the line it came from."""

from __future__ import annotations

from dataclasses import dataclass, field

# ---------------------------------------------------------------------------- values


@dataclass(frozen=True)
class StfNumber:
    """A number as written. ``care`` has a 1 for every bit written with a real digit
    and 0 for ``*`` digits; ``written_bits`` counts the bits the digits stand for.
    Decimal numbers have ``radix`` 10, ``care`` None and ``written_bits`` 0: their
    width is not implied by how they are written."""

    text: str
    value: int
    radix: int
    care: int | None
    written_bits: int

    @property
    def has_wildcards(self) -> bool:
        return self.care is not None and self.care != (1 << self.written_bits) - 1


@dataclass(frozen=True)
class KeyNumber:
    number: StfNumber


@dataclass(frozen=True)
class KeyLpm:
    value: StfNumber
    prefix_len: int


@dataclass(frozen=True)
class KeyTernary:
    value: StfNumber
    mask: StfNumber


@dataclass(frozen=True)
class KeyRange:
    low: StfNumber
    high: StfNumber


@dataclass(frozen=True)
class KeyWildcard:
    """A lone ``*``: matches anything (ternary, lpm, optional and range keys)."""


KeyValue = KeyNumber | KeyLpm | KeyTernary | KeyRange | KeyWildcard


@dataclass(frozen=True)
class KeyMatch:
    name: str  # as written in the STF file
    value: KeyValue


@dataclass(frozen=True)
class ActionCall:
    name: str
    args: tuple[tuple[str, int], ...]  # (parameter name, value) in written order


# ---------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class Packet:
    line: int
    port: int
    data: bytes


@dataclass(frozen=True)
class Expect:
    """``pattern`` is upper-case hex nibbles with ``*`` wildcards; None (``expect PORT``
    without data) accepts any number of packets of any content on the port."""

    line: int
    port: int
    pattern: str | None
    exact_length: bool = False


@dataclass(frozen=True)
class TableAdd:
    line: int
    table: str
    priority: int | None
    keys: tuple[KeyMatch, ...]
    action: ActionCall
    handle: str | None = None


@dataclass(frozen=True)
class SetDefault:
    line: int
    table: str
    action: ActionCall


@dataclass(frozen=True)
class RemoveAll:
    line: int


@dataclass(frozen=True)
class McMgrpCreate:
    line: int
    group: int


@dataclass(frozen=True)
class McMgrpDestroy:
    line: int
    group: int


@dataclass(frozen=True)
class McNodeCreate:
    line: int
    rid: int
    ports: tuple[int, ...]


@dataclass(frozen=True)
class McNodeUpdate:
    line: int
    node: int
    ports: tuple[int, ...]


@dataclass(frozen=True)
class McNodeDestroy:
    line: int
    node: int


@dataclass(frozen=True)
class McNodeAssociate:
    line: int
    group: int
    node: int


@dataclass(frozen=True)
class McNodeDissociate:
    line: int
    group: int
    node: int


@dataclass(frozen=True)
class MirroringAdd:
    line: int
    session: int
    port: int


@dataclass(frozen=True)
class MirroringAddMc:
    line: int
    session: int
    group: int


@dataclass(frozen=True)
class MirroringDelete:
    line: int
    session: int


@dataclass(frozen=True)
class MirroringGet:
    line: int
    session: int


@dataclass(frozen=True)
class RegisterRead:
    """``expected`` None only prints the value (what BMv2's runner does)."""

    line: int
    register: str
    index: int
    expected: int | None = None


@dataclass(frozen=True)
class RegisterWrite:
    line: int
    register: str
    index: int
    value: int


@dataclass(frozen=True)
class RegisterReset:
    line: int
    register: str


@dataclass(frozen=True)
class CounterRead:
    line: int
    counter: str
    index: int


@dataclass(frozen=True)
class CounterWrite:
    line: int
    counter: str
    index: int
    packets: int
    bytes: int


@dataclass(frozen=True)
class CheckCounter:
    """``index`` is an int, or the handle name of an entry added with ``= HANDLE``
    (direct counters). ``kind`` None compares the packet count."""

    line: int
    counter: str
    index: int | str
    kind: str | None = None  # "packets", "bytes" or None
    op: str = "=="
    value: int = 0


@dataclass(frozen=True)
class MeterRates:
    """``meter_set_rates`` (``index`` set), ``meter_array_set_rates`` (``index``
    None): (rate, burst) pairs, committed then peak for two-rate meters."""

    line: int
    meter: str
    index: int | None
    rates: tuple[tuple[float, int], ...]


@dataclass(frozen=True)
class MeterGetRates:
    line: int
    meter: str
    index: int


@dataclass(frozen=True)
class Wait:
    line: int


@dataclass(frozen=True)
class NoPacket:
    line: int


Command = (
    Packet | Expect | TableAdd | SetDefault | RemoveAll | McMgrpCreate | McMgrpDestroy
    | McNodeCreate | McNodeUpdate | McNodeDestroy | McNodeAssociate | McNodeDissociate
    | MirroringAdd | MirroringAddMc | MirroringDelete | MirroringGet | RegisterRead
    | RegisterWrite | RegisterReset | CounterRead | CounterWrite | CheckCounter | MeterRates
    | MeterGetRates | Wait | NoPacket
)


@dataclass
class StfFile:
    filename: str
    commands: list[Command] = field(default_factory=list)
