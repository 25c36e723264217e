"""The P4_16 syntax tree, shared by the parser, the checking passes and the engine.

The parser builds these nodes; the passes then fill in the fields marked *(checked)*
in place: every expression gets its ``type``, every name its ``decl``, every call its
``target``, and untyped integer constants get concrete types. After checking, the tree
is the IR the engine compiles (see ``switch.frontend.program.Program``).

Positions are (line, column) in the preprocessed text; ``Program.source`` maps them back
to (file, line) for diagnostics and traces.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from switch.frontend import types as T


@dataclass(frozen=True, slots=True)
class Pos:
    line: int  # 1-based line in the preprocessed text
    col: int  # 1-based column


NOWHERE = Pos(0, 0)


@dataclass(eq=False, slots=True)
class Node:
    pos: Pos


@dataclass(eq=False, slots=True)
class Annotation(Node):
    """``@name``, ``@name(expr, ...)`` or ``@name[k=v, ...]``.

    ``body`` keeps the raw expressions (for ``@name("x")`` the string literal) and
    ``kv`` the key/value form.
    """

    name: str
    body: list[Expr] = field(default_factory=list)
    kv: dict[str, Expr] = field(default_factory=dict)
    raw: str = ""  # the unparsed text between the parentheses, for unknown annotations
    structured: bool = False  # written with brackets, ``@name[...]``


# --------------------------------------------------------------------------- types


@dataclass(eq=False, slots=True)
class TypeRef(Node):
    """A type as written in the source; the checker resolves it into ``resolved``."""

    resolved: T.Type | None = field(default=None, kw_only=True)  # (checked)


@dataclass(eq=False, slots=True)
class BitTypeRef(TypeRef):
    width: Expr | None  # None for plain ``bit``  (= bit<1>)
    signed: bool = False  # int<W>


@dataclass(eq=False, slots=True)
class VarbitTypeRef(TypeRef):
    width: Expr


@dataclass(eq=False, slots=True)
class BoolTypeRef(TypeRef):
    pass


@dataclass(eq=False, slots=True)
class IntTypeRef(TypeRef):
    """The arbitrary-precision ``int`` type."""


@dataclass(eq=False, slots=True)
class ErrorTypeRef(TypeRef):
    pass


@dataclass(eq=False, slots=True)
class StringTypeRef(TypeRef):
    pass


@dataclass(eq=False, slots=True)
class VoidTypeRef(TypeRef):
    pass


@dataclass(eq=False, slots=True)
class DontCareTypeRef(TypeRef):
    """``_`` as a type argument."""


@dataclass(eq=False, slots=True)
class NamedTypeRef(TypeRef):
    name: str  # may be dotted for ``.Name`` (top-level) lookups: leading "." kept
    args: list[TypeRef] = field(default_factory=list)  # type arguments: ``register<bit<32>>``


@dataclass(eq=False, slots=True)
class StackTypeRef(TypeRef):
    element: TypeRef
    size: Expr


@dataclass(eq=False, slots=True)
class TupleTypeRef(TypeRef):
    elements: list[TypeRef]


# ---------------------------------------------------------------------- expressions


@dataclass(eq=False, slots=True)
class Expr(Node):
    type: T.Type | None = field(default=None, kw_only=True)  # (checked)


@dataclass(eq=False, slots=True)
class IntLit(Expr):
    """An integer literal. ``width``/``signed`` from ``8w5``/``8s5``; None when untyped.

    After checking, every IntLit that reaches the engine has a concrete ``type``
    (``T.Bits``) and ``value`` already reduced into its range.
    """

    value: int
    width: int | None = None
    signed: bool = False
    text: str = ""


@dataclass(eq=False, slots=True)
class BoolLit(Expr):
    value: bool


@dataclass(eq=False, slots=True)
class StringLit(Expr):
    value: str


@dataclass(eq=False, slots=True)
class Name(Expr):
    """A reference to a declaration by name; ``decl`` is set by name resolution.

    ``decl`` is one of: Param, VarDecl, ConstDecl, Instantiation, ActionDecl,
    FunctionDecl, TableDecl, ParserDecl, ControlDecl, ExternFunctionDecl,
    ValueSetDecl, ParserState, or a type declaration when used as ``Type.member``.
    """

    name: str
    top_level: bool = False  # written as ``.name``
    decl: object | None = field(default=None, kw_only=True)  # (checked)


@dataclass(eq=False, slots=True)
class Member(Expr):
    """``expr.name``: a field, a header/stack method, an enum member or an error.

    For ``error.Foo``, ``MyEnum.A`` and ``MySerEnum.A`` the checker replaces the node by
    an ``EnumValue`` (see ``Checked``-time rewriting in the checker).
    """

    expr: Expr
    name: str


@dataclass(eq=False, slots=True)
class EnumValue(Expr):
    """(checked) A resolved enum/error/match_kind member. ``value`` is the integer the
    engine uses: the declared value for a serializable enum, otherwise the member's index
    (errors use the global error numbering in ``Program.errors``)."""

    enum: str
    member: str
    value: int


@dataclass(eq=False, slots=True)
class Index(Expr):
    """``stack[i]``."""

    expr: Expr
    index: Expr


@dataclass(eq=False, slots=True)
class Slice(Expr):
    """``expr[hi:lo]``; after checking ``hi``/``lo`` are IntLit compile-time constants."""

    expr: Expr
    hi: Expr
    lo: Expr


@dataclass(eq=False, slots=True)
class Unary(Expr):
    op: str  # "!", "~", "-", "+"
    expr: Expr


@dataclass(eq=False, slots=True)
class Binary(Expr):
    """Binary operators: ``* / % + - |+| |-| << >> <= >= < > != == & ^ | ++ && ||``
    and ``&&&`` (mask) and ``..`` (range), the latter two only in select/keyset position.
    """

    op: str
    left: Expr
    right: Expr


@dataclass(eq=False, slots=True)
class Mux(Expr):
    """``cond ? then : else``"""

    cond: Expr
    then: Expr
    other: Expr


@dataclass(eq=False, slots=True)
class Cast(Expr):
    to: TypeRef
    expr: Expr


@dataclass(eq=False, slots=True)
class Argument(Node):
    """A call argument; ``name`` for named arguments (``f(x = 1)``), ``value`` None for
    ``_`` (don't-care) arguments."""

    value: Expr | None
    name: str | None = None


@dataclass(eq=False, slots=True)
class Call(Expr):
    """A call ``callee<type_args>(args)``.

    (checked): ``target`` says what is called (see ``CallTarget`` below) and
    ``resolved_args`` holds one entry per parameter of the callee in declaration order,
    with named arguments reordered and optional/default parameters filled in
    (``None`` for an absent optional parameter or a ``_`` argument).
    """

    callee: Expr
    type_args: list[TypeRef]
    args: list[Argument]
    target: CallTarget | None = field(default=None, kw_only=True)  # (checked)
    resolved_args: list[Expr | None] = field(default_factory=list, kw_only=True)  # (checked)


@dataclass(eq=False, slots=True)
class ListExpr(Expr):
    """``{a, b, c}``: a tuple/list expression or a header/struct initialiser by position.

    After checking, when the context type is a struct/header ``type`` is that type."""

    elements: list[Expr]


@dataclass(eq=False, slots=True)
class StructExpr(Expr):
    """``{f1 = a, f2 = b}`` (named initialiser); ``type_name`` for ``(T){...}`` forms is
    not supported separately: casts wrap it."""

    fields: list[tuple[str, Expr]]
    rest: bool = field(default=False, kw_only=True)  # ``{f = a, ...}``: the rest default


@dataclass(eq=False, slots=True)
class Dots(Expr):
    """``...``: the default value of the type the context expects (bare, or as the last
    element of a list initializer, where it stands for all the elements not given)."""


@dataclass(eq=False, slots=True)
class InvalidHeader(Expr):
    """``{#}``: an invalid header (or header union) of the type the context expects."""


@dataclass(eq=False, slots=True)
class DefaultExpr(Expr):
    """``default`` or ``_`` in a keyset or as a table key value."""


@dataclass(eq=False, slots=True)
class TypeExpr(Expr):
    """A type used in expression position: ``Type.member`` prefixes, ``lookahead<T>``,
    ``sizeInBits(T)``... ``ref`` is the written type."""

    ref: TypeRef


@dataclass(eq=False, slots=True)
class DontCare(Expr):
    """``_`` as an out argument."""


# --- what a call calls (filled by the checker) -------------------------------------


@dataclass(eq=False, slots=True)
class CallTarget:
    """Base of the checker's classification of a call."""


@dataclass(eq=False, slots=True)
class CallAction(CallTarget):
    action: ActionDecl


@dataclass(eq=False, slots=True)
class CallFunction(CallTarget):
    function: FunctionDecl


@dataclass(eq=False, slots=True)
class CallTableApply(CallTarget):
    """``t.apply()``; the Call's type is ``T.TableApplyResult`` so that ``.hit``,
    ``.miss`` and ``.action_run`` can be read from it."""

    table: TableDecl


@dataclass(eq=False, slots=True)
class CallSubApply(CallTarget):
    """Applying a parser or control instance (``sub.apply(...)`` or a parser state
    invoking a sub-parser); a constructor parameter of a parser or control type stands
    for the instance each instantiation passes."""

    instance: Instantiation | Param


@dataclass(eq=False, slots=True)
class CallBuiltin(CallTarget):
    """A built-in method on a value: header ``isValid/setValid/setInvalid``, union
    ``isValid``, stack ``push_front/pop_front``, ``minSizeInBits`` etc.
    ``receiver`` is the expression the method is called on."""

    method: str
    receiver: Expr


@dataclass(eq=False, slots=True)
class CallExternMethod(CallTarget):
    """A method of an extern object: ``packet_in.extract``, ``register.read``,
    ``counter.count``, ``meter.execute_meter``... ``receiver`` evaluates to the extern
    instance (a Name whose decl is an Instantiation, or a Param of extern type such as
    ``packet_in pkt``). ``extern`` is the extern's declared name (``register``),
    ``overload`` the chosen method declaration (arity overloads resolved)."""

    extern: str
    method: str
    receiver: Expr
    overload: MethodDecl


@dataclass(eq=False, slots=True)
class CallExternFunction(CallTarget):
    """A free extern function: ``mark_to_drop``, ``hash``, ``clone3``, ``verify``..."""

    function: ExternFunctionDecl


CallTarget_ = (
    CallAction
    | CallFunction
    | CallTableApply
    | CallSubApply
    | CallBuiltin
    | CallExternMethod
    | CallExternFunction
)


# ------------------------------------------------------------------------ statements


@dataclass(eq=False, slots=True)
class Stmt(Node):
    pass


@dataclass(eq=False, slots=True)
class Assign(Stmt):
    """``target = value``. A compound assignment ``target op= e`` arrives as ``target =
    target op e`` with ``op`` set (``+``, ``<<``, ``|+|``...): it is checked as that
    assignment, and the engine evaluates the l-value (its stack indices) only once."""

    target: Expr  # an lvalue: Name, Member, Index, Slice
    value: Expr
    op: str = ""


@dataclass(eq=False, slots=True)
class CallStmt(Stmt):
    call: Call


@dataclass(eq=False, slots=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None


@dataclass(eq=False, slots=True)
class Block(Stmt):
    stmts: list[Stmt]
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class SwitchCase(Node):
    """One label with its body. ``label`` is an Expr (a constant, or a Name of an
    action for ``switch (t.apply().action_run)``) or DefaultExpr. ``body`` None means
    fall through to the next case's body."""

    label: Expr
    body: Block | None


@dataclass(eq=False, slots=True)
class Switch(Stmt):
    expr: Expr
    cases: list[SwitchCase]


@dataclass(eq=False, slots=True)
class For(Stmt):
    """``for (init; cond; updates) body``. ``init`` holds DeclStmt (of a VarDecl),
    Assign and CallStmt; ``updates`` Assign and CallStmt. ``continue`` runs the
    updates before the condition is tested again."""

    init: list[Stmt]
    cond: Expr
    updates: list[Stmt]
    body: Stmt
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class ForIn(Stmt):
    """``for (T x in collection) body``: ``collection`` is a range (a Binary with op
    ``..``, both bounds included), a header stack or a list expression; it is
    evaluated once, before the first iteration."""

    var: VarDecl
    collection: Expr
    body: Stmt
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class Break(Stmt):
    pass


@dataclass(eq=False, slots=True)
class Continue(Stmt):
    pass


@dataclass(eq=False, slots=True)
class Exit(Stmt):
    pass


@dataclass(eq=False, slots=True)
class Return(Stmt):
    value: Expr | None


@dataclass(eq=False, slots=True)
class Empty(Stmt):
    pass


@dataclass(eq=False, slots=True)
class DeclStmt(Stmt):
    """A local declaration inside a block: VarDecl, ConstDecl or Instantiation."""

    decl: Declaration


# ---------------------------------------------------------------------- declarations


@dataclass(eq=False, slots=True)
class Declaration(Node):
    name: str
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)


@dataclass(eq=False, slots=True)
class Param(Declaration):
    direction: str  # "in", "out", "inout" or "" (directionless)
    type_ref: TypeRef
    default: Expr | None = None
    optional: bool = False  # @optional


@dataclass(eq=False, slots=True)
class Field(Node):
    name: str
    type_ref: TypeRef
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class HeaderDecl(Declaration):
    fields: list[Field]
    type_params: list[str] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class HeaderUnionDecl(Declaration):
    fields: list[Field]
    type_params: list[str] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class StructDecl(Declaration):
    fields: list[Field]
    type_params: list[str] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class EnumDecl(Declaration):
    """``enum E { A, B }`` or, with ``underlying``, ``enum bit<8> E { A = 1, ... }``."""

    members: list[tuple[str, Expr | None]]
    underlying: TypeRef | None = None


@dataclass(eq=False, slots=True)
class ErrorDecl(Declaration):
    """``error { A, B }``; all error declarations merge into one type. name=="error"."""

    members: list[str]


@dataclass(eq=False, slots=True)
class MatchKindDecl(Declaration):
    members: list[str]


@dataclass(eq=False, slots=True)
class TypedefDecl(Declaration):
    type_ref: TypeRef
    new_type: bool = False  # ``type`` rather than ``typedef``


@dataclass(eq=False, slots=True)
class ConstDecl(Declaration):
    type_ref: TypeRef
    value: Expr  # after checking: a folded literal / ListExpr / StructExpr


@dataclass(eq=False, slots=True)
class VarDecl(Declaration):
    type_ref: TypeRef
    init: Expr | None


@dataclass(eq=False, slots=True)
class MethodDecl(Declaration):
    """A method (or constructor, when name == the extern's name) of an extern."""

    return_type: TypeRef | None  # None for constructors
    type_params: list[str]
    params: list[Param]
    abstract: bool = False


@dataclass(eq=False, slots=True)
class ExternDecl(Declaration):
    type_params: list[str]
    methods: list[MethodDecl]


@dataclass(eq=False, slots=True)
class ExternFunctionDecl(Declaration):
    return_type: TypeRef
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False, slots=True)
class FunctionDecl(Declaration):
    return_type: TypeRef
    type_params: list[str]
    params: list[Param]
    body: Block


@dataclass(eq=False, slots=True)
class ActionDecl(Declaration):
    """An action. Parameters with a direction are data-plane parameters (bound by the
    caller); directionless ones are control-plane parameters (action data)."""

    params: list[Param]
    body: Block


@dataclass(eq=False, slots=True)
class KeyElement(Node):
    expr: Expr
    match_kind: str
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class ActionRef(Node):
    """An action in a table's ``actions`` list or as ``default_action``; ``args`` are
    the bound arguments (for default_action and entries: all of them)."""

    name: Expr  # a Name (possibly ``.NoAction``)
    args: list[Argument]
    annotations: list[Annotation] = field(default_factory=list)
    action: ActionDecl | None = field(default=None, kw_only=True)  # (checked)


@dataclass(eq=False, slots=True)
class TableEntry(Node):
    """A ``const entries``/``entries`` element: keyset -> action."""

    keys: list[Expr]  # one per key element (a single-key table's tuple is unwrapped)
    action: ActionRef
    priority: Expr | None = None
    is_const: bool = True
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class TableProperty(Node):
    """A table property other than key/actions/default_action/entries/size,
    e.g. ``counters = c;``, ``implementation = ap;``, ``meters = m;``,
    ``support_timeout = true;``, ``psa_*``..."""

    name: str
    value: Expr
    is_const: bool = False
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class TableDecl(Declaration):
    keys: list[KeyElement]
    actions: list[ActionRef]
    default_action: ActionRef | None
    default_is_const: bool
    entries: list[TableEntry]
    entries_const: bool
    size: Expr | None
    properties: list[TableProperty]
    largest_priority_wins: Expr | None = None
    priority_delta: Expr | None = None


@dataclass(eq=False, slots=True)
class Instantiation(Declaration):
    """``T<args>(ctor args) name;`` (an extern, parser, control or package instance).

    (checked): ``type`` is the instantiated type and ``fqn`` the fully-qualified name
    p4c uses for it in P4Info (e.g. ``MyIngress.counter1``; honours @name)."""

    type_ref: TypeRef
    args: list[Argument]
    initializer: Block | None = None  # abstract method implementations (rare)
    type: T.Type | None = field(default=None, kw_only=True)  # (checked)
    fqn: str = field(default="", kw_only=True)  # (checked)


@dataclass(eq=False, slots=True)
class ValueSetDecl(Declaration):
    """``value_set<T>(size) name;`` inside a parser."""

    element: TypeRef
    size: Expr


@dataclass(eq=False, slots=True)
class SelectCase(Node):
    keyset: Expr  # an expression, mask (Binary "&&&"), range ("..") , DefaultExpr, ListExpr
    state: str


@dataclass(eq=False, slots=True)
class Select(Node):
    exprs: list[Expr]
    cases: list[SelectCase]


@dataclass(eq=False, slots=True)
class ParserState(Declaration):
    stmts: list[Stmt]
    transition: str | Select | None  # a state name, a Select, or None (implicit reject)


@dataclass(eq=False, slots=True)
class ParserTypeDecl(Declaration):
    """``parser P<H>(packet_in b, out H h);`` (an abstract parser type)."""

    type_params: list[str]
    params: list[Param]


@dataclass(eq=False, slots=True)
class ControlTypeDecl(Declaration):
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False, slots=True)
class PackageDecl(Declaration):
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False, slots=True)
class ParserDecl(Declaration):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Declaration]  # VarDecl, ConstDecl, Instantiation, ValueSetDecl
    states: list[ParserState]


@dataclass(eq=False, slots=True)
class ControlDecl(Declaration):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Declaration]  # VarDecl, ConstDecl, Instantiation, ActionDecl, TableDecl
    body: Block


TopLevel = (
    HeaderDecl
    | HeaderUnionDecl
    | StructDecl
    | EnumDecl
    | ErrorDecl
    | MatchKindDecl
    | TypedefDecl
    | ConstDecl
    | ExternDecl
    | ExternFunctionDecl
    | FunctionDecl
    | ActionDecl
    | ParserTypeDecl
    | ControlTypeDecl
    | PackageDecl
    | ParserDecl
    | ControlDecl
    | Instantiation
)


@dataclass(eq=False, slots=True)
class Unsupported(Node):
    """A syntactically valid construct the front end does not support yet; the checker
    reports ``what`` at ``pos`` as an 'unsupported' error."""

    what: str


@dataclass(eq=False, slots=True)
class SourceFile:
    decls: list[Declaration]
