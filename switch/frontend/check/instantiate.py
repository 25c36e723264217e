"""Pass 3: instantiation of the ``main`` package into a ``Program``.

Every parser and control passed to the package becomes a ``BlockInstance`` named after
its type (``MyIngress``); a local instance ``Sub() s;`` becomes the child
``MyIngress.s``. Tables, actions referenced by tables, extern instances and value sets
get the fully-qualified control-plane names p4c gives them in P4Info: the block's name,
a dot and the local name, where ``@name("x")`` replaces the local name and
``@name(".x")`` makes the name global; top-level objects keep their own name."""

from __future__ import annotations

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.check_declarations import package_arg_block
from switch.frontend.check.context import Context, annotation_string
from switch.frontend.check.key_names import key_name
from switch.frontend.check.print_expressions import expr_text
from switch.frontend.check.resolve_types import free_vars
from switch.frontend.program import (
    ActionInstance,
    BlockInstance,
    ControllerHeader,
    DigestInfo,
    ExternInstance,
    KeyInfo,
    Program,
    TableInstance,
    ValueSetInstance,
)

DEFAULT_TABLE_SIZE = 1024
SUPPORTED_ARCHITECTURES = {"V1Switch": "v1model"}


def control_plane_name(parent: str, decl: A.Declaration) -> str:
    """The P4Info name of ``decl`` declared in the block named ``parent`` ("" for the
    top level)."""
    given = annotation_string(decl.annotations, "name")
    if given is not None:
        if given.startswith("."):
            return given[1:]
        local = given
    else:
        local = decl.name
    return f"{parent}.{local}" if parent else local


def folded_value(e: A.Expr | None, block: BlockInstance | None = None) -> object:
    """A constructor argument as plain data: ints, bools, strings, enum member names
    (a constructor parameter of ``block`` stands for the value it was given)."""
    if e is None:
        return None
    if isinstance(e, A.Name) and isinstance(e.decl, A.Param) and block is not None:
        return block.ctor_args.get(e.decl.name)
    if isinstance(e, A.Cast) and F.is_constant(e):
        return folded_value(e.expr, block)
    if isinstance(e, (A.Cast, A.Unary, A.Binary)) and block is not None:
        return _evaluate(e, block)
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.BoolLit):
        return e.value
    if isinstance(e, A.StringLit):
        return e.value
    if isinstance(e, A.EnumValue):
        return e.member
    if isinstance(e, A.ListExpr):
        return [folded_value(x, block) for x in e.elements]
    if isinstance(e, A.StructExpr):
        return {n: folded_value(x, block) for n, x in e.fields}
    return None


def _evaluate(e: A.Expr, block: BlockInstance) -> object:
    """The value of an expression over constructor parameters, once they are known."""
    t = e.type
    if isinstance(e, A.Cast):
        v = folded_value(e.expr, block)
        if isinstance(t, T.Bits) and isinstance(v, (int, bool)):
            return F.cast_int(int(v), t)
        if isinstance(t, T.Bool) and isinstance(v, int):
            return bool(v)
        return v
    if isinstance(e, A.Unary):
        v = folded_value(e.expr, block)
        if e.op == "!" and isinstance(v, bool):
            return not v
        if isinstance(v, int) and t is not None and (e.op != "~" or isinstance(t, T.Bits)):
            return F.unary(e.op, v, t)
        return None
    if isinstance(e, A.Binary):
        a, b = folded_value(e.left, block), folded_value(e.right, block)
        if e.op in ("&&", "||") and a is (e.op == "||"):
            return a  # the left operand decides
        if a is None or b is None:
            return None  # not a constant (a header field compared with a constant)
        if isinstance(a, bool) or isinstance(b, bool):
            if e.op == "&&":
                return bool(a) and bool(b)
            if e.op == "||":
                return bool(a) or bool(b)
            return F.compare(e.op, a, b)
        if not isinstance(a, int) or not isinstance(b, int):
            return None
        if e.op in ("<<", ">>") and t is not None:
            return F.shift(e.op, a, b, t)
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            return F.compare(e.op, a, b)
        if e.op == "++" and isinstance(e.left.type, T.Bits) and isinstance(e.right.type, T.Bits):
            return F.concat(a, e.left.type, b, e.right.type)[0]
        if t is not None:
            return F.arith(e.op, a, b, t)
    return None


def _block_argument(a: A.Expr | None, parent: BlockInstance | None) -> BlockInstance | None:
    """The parser or control instance a constructor argument names: a local instance of
    the parent block, or a constructor parameter of the parent that stands for one."""
    if parent is None or not isinstance(a, A.Name):
        return None
    d = a.decl
    if isinstance(d, A.Instantiation | A.Param):
        return parent.children.get(d.name)
    return None


def key_width(t: T.Type | None) -> int:
    if isinstance(t, T.Bits):
        return t.width
    if isinstance(t, T.Bool):
        return 1
    if isinstance(t, T.SerEnum):
        return t.underlying.width
    if isinstance(t, T.NewType):
        return key_width(t.underlying)
    return 32  # error and plain enum values are numbered by the target


class Instantiate:
    def __init__(self, ctx: Context, program: Program) -> None:
        self.ctx = ctx
        self.program = program
        self.top_actions = [d for d in ctx.tree.decls if isinstance(d, A.ActionDecl)]
        self.top_instances = [d for d in ctx.tree.decls if isinstance(d, A.Instantiation)
                              and isinstance(d.type, T.Extern)]

    def run(self) -> None:
        ctx = self.ctx
        mains = [d for d in ctx.tree.decls if isinstance(d, A.Instantiation) and d.name == "main"]
        if not mains:
            ctx.error(None, "Could not locate top-level block; is there a 'main' package?")
            return
        main = mains[0]
        t = main.type
        if not isinstance(t, T.ParserOrControl) or t.kind != "package":
            ctx.error(main.pos, "main: must be an instance of a package", 4)
            return
        arch = SUPPORTED_ARCHITECTURES.get(t.name)
        if arch is None:
            ctx.unsupported(main.pos, f"architecture {t.name} (the switch implements V1Switch "
                            "of v1model.p4)", len(t.name))
            return
        self.program.arch = arch
        main.fqn = "main"
        for inst in self.top_instances:
            self._extern(inst, None, "")
        pkg = t.decl
        assert isinstance(pkg, A.PackageDecl)
        for param, arg in zip(pkg.params, main.args, strict=False):
            if arg.value is None:
                continue
            block, named = package_arg_block(arg.value)
            if block is None:
                continue
            key = id(named) if named is not None else id(arg.value)
            args = self.ctx.ctor_args.get(key, [])
            if named is not None:
                named.fqn = named.fqn or block.name
            self.program.pipeline[param.name] = self.block(block, block.name, args)
        self._digests()
        self._controller_headers()
        self.program.errors = dict(ctx.errors)

    # ---------------------------------------------------------------- blocks

    def block(
        self,
        decl: A.ParserDecl | A.ControlDecl,
        fqn: str,
        args: list[A.Expr | None],
        parent: BlockInstance | None = None,
    ) -> BlockInstance:
        bi = BlockInstance(fqn, decl)
        for p, a in zip(decl.ctor_params, args, strict=False):
            given = _block_argument(a, parent)
            if isinstance(a, A.Call) and isinstance(a.type, T.ParserOrControl) and isinstance(
                    a.type.decl, (A.ParserDecl, A.ControlDecl)):
                # a nameless instance, ``C2(C1()) c2``: it belongs to the block given it
                given = self.block(a.type.decl, f"{fqn}.{p.name}",
                                   self.ctx.ctor_args.get(id(a), []), parent)
            if given is not None:
                bi.children[p.name] = given  # the instance the parameter stands for
            else:
                bi.ctor_args[p.name] = folded_value(a, parent)
        names = self.program.instance_names
        for action in self.top_actions:
            names[(id(action), fqn)] = control_plane_name("", action)
        for inst in self.top_instances:
            names[(id(inst), fqn)] = control_plane_name("", inst)
        for local in decl.locals:
            if isinstance(local, A.ActionDecl):
                names[(id(local), fqn)] = control_plane_name(fqn, local)
        for local in decl.locals:
            if isinstance(local, A.Instantiation):
                t = local.type
                if isinstance(t, T.ParserOrControl) and isinstance(t.decl, (A.ParserDecl,
                                                                            A.ControlDecl)):
                    child = control_plane_name(fqn, local)
                    names[(id(local), fqn)] = child
                    local.fqn = local.fqn or child
                    bi.children[local.name] = self.block(
                        t.decl, child, self.ctx.ctor_args.get(id(local), []), bi)
                elif isinstance(t, T.Extern):
                    self._extern(local, bi, fqn)
            elif isinstance(local, A.ValueSetDecl):
                self._value_set(local, bi)
        for local in decl.locals:
            if isinstance(local, A.TableDecl):
                self._table(local, bi)
        return bi

    def _extern(self, inst: A.Instantiation, bi: BlockInstance | None, parent: str,
                fqn: str | None = None) -> str:
        fqn = fqn or control_plane_name(parent, inst)
        t = inst.type
        assert isinstance(t, T.Extern)
        args = [folded_value(a, bi) for a in self.ctx.ctor_args.get(id(inst), [])]
        extern = ExternInstance(fqn, inst, bi, t.name, t, args)
        if fqn in self.program.externs:
            self.program.shadowed.append(extern)
        else:
            self.program.externs[fqn] = extern
        if not inst.fqn:
            inst.fqn = fqn  # the first instance, when its block is instantiated twice
        if bi is not None:
            self.program.instance_names[(id(inst), bi.fqn)] = fqn
        else:
            self.program.instance_names[(id(inst), "")] = fqn
        return fqn

    def _value_set(self, d: A.ValueSetDecl, bi: BlockInstance) -> None:
        fqn = control_plane_name(bi.fqn, d)
        size = d.size.value if isinstance(d.size, A.IntLit) else 0
        element = d.element.resolved or T.Bits(0)
        vs = ValueSetInstance(fqn, d, bi, element, size)
        if fqn in self.program.value_sets:
            self.program.shadowed.append(vs)
        else:
            self.program.value_sets[fqn] = vs
        self.program.instance_names[(id(d), bi.fqn)] = fqn

    # ---------------------------------------------------------------- tables

    def _action_fqn(self, decl: A.ActionDecl, bi: BlockInstance) -> str:
        fqn = self.program.instance_names.get((id(decl), bi.fqn))
        if fqn is None:
            fqn = control_plane_name("", decl)
        if fqn not in self.program.actions:
            owner = self.ctx.owners.get(id(decl))
            params = [
                (p.name, key_width(p.type_ref.resolved)) for p in decl.params if not p.direction
            ]
            self.program.actions[fqn] = ActionInstance(
                fqn, decl, bi if owner is not None else None, params
            )
        return fqn

    def _table(self, t: A.TableDecl, bi: BlockInstance) -> None:
        fqn = control_plane_name(bi.fqn, t)
        self.program.instance_names[(id(t), bi.fqn)] = fqn
        keys = []
        for k in t.keys:
            name = key_name(k) or expr_text(k.expr)
            keys.append(KeyInfo(name, k.match_kind, key_width(k.expr.type), k))
        actions = [self._action_fqn(r.action, bi) for r in t.actions if r.action is not None]
        default_args: list[int] = []
        if t.default_action is not None and t.default_action.action is not None:
            default = self._action_fqn(t.default_action.action, bi)
            default_args = self._action_data(t.default_action)
        else:
            no_action = next((a for a in self.top_actions if a.name == "NoAction"), None)
            default = self._action_fqn(no_action, bi) if no_action is not None else "NoAction"
        given = folded_value(t.size, bi) if t.size is not None else None
        size = given if isinstance(given, int) else DEFAULT_TABLE_SIZE
        ti = TableInstance(fqn, t, bi, keys, actions, default, default_args,
                           t.default_is_const, size)
        for prop in t.properties:
            target = self._property_instance(prop, bi, fqn)
            if target is None:
                continue
            if prop.name == "implementation":
                ti.implementation = target
            elif prop.name == "counters":
                ti.direct_counter = target
            elif prop.name == "meters":
                ti.direct_meter = target
        if fqn in self.program.tables:
            self.program.shadowed.append(ti)
        else:
            self.program.tables[fqn] = ti

    def _action_data(self, ref: A.ActionRef) -> list[int]:
        """The values of an action's control-plane parameters bound in ``ref``."""
        decl = ref.action
        assert decl is not None
        by_param: dict[str, A.Expr | None] = {}
        positional = [a for a in ref.args if not a.name]
        for p, a in zip(decl.params, positional, strict=False):
            by_param[p.name] = a.value
        for a in ref.args:
            if a.name:
                by_param[a.name] = a.value
        out = []
        for p in decl.params:
            if p.direction:
                continue
            v = folded_value(by_param.get(p.name))
            out.append(int(v) if isinstance(v, (int, bool)) else 0)
        return out

    def _property_instance(self, prop: A.TableProperty, bi: BlockInstance, table_fqn: str
                           ) -> str | None:
        inline = self.ctx.inline_instances.get(id(prop))
        if inline is not None:
            # p4c names an instance constructed in a table property by the property's
            # @name (as written, not prefixed by the block), else after the table
            given = annotation_string(prop.annotations, "name")
            fqn = given.lstrip(".") if given is not None else table_fqn
            if fqn not in self.program.externs:
                self._extern(inline, bi, bi.fqn, fqn)
            return fqn
        v = prop.value
        if isinstance(v, A.Name) and isinstance(v.decl, A.Instantiation):
            return self.program.instance_names.get((id(v.decl), bi.fqn)) or (
                self.program.instance_names.get((id(v.decl), "")))
        return None

    # ------------------------------------------------------ program-wide info

    def _digests(self) -> None:
        for _call, t in self.ctx.digest_calls:
            if free_vars(t):
                continue  # in a generic block; its specializations have the real types
            name = str(t)
            if name not in self.program.digests:
                self.program.digests[name] = DigestInfo(name, t)

    def _controller_headers(self) -> None:
        for d in self.ctx.tree.decls:
            if not isinstance(d, A.HeaderDecl):
                continue
            kind = annotation_string(d.annotations, "controller_header")
            if kind is None:
                continue
            t = self.ctx.decl_types.get(id(d))
            if not isinstance(t, T.Header):
                continue
            if kind in self.program.controller_headers:
                self.ctx.error(d.pos, f"{d.name}: a second @controller_header(\"{kind}\")",
                               len(d.name))
                continue
            self.program.controller_headers[kind] = ControllerHeader(kind, t)


def instantiate(ctx: Context, source: object, filename: str) -> Program:
    program = Program(source=source, filename=filename, decls=list(ctx.tree.decls), arch="",
                      pipeline={})
    Instantiate(ctx, program).run()
    return program
