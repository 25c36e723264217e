"""Tables: keys and their match kinds, the action list, the default action, entries
(keysets typed against the keys, actions from the list with all their arguments,
priorities), the size and the v1model properties (``implementation``, ``counters``,
``meters``, ``support_timeout``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from switch.frontend import ast as A
from switch.frontend import types as T
from switch.frontend.check import fold_constants as F
from switch.frontend.check.check_calls import chk_writable, constructor_args, is_ctor_param
from switch.frontend.check.check_expressions import is_unknown, unknown
from switch.frontend.check.check_extern_types import check_extern_instance
from switch.frontend.check.check_keysets import keyset_element
from switch.frontend.check.context import ActionType, annotation
from switch.frontend.check.key_names import key_name
from switch.frontend.check.print_expressions import expr_text

if TYPE_CHECKING:
    from switch.frontend.check.check_types import Checker

KEY_TYPES = (T.Bits, T.SerEnum, T.Error, T.Bool, T.Enum)
PRIORITY_FREE_KINDS = ("exact", "lpm")
PROPERTY_EXTERNS = {
    "implementation": ("action_profile", "action_selector"),
    "counters": ("direct_counter",),
    "meters": ("direct_meter",),
}


def check_table(chk: Checker, t: A.TableDecl) -> None:
    with chk.inside(table=t):
        key_types = [_key(chk, k) for k in t.keys]
        listed = _action_list(chk, t)
        if t.default_action is not None:
            _default_action(chk, t, listed)
        if t.size is not None and is_ctor_param(chk.expr(t.size)):
            pass  # known when the control is instantiated
        elif t.size is not None:
            size = chk.const_expr(t.size)
            t.size = size
            if isinstance(size, A.IntLit):
                t.size = F.int_lit(size.value, T.InfInt(), size.pos, size.text)
                if size.value < 0:
                    chk.error_at(size, f"{chk.text(size)}: table size must not be negative")
            elif not is_unknown(size.type) and F.is_constant(size):
                chk.error_at(size, f"{chk.text(size)}: table size must be an integer")
        if t.largest_priority_wins is not None:
            v = chk.const_expr(t.largest_priority_wins)
            if not is_unknown(v.type) and not isinstance(v, A.BoolLit):
                chk.error_at(v, f"{chk.text(v)}: largest_priority_wins must be a bool")
            t.largest_priority_wins = v
        if t.priority_delta is not None:
            v = chk.const_expr(t.priority_delta)
            if isinstance(v, A.IntLit):
                if v.value <= 0:
                    chk.error_at(v, f"{chk.text(v)} must be a positive value")
                v = F.int_lit(v.value, T.InfInt(), v.pos, v.text)
            t.priority_delta = v
        for prop in t.properties:
            _property(chk, t, prop)
        if t.entries:
            _entries(chk, t, key_types, listed)


def _key(chk: Checker, k: A.KeyElement) -> T.Type | None:
    e = chk.expr(k.expr)
    k.expr = e
    if k.match_kind not in chk.ctx.match_kinds:
        pos = chk.ctx.find_after(k.pos, r":\s*(" + k.match_kind + r")\b", 1)
        chk.ctx.error(pos, f"{k.match_kind}: declaration not found", len(k.match_kind))
    if is_unknown(e.type):
        return None
    t = e.type
    while isinstance(t, T.NewType):
        t = t.underlying
    if not isinstance(t, KEY_TYPES):
        chk.error_at(e, f"Key {chk.text(e)} field type must be a scalar type; it cannot be "
                     f"{e.type}")
        return None
    if F.is_constant(e):
        chk.ctx.warning(k.pos, f"{chk.text(e)}: {k.match_kind}: constant key element",
                        len(chk.text(e)))
    if key_name(k) is None:
        chk.ctx.error(e.pos, f"{chk.text(e)}: Complex key expression requires a @name "
                      "annotation", len(chk.text(e)), kind="expected")
    return e.type


# ------------------------------------------------------------------- actions


def _resolve_action(chk: Checker, ref: A.ActionRef) -> A.ActionDecl | None:
    name = ref.name
    decl = name.decl if isinstance(name, A.Name) else None
    if decl is None:
        return None  # reported by name resolution
    if not isinstance(decl, A.ActionDecl):
        chk.error_at(name, f"{chk.text(name)} is not an action")
        return None
    name.type = ActionType(decl.name)
    ref.action = decl
    return decl


def _action_list(chk: Checker, t: A.TableDecl) -> dict[int, A.ActionRef]:
    listed: dict[int, A.ActionRef] = {}
    for ref in t.actions:
        decl = _resolve_action(chk, ref)
        if decl is None:
            continue
        if id(decl) in listed:
            chk.error_at(ref.name, f"{chk.text(ref.name)}: action listed twice")
            continue
        listed[id(decl)] = ref
        _bind_action_args(chk, ref, decl, in_list=True)
    return listed


def _bind_action_args(chk: Checker, ref: A.ActionRef, decl: A.ActionDecl, in_list: bool) -> bool:
    """Check an action's arguments in a table: in the action list only data-plane
    parameters may be bound; as default action or entry action every parameter is
    bound, and the control-plane ones with compile-time constants."""
    params = decl.params
    slots: list[A.Argument | None] = [None] * len(params)
    position = 0
    for a in ref.args:
        if a.name:
            idx = next((i for i, p in enumerate(params) if p.name == a.name), -1)
            if idx < 0:
                chk.ctx.error(a.pos, f"{decl.name}: no parameter named {a.name}", len(a.name))
                return False
        else:
            idx = position
            position += 1
        if idx >= len(params):
            chk.error_at(ref.name, f"{chk.text(ref.name)}: Too many arguments for action")
            return False
        slots[idx] = a
    ok = True
    for p, slot in zip(params, slots, strict=False):
        if slot is None:
            if p.default is not None or (in_list and p.direction == ""):
                continue
            if in_list:
                chk.error_at(ref.name, f"{chk.text(ref.name)}: Parameter {p.name} must be bound")
            else:
                chk.error_at(ref.name, f"{chk.text(ref.name)}: parameter {p.name} does not "
                             "have a corresponding argument")
            ok = False
            continue
        if slot.value is None:
            chk.ctx.error(slot.pos, f"{decl.name}: parameter {p.name} needs a value")
            ok = False
            continue
        pt = chk.resolve(p.type_ref)
        v = chk.expr(slot.value)
        if p.direction == "":
            if in_list:
                chk.error_at(v, f"{chk.text(v)}: parameter {p.name} cannot be bound: it is set "
                             "by the control plane")
                ok = False
                continue
            v = chk.coerce(v, pt)
            if not F.is_constant(v) and not is_unknown(v.type):
                chk.error_at(v, f"{chk.text(v)}: action argument must be a compile-time "
                             "constant")
                ok = False
        elif p.direction in ("out", "inout"):
            chk_writable(chk, v, f"{p.direction} argument")
            if not is_unknown(v.type, pt) and v.type != pt:
                chk.error_at(v, f"{chk.text(v)}: cannot pass a value of type '{v.type}' as "
                             f"parameter '{p.name}' of type '{pt}'")
                ok = False
        else:
            v = chk.coerce(v, pt)
        slot.value = v
    return ok


def _default_action(chk: Checker, t: A.TableDecl, listed: dict[int, A.ActionRef]) -> None:
    ref = t.default_action
    assert ref is not None
    decl = _resolve_action(chk, ref)
    if decl is None:
        return
    entry = listed.get(id(decl))
    if entry is None:
        chk.error_at(ref.name, f"{chk.text(ref.name)} not present in action list")
        return
    if annotation(entry.annotations, "tableonly") is not None:
        chk.error_at(ref.name, f"{chk.text(ref.name)}: Action marked with @tableonly used as "
                     "default action")
    _bind_action_args(chk, ref, decl, in_list=False)


# ------------------------------------------------------------------- entries


def _entries(
    chk: Checker, t: A.TableDecl, key_types: list[T.Type | None], listed: dict[int, A.ActionRef]
) -> None:
    if not t.keys:
        chk.ctx.error(t.entries[0].pos, f"Entries cannot be specified for a table with no key "
                      f"{t.name}")
        return
    kinds = [k.match_kind for k in t.keys]
    # ``priority = N:`` (not the older ``@priority(N)``, which p4c-bm2-ss takes)
    written = [e for e in t.entries
               if e.priority is not None and annotation(e.annotations, "priority") is None]
    if t.entries_const and written:
        first = written[0]
        where = first.keys[0].pos if first.keys else first.pos
        chk.ctx.error(where, "Entry: Table with 'const' entries cannot have priorities",
                      kind="invalid")
    for entry in t.entries:
        keys = entry.keys
        if len(keys) == 1 and len(t.keys) > 1 and isinstance(keys[0], (A.DefaultExpr,
                                                                       A.DontCare)):
            keys = [A.DefaultExpr(keys[0].pos) for _ in t.keys]
        if len(keys) != len(t.keys):
            where = keys[0].pos if keys else entry.pos
            chk.ctx.error(where, f"Size of entry keyset ({len(keys)}) must match the table key "
                          f"set size ({len(t.keys)})")
            continue
        checked = []
        for k, kt, kind in zip(keys, key_types, kinds, strict=False):
            if kt is None:
                checked.append(k)
                continue
            v = keyset_element(chk, k, kt, "entries")
            _check_match_kind(chk, v, kt, kind)
            checked.append(v)
        entry.keys = checked
        decl = _resolve_action(chk, entry.action)
        if decl is not None:
            listed_ref = listed.get(id(decl))
            if listed_ref is None:
                chk.error_at(entry.action.name, f"{chk.text(entry.action.name)} not present in "
                             "action list")
            else:
                if annotation(listed_ref.annotations, "defaultonly") is not None:
                    chk.error_at(entry.action.name, f"{chk.text(entry.action.name)}: Action "
                                 "marked with @defaultonly used in table")
                _bind_action_args(chk, entry.action, decl, in_list=False)
        if entry.priority is None:
            entry.priority = _priority_annotation(entry)
        if entry.priority is not None:
            p = chk.const_expr(entry.priority)
            if isinstance(p, A.IntLit):
                if p.value < 0:
                    chk.error_at(p, f"{chk.text(p)}: priority must not be negative")
                p = F.int_lit(p.value, T.InfInt(), p.pos, p.text)
            entry.priority = p
    _assign_priorities(chk, t)


def _priority_annotation(entry: A.TableEntry) -> A.Expr | None:
    """The older ``@priority(N)`` form of an entry priority."""
    a = annotation(entry.annotations, "priority")
    if a is None or not a.body:
        return None
    return a.body[0]


def _check_match_kind(chk: Checker, v: A.Expr, kt: T.Type, kind: str) -> None:
    if is_unknown(v.type):
        return
    is_default = isinstance(v, A.DefaultExpr)
    op = v.op if isinstance(v, A.Binary) else None
    allowed = {
        "exact": (False, ()),
        "lpm": (True, ("&&&",)),
        "ternary": (True, ("&&&",)),
        "range": (True, ("..",)),
        "optional": (True, ()),
    }.get(kind)
    if allowed is None:
        chk.error_at(v, f"{chk.text(v)}: entries cannot match a key of kind {kind}")
        return
    default_ok, ops = allowed
    if (is_default and not default_ok) or (op is not None and op not in ops):
        chk.error_at(v, f"{chk.text(v)}: not a valid keyset for a key of match kind {kind}")
        return
    if kind == "lpm" and op == "&&&" and isinstance(v, A.Binary):
        mask = v.right
        if isinstance(mask, A.IntLit) and isinstance(kt, T.Bits):
            m = F.unsigned(mask.value, kt.width)
            inverted = ~m & ((1 << kt.width) - 1)
            if inverted & (inverted + 1):
                chk.error_at(mask, f"{chk.text(mask)}: lpm mask must be a prefix mask")


def _assign_priorities(chk: Checker, t: A.TableDecl) -> None:
    """Give every entry a priority the way p4c does: when none is written, the first
    entry gets the highest (with ``largest_priority_wins``, the default) and each next
    one ``priority_delta`` less; when some are written, unwritten ones continue from
    the previous entry. A larger value wins unless ``largest_priority_wins = false``."""
    entries = t.entries
    written = [e for e in entries if e.priority is not None]
    largest = not (isinstance(t.largest_priority_wins, A.BoolLit)
                   and not t.largest_priority_wins.value)
    delta = 1
    if isinstance(t.priority_delta, A.IntLit) and t.priority_delta.value > 0:
        delta = t.priority_delta.value
    if not written:
        current = 1
        order = range(len(entries) - 1, -1, -1) if largest else range(len(entries))
        for i in order:
            entries[i].priority = F.int_lit(current, T.InfInt(), entries[i].pos)
            current += delta
        return
    if all(k.match_kind in PRIORITY_FREE_KINDS for k in t.keys):
        chk.ctx.error(written[0].pos, f"{t.name}: key match type does not require priorities, "
                      "but some are specified")
        return
    current = 0
    for i, entry in enumerate(entries):
        if isinstance(entry.priority, A.IntLit):
            current = entry.priority.value
        elif entry.priority is None:
            if i == 0:
                chk.ctx.error(entry.pos, f"{t.name}: entry must have a priority")
                return
            entry.priority = F.int_lit(current, T.InfInt(), entry.pos)
        else:
            return
        current = current - delta if largest else current + delta
        if current < 0:
            current = 0


# ---------------------------------------------------------------- properties


def _property(chk: Checker, t: A.TableDecl, prop: A.TableProperty) -> None:
    name = prop.name
    if name == "support_timeout":
        v = chk.const_expr(prop.value)
        if not is_unknown(v.type) and not isinstance(v, A.BoolLit):
            chk.error_at(v, f"{chk.text(v)}: support_timeout must be a bool")
        prop.value = v
        return
    kinds = PROPERTY_EXTERNS.get(name)
    if kinds is None:
        # p4c-bm2-ss ignores a property it does not know, with a warning
        chk.ctx.warning(prop.pos, f"Unknown table property: {name}", len(name), "ignore-prop")
        prop.value = chk.expr(prop.value)
        return
    value = prop.value
    if isinstance(value, A.Call) and isinstance(value.callee, A.Name) and isinstance(
        value.callee.decl, A.ExternDecl
    ):
        inst = _inline_instance(chk, t, prop, value)
        if inst is None:
            return
        extern = inst.type
    else:
        v = chk.expr(value)
        prop.value = v
        if is_unknown(v.type):
            return
        decl = v.decl if isinstance(v, A.Name) else None
        if not isinstance(decl, A.Instantiation):
            chk.error_at(v, f"{chk.text(v)}: {name} must name an instance of "
                         f"{' or '.join(kinds)}")
            return
        extern = decl.type
    if not isinstance(extern, T.Extern) or extern.name not in kinds:
        chk.error_at(prop.value, f"{chk.text(prop.value)}: {name} must be an instance of "
                     f"{' or '.join(kinds)}, not {extern}")


def _inline_instance(
    chk: Checker, t: A.TableDecl, prop: A.TableProperty, call: A.Call
) -> A.Instantiation | None:
    """``implementation = action_profile(128)``: an anonymous instance, checked like a
    declared one; instantiation names it after the table (or the property's @name)."""
    assert isinstance(call.callee, A.Name)
    ref = A.NamedTypeRef(call.callee.pos, call.callee.name, list(call.type_args))
    chk.ctx.type_decls[id(ref)] = call.callee.decl
    inst = A.Instantiation(call.pos, t.name, ref, call.args, annotations=list(prop.annotations))
    et = chk.resolve(ref)
    if is_unknown(et):
        return None
    args = constructor_args(chk, call, et, expr_text(call.callee))
    if args is None:
        unknown(call)
        return None
    if isinstance(et, T.Extern):
        check_extern_instance(chk, ref, et, args)
    chk.ctx.ctor_args[id(inst)] = args
    call.type = et
    call.callee.type = et
    inst.type = et
    chk.ctx.inline_instances[id(prop)] = inst
    chk.ctx.owners[id(inst)] = chk.block
    return inst
