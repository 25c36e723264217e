"""The checked program: the IR handed to the engine, the P4Info generator and the runtime.

The checker builds a ``Program`` after name resolution, type checking and constant
folding. It instantiates the ``main`` package recursively, so that every table, action,
extern instance and value set appears once per instance with the fully-qualified name
p4c gives it in P4Info (``MyIngress.ipv4_lpm``, ``MyIngress.counter1``, ``NoAction``,
``MyIngress.sub.t`` for a sub-control instance ``sub``). ``@name`` annotations are
honoured (a leading "." makes a name global). P4Info ids are assigned by
``switch.frontend.p4info.assign_ids`` and stored in the ``id`` fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from switch.frontend import ast as A
from switch.frontend import types as T


@dataclass(eq=False)
class BlockInstance:
    """One instance of a parser or control, with its constructor arguments bound."""

    fqn: str  # "MyIngress", or "MyIngress.sub" for a nested instance
    decl: A.ParserDecl | A.ControlDecl
    ctor_args: dict[str, object] = field(default_factory=dict)  # param name -> folded value
    children: dict[str, BlockInstance] = field(default_factory=dict)  # local instance name ->


@dataclass(eq=False)
class KeyInfo:
    name: str  # P4Info match field name: the key expression's source text or its @name
    match_kind: str  # exact, lpm, ternary, range, optional, selector
    width: int  # bits (bool keys are 1 bit)
    element: A.KeyElement


@dataclass(eq=False)
class TableInstance:
    fqn: str
    decl: A.TableDecl
    block: BlockInstance
    keys: list[KeyInfo]
    actions: list[str]  # fqns of the actions the table may run, in declaration order
    default_action: str  # fqn
    default_args: list[int]
    default_is_const: bool
    size: int  # p4c's default is 1024 when absent
    implementation: str | None = None  # fqn of an action_profile/selector instance
    direct_counter: str | None = None  # fqn of the direct_counter in `counters = ...`
    direct_meter: str | None = None  # fqn of the direct_meter in `meters = ...`
    id: int = 0


@dataclass(eq=False)
class ActionInstance:
    fqn: str
    decl: A.ActionDecl
    block: BlockInstance | None  # None for top-level actions such as NoAction
    params: list[tuple[str, int]]  # control-plane parameters: (name, width in bits)
    id: int = 0


@dataclass(eq=False)
class ExternInstance:
    """An instance of an extern object: register, counter, direct_counter, meter,
    direct_meter, action_profile, action_selector, Checksum16, ..."""

    fqn: str
    decl: A.Instantiation
    block: BlockInstance | None  # None for top-level instances
    extern: str  # the extern type's name, e.g. "register"
    type: T.Extern
    args: list[object]  # folded constructor arguments (ints, enum member names, fqns)
    id: int = 0


@dataclass(eq=False)
class ValueSetInstance:
    fqn: str
    decl: A.ValueSetDecl
    block: BlockInstance
    element: T.Type
    size: int
    id: int = 0


@dataclass(eq=False)
class DigestInfo:
    """One ``digest<T>(receiver, data)`` call site type: P4Info lists one digest per T."""

    name: str  # the struct type's name
    type: T.Type
    id: int = 0


@dataclass(eq=False)
class ControllerHeader:
    """A header annotated ``@controller_header("packet_in"|"packet_out")``."""

    kind: str  # "packet_in" or "packet_out"
    type: T.Header
    id: int = 0


@dataclass(eq=False)
class Program:
    source: object  # switch.frontend.preprocess.Preprocessed
    filename: str
    decls: list[A.Declaration]  # every top-level declaration, include files first
    arch: str  # "v1model"
    # Architecture block parameter -> instance: for v1model the keys are the V1Switch
    # parameter names p, vr, ig, eg, ck, dep.
    pipeline: dict[str, BlockInstance]
    tables: dict[str, TableInstance] = field(default_factory=dict)
    actions: dict[str, ActionInstance] = field(default_factory=dict)
    externs: dict[str, ExternInstance] = field(default_factory=dict)
    value_sets: dict[str, ValueSetInstance] = field(default_factory=dict)
    digests: dict[str, DigestInfo] = field(default_factory=dict)
    controller_headers: dict[str, ControllerHeader] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)  # error member -> code (NoError=0..)
    # The table/action/extern instance owned by each declaration *in a given block
    # instance*: (id(decl), block fqn) -> fqn. The engine uses it to bind names.
    instance_names: dict[tuple[int, str], str] = field(default_factory=dict)
    # tables, extern instances and value sets that another object of the program shares
    # a control-plane name with (each is kept out of the dicts above)
    shadowed: list[TableInstance | ExternInstance | ValueSetInstance] = field(
        default_factory=list)
    warnings: list[object] = field(default_factory=list)  # Diagnostic warnings of the compile
