"""Parsers: the state machine as one generated function, extraction, lookahead,
advance, verify and select.

Where the offset in the packet is known when the code is generated (from the start of
a top-level parser, which the architecture runs at offset 0, through states compiled
in place and fixed-size headers), an extraction reads at that constant offset and
sets ``_bo`` to the next one, without testing the offset's alignment at run time.

A top-level parser whose states are compiled in place also builds the headers of its
``out`` structs itself (those of a fixed layout, which an extraction sets whole): the
architecture may pass a struct without them (``CompiledProgram.fresh_out``), an
extraction fills a header object fresh from ``_new`` instead of one made with zeros
first, and every other use of such a header, the end of the parser and a parser error
first give it its default value where the path so far has not.
"""

from __future__ import annotations

from switch.engine.codegen_stmt import StmtMixin
from switch.engine.layout import attr, is_signed, scalar_width, strip
from switch.frontend import ast as A
from switch.frontend import types as T

MAX_PARSER_STEPS = 10000
MAX_INLINE_DEPTH = 12


class ParserMixin(StmtMixin):
    #: the bit offset ``_bo`` holds here, when the code generator knows it
    known_bo: int | None = None
    #: the headers of out structs the parser builds: (id(param), member) -> the
    #: parameter and the header's class; and those built on the path so far
    owned: dict[tuple[int, str], tuple[A.Param, str]] = {}
    built: set[tuple[int, str]] = set()

    def err(self, name: str, default: int) -> int:
        return self.program.errors.get(name, default)

    # ---------------------------------------------------------- packet_in

    def packet_in_method(self, c: A.Call, t: A.CallExternMethod) -> str | None:
        if self.kind != "parser":
            raise self.unsupported(f"packet_in.{t.method} outside a parser", c)
        m = t.method
        args = self.args_of(c)
        short = self.err("PacketTooShort", 1)
        if m == "extract":
            self.extract(args[0], args[1] if len(args) > 1 else None, c)
            return None
        if m == "lookahead":
            lt = None
            if c.type_args and c.type_args[0].resolved is not None:
                lt = strip(c.type_args[0].resolved)
            elif c.type is not None:
                lt = strip(c.type)
            if lt is None:
                raise self.unsupported("lookahead without a type", c)
            if isinstance(lt, T.Header):
                h = self.tmp("_lh")
                self.em(f"{h} = {self.types.cls(lt)}()")
                self.em(f"_extract_generic({h}, _d, _bo, {short})")
                return h
            if isinstance(lt, T.Struct):
                return self._lookahead_struct(lt, short)
            w = scalar_width(lt)
            v = f"_lookahead(_d, _bo, {w}, {short})"
            if isinstance(lt, T.Bool):
                return f"({v} != 0)"
            if is_signed(lt):
                half = 1 << (w - 1)
                return f"(({v} ^ {half}) - {half})"
            return v
        if m == "advance":
            n = self.expr(args[0])  # type: ignore[arg-type]
            t0 = self.tmp("_adv")
            self.em(f"{t0} = {n}")
            if not (n.isdigit() and int(n) % 8 == 0):  # BMv2 advances whole bytes only
                self.em(f"if {t0} & 7:")
                self.em(f"    raise _ParserError({self.err('ParserInvalidArgument', 6)}, _bo)")
            self.em(f"if _bo + {t0} > _n:")
            self.em(f"    raise _ParserError({short}, _bo)")
            self.em(f"_bo += {t0}")
            self.known_bo = self.known_bo + int(n) if self.known_bo is not None \
                and n.isdigit() else None
            return None
        if m == "length":
            return "_nb"
        raise self.unsupported(f"packet_in.{m}", c)

    def _lookahead_struct(self, t: T.Struct, short: int) -> str:
        """A struct of fixed-width fields read from the packet without moving."""
        leaves: list[tuple[str, T.Type]] = []

        def walk(st: T.Type, path: str) -> None:
            st = strip(st)
            if isinstance(st, (T.Struct, T.Header)):
                for f in st.fields:
                    walk(f.type, f"{path}.{attr(f.name)}")
            else:
                leaves.append((path, st))

        obj = self.tmp("_ls")
        self.em(f"{obj} = {self.types.cls(t)}()")
        walk(t, obj)
        total = sum(scalar_width(lt) for _p, lt in leaves)
        v = self.tmp("_lv")
        self.em(f"{v} = _lookahead(_d, _bo, {total}, {short})")
        pos = total
        for path, lt in leaves:
            w = scalar_width(lt)
            pos -= w
            x = f"({v} >> {pos}) & {(1 << w) - 1}"
            if isinstance(lt, T.Bool):
                x = f"({x}) != 0"
            elif is_signed(lt):
                x = f"((({x}) ^ {1 << (w - 1)}) - {1 << (w - 1)})"
            self.em(f"{path} = {x}")
        hdr_paths = set()

        def valid(st: T.Type, path: str) -> None:
            st = strip(st)
            if isinstance(st, T.Header):
                hdr_paths.add(path)
            if isinstance(st, (T.Struct, T.Header)):
                for f in st.fields:
                    valid(f.type, f"{path}.{attr(f.name)}")

        valid(t, obj)
        for path in sorted(hdr_paths):
            self.em(f"{path}.valid = True")
        return obj

    def extract(self, target: A.Expr | None, nbits: A.Expr | None, c: A.Call) -> None:
        if target is None:  # `extract<H>(_)`: into a header nobody sees, to skip it
            target = self.scratch(c.type_args[0].resolved if c.type_args else None, c)
        t = self.ty(target)
        if not isinstance(t, T.Header):
            raise self.unsupported(f"extract into a {t}", c)
        short = self.err("PacketTooShort", 1)
        cls = self.types.cls(t)
        key = self._owned_key(target)
        if key is not None and key not in self.built and nbits is None \
                and self.known_bo is not None and self.known_bo % 8 == 0:
            assert isinstance(target, A.Member)
            self._extract_fresh(target, key, t, short, c)
            return
        if key is not None:
            self._default(key)
        h, u = self.header_ref(target)
        if self.mod.trace:
            self.em(f"_T('extract', {self.mod.stmt_id(c.pos)}, {t.name!r})")
        known, self.known_bo = self.known_bo, None
        if nbits is not None:
            n = self.expr(nbits)
            self.em(f"_bo = _extract_generic({h}, _d, _bo, {short}, {n}, "
                    f"{self.err('HeaderTooShort', 4)}, {self.err('ParserInvalidArgument', 6)})")
        else:
            nbytes = self.types.header_nbytes(cls)
            if nbytes is None:
                self.em(f"_bo = _extract_generic({h}, _d, _bo, {short})")
            elif known is not None and known % 8 == 0:
                end = known // 8 + nbytes
                self.em(f"if {end} > _nb:")
                self.em(f"    raise _ParserError({short}, {known})")
                for ln in self.types.extract_lines(cls, h, "_d", str(known // 8)):
                    self.em(ln)
                self.em(f"_bo = {end * 8}")
                self.known_bo = end * 8
            else:
                self.em("if _bo & 7:")
                self.em(f"    _bo = _extract_generic({h}, _d, _bo, {short})")
                self.em("else:")
                with self.em.indent():
                    self.em("_p = _bo >> 3")
                    self.em(f"if _p + {nbytes} > _nb:")
                    self.em(f"    raise _ParserError({short}, _bo)")
                    for ln in self.types.extract_lines(cls, h, "_d", "_p"):
                        self.em(ln)
                    self.em(f"_bo += {nbytes * 8}")
        self.union_siblings_invalid(target, u)

    def _extract_fresh(self, target: A.Member, key: tuple[int, str], t: T.Header,
                       short: int, c: A.Call) -> None:
        """Extract an owned header at a known offset into a new object."""
        cls = self.types.cls(t)
        nbytes = self.types.header_nbytes(cls)
        assert nbytes is not None and self.known_bo is not None
        if self.mod.trace:
            self.em(f"_T('extract', {self.mod.stmt_id(c.pos)}, {t.name!r})")
        end = self.known_bo // 8 + nbytes
        self.em(f"if {end} > _nb:")
        self.em(f"    raise _ParserError({short}, {self.known_bo})")
        h = self.tmp("_h")
        self.em(f"{h} = _new({cls})")
        for ln in self.types.extract_lines(cls, h, "_d", str(self.known_bo // 8)):
            self.em(ln)
        self.em(f"{self.expr(target.expr)}.{attr(target.name)} = {h}")
        self.em(f"_bo = {end * 8}")
        self.known_bo = end * 8
        self.built.add(key)

    # ------------------------------------------------------ owned out headers

    def _own_headers(self, decl: A.ParserDecl) -> None:
        """Choose the out headers this parser builds (see the module's docstring) and
        register the constructor of each out struct without them."""
        self.owned, self.built = {}, set()
        if any(_compound(s) for st in decl.states for s in st.stmts) or self.block is None:
            return
        for p in decl.params:
            pt = strip(p.type_ref.resolved) if p.type_ref.resolved is not None else None
            if p.direction != "out" or not isinstance(pt, T.Struct):
                continue
            skip = []
            for f in pt.fields:
                ft = strip(f.type)
                if isinstance(ft, T.Header) and self.types.owns_fields(ft):
                    self.owned[(id(p), f.name)] = (p, self.types.cls(ft))
                    skip.append(attr(f.name))
            if skip:
                self.mod.out_factories[(self.block.fqn, p.name)] = \
                    self.types.partial_factory(pt, frozenset(skip))

    def _owned_key(self, e: A.Expr) -> tuple[int, str] | None:
        if isinstance(e, A.Member) and isinstance(e.expr, A.Name):
            key = (id(e.expr.decl), e.name)
            if key in self.owned:
                return key
        return None

    def _default(self, key: tuple[int, str]) -> None:
        """The owned header ``key`` gets its default value, unless the path has one."""
        if key in self.built:
            return
        p, cls = self.owned[key]
        self.em(f"{self.lookup(p)}.{attr(key[1])} = {cls}()")
        self.built.add(key)

    def _default_all(self) -> None:
        for key in self.owned:
            self._default(key)

    def _before_use(self, node: object) -> None:
        """Build the owned headers that ``node`` refers to (all of a struct it uses
        whole), except the one an extraction fills."""
        if not self.owned:
            return
        if isinstance(node, A.Member):
            key = self._owned_key(node)
            if key is not None:
                self._default(key)
                return
        if isinstance(node, A.Name):
            if any(k[0] == id(node.decl) for k in self.owned):
                for key in self.owned:
                    if key[0] == id(node.decl):
                        self._default(key)
            return
        if isinstance(node, A.Call) and isinstance(node.target, A.CallExternMethod) \
                and node.target.method == "extract" and node.args:
            for a in node.args[1:]:
                self._before_use(a)
            if self._owned_key(node.args[0].value) is None:  # type: ignore[arg-type]
                self._before_use(node.args[0])
            return
        if isinstance(node, A.CallTarget):
            receiver = getattr(node, "receiver", None)
            if receiver is not None:
                self._before_use(receiver)
            return
        for slot in getattr(node, "__slots__", ()):
            child = getattr(node, slot, None)
            for x in child if isinstance(child, (list, tuple)) else (child,):
                if isinstance(x, (A.Node, A.CallTarget)):
                    self._before_use(x)

    def stmt(self, s: A.Stmt) -> None:
        if self.kind == "parser" and self.owned:
            self._before_use(s)
        super().stmt(s)

    def verify(self, c: A.Call) -> None:
        if self.kind != "parser":
            raise self.unsupported("verify outside a parser", c)
        args = self.args_of(c)
        cond = self.expr(args[0])  # type: ignore[arg-type]
        code = self.expr(args[1])  # type: ignore[arg-type]
        self.em(f"if not {cond}:")
        self.em(f"    raise _ParserError({code}, _bo)")
        return None

    # ------------------------------------------------------------- states

    def parser_body(self, decl: A.ParserDecl, ret: str) -> None:
        """The state machine; ``ret`` is the Python expression returned on accept.

        A state with a single incoming transition (in a parser without loops) is
        compiled in place at that transition; the others are cases of a dispatch loop.
        """
        by_name = {s.name: s for s in decl.states}
        if "start" not in by_name:
            raise self.unsupported("parser without a start state", decl)
        looping = parser_has_cycle(decl)
        indeg: dict[str, int] = {}
        for st in decl.states:
            for t in state_targets(st):
                indeg[t] = indeg.get(t, 0) + 1
        self._inline = set()
        if not looping:
            # states compiled in place nest one level deeper each: keep the nesting
            # far from Python's indentation limit
            depth = {"start": 0}
            todo = ["start"]
            while todo:
                n = todo.pop()
                for t in state_targets(by_name[n]):
                    if t not in by_name or t in depth:
                        continue
                    if indeg.get(t) == 1 and depth[n] < MAX_INLINE_DEPTH:
                        self._inline.add(t)
                        depth[t] = depth[n] + 1
                    else:
                        depth[t] = 0
                    todo.append(t)
        loop_states = [s for s in decl.states if s.name not in self._inline]
        self._state_index = {s.name: i for i, s in enumerate(loop_states)}
        self._by_name = by_name
        # the architecture runs its own parsers from the start of the packet
        top = self.block is not None and any(
            bi is self.block for bi in self.program.pipeline.values())
        self.known_bo = 0 if top else None
        reachable_loop = [s for s in loop_states if s.name == "start" or s.name in indeg]
        in_place = len(reachable_loop) == 1 and not looping
        self.owned, self.built = {}, set()
        if top and in_place and not self.mod.trace:
            self._own_headers(decl)
        self.em("_nb = len(_d)")
        self.em("_n = _nb << 3")
        for d in decl.locals:
            self._before_use(d)
            self.local_decl(d)
        if in_place:
            self._in_loop = False
            if not self.owned:
                self.state(by_name["start"], ret)
                return
            self.em("try:")
            with self.em.indent():
                self.state(by_name["start"], ret)
            members: dict[int, list[str]] = {}
            for (pid, name), (p, cls) in self.owned.items():
                members.setdefault(pid, [self.lookup(p) or ""]).append(
                    f"({attr(name)!r}, {cls})")
            self.em("except _ParserError:")
            for obj, *pairs in members.values():
                self.em(f"    _complete({obj}, ({', '.join(pairs)},))")
            self.em("    raise")
            return
        self._in_loop = True
        self.known_bo = None
        self.em(f"_st = {self._state_index['start']}")
        if looping:
            self.em("_steps = 0")
        self.em("while True:")
        with self.em.indent():
            if looping:
                self.em("_steps += 1")
                self.em(f"if _steps > {MAX_PARSER_STEPS}:")
                self.em(f"    raise _ParserError({self.err('ParserTimeout', 5)}, _bo)")
            for i, st in enumerate(reachable_loop):
                self.em(f"{'if' if i == 0 else 'elif'} _st == {self._state_index[st.name]}:")
                with self.em.indent():
                    self.state(st, ret)

    def goto(self, name: str, ret: str) -> None:
        if name == "accept":
            self._default_all()
            self.em(f"return {ret}")
        elif name == "reject":
            self._default_all()
            self.em(f"raise _ParserError({self.err('NoError', 0)}, _bo)")
        elif name in self._inline:
            self.state(self._by_name[name], ret)
        elif name in self._state_index and self._in_loop:
            self.em(f"_st = {self._state_index[name]}")
            self.em("continue")
        else:
            raise self.unsupported(f"transition to unknown state {name}")

    def state(self, st: A.ParserState, ret: str) -> None:
        if self.mod.trace:
            self.em(f"_T('state', {self.mod.stmt_id(st.pos)}, {st.name!r})")
        with self.scope():
            self.stmts(st.stmts)
            tr = st.transition
            if tr is None:
                self.goto("reject", ret)
            elif isinstance(tr, str):
                self.goto(tr, ret)
            else:
                self.select(tr, ret)

    def select(self, sel: A.Select, ret: str) -> None:
        keys = []
        self._before_use(sel)
        for e in sel.exprs:
            v = self.expr(e)
            k = self.tmp("_k")
            self.em(f"{k} = {v}")
            keys.append((k, self.ty(e)))
        first = True
        known, built = self.known_bo, self.built
        for case in sel.cases:
            self.known_bo, self.built = known, set(built)
            cond = self.keyset(case.keyset, keys)
            if cond == "True":
                if first:
                    self.goto(case.state, ret)
                else:
                    self.em("else:")
                    with self.em.indent():
                        self.goto(case.state, ret)
                return
            self.em(f"{'if' if first else 'elif'} {cond}:")
            first = False
            with self.em.indent():
                self.goto(case.state, ret)
        nomatch = f"raise _ParserError({self.err('NoMatch', 2)}, _bo)"
        if first:
            self.em(nomatch)
        else:
            self.em("else:")
            self.em("    " + nomatch)

    def _s_If(self, s: A.If) -> None:
        if self.kind != "parser":
            super()._s_If(s)
            return
        c = self.cond(s.cond)
        known = self.known_bo
        self.em(f"if {c}:")
        with self.em.indent():
            self.stmt(s.then)
        after_then, self.known_bo = self.known_bo, known
        if s.other is not None and not isinstance(s.other, A.Empty):
            self.em("else:")
            with self.em.indent():
                self.stmt(s.other)
        if self.known_bo != after_then:
            self.known_bo = None

    def sub_apply(self, c: A.Call, inst: A.Instantiation | A.Param) -> None:
        super().sub_apply(c, inst)
        self.known_bo = None

    def keyset(self, ks: A.Expr, keys: list[tuple[str, T.Type]]) -> str:
        if isinstance(ks, (A.DefaultExpr, A.DontCare)):
            return "True"
        vs = self._value_set(ks)
        if vs is not None:
            key = keys[0][0] if len(keys) == 1 else "(" + ", ".join(k for k, _t in keys) + ",)"
            return f"{vs}.match({key})"
        if len(keys) > 1:
            elems = ks.elements if isinstance(ks, A.ListExpr) else None
            if elems is None or len(elems) != len(keys):
                raise self.unsupported("keyset does not match the select key", ks)
            parts = [self.keyset(x, [k]) for x, k in zip(elems, keys, strict=True)]
            parts = [p for p in parts if p != "True"]
            return " and ".join(parts) if parts else "True"
        if isinstance(ks, A.ListExpr) and len(ks.elements) == 1:
            return self.keyset(ks.elements[0], keys)
        k, kt = keys[0]
        if isinstance(ks, A.Binary) and ks.op == "&&&":
            v = self.expr(ks.left)
            m = self.expr(ks.right)
            if _is_const(v) and _is_const(m):
                return f"({k} & {m}) == {int(v.strip('()'), 0) & int(m.strip('()'), 0)}"
            return f"({k} & {m}) == ({v} & {m})"
        if isinstance(ks, A.Binary) and ks.op == "..":
            return f"{self.expr(ks.left)} <= {k} <= {self.expr(ks.right)}"
        v = self.expr(ks)
        return f"{k} == {v}"

    def _value_set(self, ks: A.Expr) -> str | None:
        if isinstance(ks, A.Name) and isinstance(ks.decl, A.ValueSetDecl):
            fqn = self.instance_fqn(ks.decl)
            vs = self.mod.value_sets.get(fqn or "")  # type: ignore[attr-defined]
            if vs is None:
                raise self.unsupported(f"value set {ks.name} has no instance", ks)
            return self.mod.bind(vs, "vs_" + vs.name)
        return None


def _compound(s: A.Stmt) -> bool:
    """A statement with statements inside other than a plain block."""
    if isinstance(s, A.Block):
        return any(_compound(x) for x in s.stmts)
    return isinstance(s, (A.If, A.Switch, A.For, A.ForIn))


def _is_const(code: str) -> bool:
    s = code.strip("()")
    try:
        int(s, 0)
        return True
    except ValueError:
        return False


def state_targets(st: A.ParserState) -> list[str]:
    """The states a parser state's transition may go to."""
    tr = st.transition
    if isinstance(tr, str):
        return [tr]
    if isinstance(tr, A.Select):
        return [c.state for c in tr.cases]
    return []


def parser_has_cycle(decl: A.ParserDecl) -> bool:
    """Whether the parser's states can loop (a header stack's ``next``, a TLV walk)."""
    succ = {s.name: set(state_targets(s)) for s in decl.states}
    color: dict[str, int] = {}

    def visit(n: str) -> bool:
        color[n] = 1
        for m in succ.get(n, ()):
            if color.get(m) == 1 or (m not in color and visit(m)):
                return True
        color[n] = 2
        return False

    return any(visit(n) for n in list(succ) if n not in color)
