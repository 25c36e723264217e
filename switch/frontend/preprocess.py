"""C preprocessor for P4 sources, behaving like the ``cpp`` run that p4c does.

The output keeps a strict line correspondence: every output line has exactly
one origin ``(file, line)``.  Comments become whitespace (a multi-line block
comment becomes blank lines), directives and skipped conditional groups become
blank lines, and an included file's lines are spliced in with their own
origins.  Later compiler stages report diagnostics on output lines and map them
back through :meth:`Preprocessed.origin`.

Macro expansion follows the classic hide-set algorithm (Prosser's), which is
what gives cpp its rules: a macro is never re-expanded inside its own
expansion, arguments are fully expanded before substitution except next to
``#`` and ``##``, and a function-like macro name not followed by ``(`` is left
alone.  As in the ``assembler-with-cpp`` mode p4c uses, ``'`` is an ordinary
character and a paste that does not form one token leaves the two tokens side
by side instead of failing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "MAX_INCLUDE_DEPTH",
    "SYSTEM_INCLUDE_DIR",
    "PreprocessError",
    "Preprocessed",
    "SourceLine",
    "preprocess",
    "preprocess_text",
]

SYSTEM_INCLUDE_DIR: Path = Path(__file__).parent / "include"
MAX_INCLUDE_DEPTH = 64

_CMDLINE = "<command-line>"


# --------------------------------------------------------------------------
# Public result and error types
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceLine:
    """A position in an original source file (``line`` is 1-based)."""

    file: str
    line: int


@dataclass
class Preprocessed:
    """Preprocessor output plus the map from output lines to source lines."""

    text: str
    origins: list[SourceLine]
    warnings: list[str] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def origin(self, line: int) -> SourceLine:
        """Origin of 1-based output ``line``.

        A line just past the end (where an "unexpected end of input" error is
        usually reported) maps to the origin of the last line.
        """
        if line < 1 or not self.origins:
            raise IndexError(f"output line {line} out of range")
        return self.origins[min(line, len(self.origins)) - 1]

    def source_line(self, line: int) -> str:
        """Original text of the source line that output ``line`` came from."""
        where = self.origin(line)
        lines = self.sources.get(where.file, [])
        if 1 <= where.line <= len(lines):
            return lines[where.line - 1]
        return ""


class PreprocessError(Exception):
    """A preprocessing error at a source position, formatted like p4c."""

    def __init__(self, file: str, line: int | None, message: str, col: int | None = None) -> None:
        self.file = file
        self.line = line
        self.col = col
        self.message = message
        super().__init__(str(self))

    def __reduce__(self) -> tuple[type[PreprocessError], tuple[str, int | None, str, int | None]]:
        return (PreprocessError, (self.file, self.line, self.message, self.col))

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}({self.line}): error: {self.message}"
        return f"{self.file}: error: {self.message}"


class _MacroError(Exception):
    """Raised deep inside expansion; converted to PreprocessError at the line."""


# --------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------

_WS, _ID, _NUM, _STR, _PUNCT = "ws", "id", "num", "str", "punct"
_MARK = "mark"  # placemarker: an empty operand of ##, gone after substitution
_EMPTY: frozenset[str] = frozenset()

_TOKEN_RE = re.compile(
    r"""
      (?P<ws>\s+)
    | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<num>\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*)
    | (?P<str>"(?:[^"\\]|\\.)*"?)
    | (?P<punct>\.\.\.|<<=|>>=|\#\#|->|\+\+|--|<<|>>|&&|\|\||[-+*/%&|^!=<>]=|.)
    """,
    re.VERBOSE | re.DOTALL,
)
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Tok:
    """A preprocessing token.

    ``hide`` is the set of macro names that must not expand this token;
    ``avoid`` marks a token that starts a new expansion and may need a space
    before it so that it does not merge with the previous token on output.
    """

    __slots__ = ("kind", "text", "hide", "avoid")

    def __init__(self, kind: str, text: str, hide: frozenset[str] = _EMPTY) -> None:
        self.kind = kind
        self.text = text
        self.hide = hide
        self.avoid = False

    def is_punct(self, text: str) -> bool:
        return self.kind == _PUNCT and self.text == text

    def copy(self, hs: frozenset[str]) -> _Tok:
        return _Tok(self.kind, self.text, (self.hide | hs) if self.hide else hs)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"_Tok({self.kind}, {self.text!r})"


def _tokenize(text: str) -> list[_Tok]:
    return [_Tok(m.lastgroup or _PUNCT, m.group()) for m in _TOKEN_RE.finditer(text)]


def _skip_ws(toks: Sequence[_Tok], i: int) -> int:
    n = len(toks)
    while i < n and toks[i].kind == _WS:
        i += 1
    return i


def _strip_ws(toks: list[_Tok]) -> list[_Tok]:
    lo, hi = 0, len(toks)
    while lo < hi and toks[lo].kind == _WS:
        lo += 1
    while hi > lo and toks[hi - 1].kind == _WS:
        hi -= 1
    return toks[lo:hi]


def _would_merge(left: str, right: str) -> bool:
    """True if writing ``right`` straight after ``left`` would lex differently."""
    joined = left + right
    if joined[len(left) - 1 : len(left) + 1] in ("//", "/*"):
        return True
    m = _TOKEN_RE.match(joined)
    return m is not None and m.end() != len(left)


def _render(toks: list[_Tok]) -> str:
    parts: list[str] = []
    prev: _Tok | None = None
    prev_ws = True
    for t in toks:
        if t.kind == _WS:
            parts.append(t.text)
            prev_ws = True
            continue
        if t.avoid and prev is not None and not prev_ws and _would_merge(prev.text, t.text):
            parts.append(" ")
        parts.append(t.text)
        prev = t
        prev_ws = False
    return "".join(parts)


# --------------------------------------------------------------------------
# Splitting a file into logical lines
# --------------------------------------------------------------------------


@dataclass(slots=True)
class _Line:
    """A logical line: text with comments blanked and continuations joined."""

    text: str
    first: int  # first physical line, 1-based
    last: int  # last physical line it spans
    is_directive: bool


_SCAN_RE = re.compile(r'["/\\\n]')
_SPLICE_RE = re.compile(r"\\[ \t]*\n")  # cpp also accepts blanks before the newline
_STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_STRING_END_RE = re.compile(r'(?:[^"\\\n]|\\.)*"')


def _normalize(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _starts_directive(buf: list[str], from_comment: bool) -> bool:
    return not from_comment and "".join(buf).lstrip().startswith("#")


def _make_line(buf: list[str], first: int, last: int, from_comment: bool) -> _Line:
    text = "".join(buf)
    return _Line(text, first, last, not from_comment and text.lstrip().startswith("#"))


def _split_lines(text: str, fname: str) -> list[_Line]:
    """Split normalized ``text`` into logical lines.

    Comments inside a line are replaced by spaces so that columns stay put.  A
    block comment spanning lines ends a text line (the text after it stays on
    its own physical line, marked so it cannot start a directive) but
    continues a directive line, as cpp treats the comment as one space.
    """
    lines: list[_Line] = []
    buf: list[str] = []
    first = phys = 1
    line_pos = 0
    from_comment = False
    in_string = False  # inside a string literal that goes on over lines
    i, n = 0, len(text)
    search = _SCAN_RE.search
    while i < n:
        if in_string and text[i] != "\n":
            # the rest of a string literal is kept as it is, '//' and '/*' included
            # (p4c runs cpp with -C, which keeps comments, and its lexer reads the string)
            em = _STRING_END_RE.match(text, i)
            k = em.end() if em is not None else text.find("\n", i)
            k = n if k < 0 else k
            in_string = em is None
            buf.append(text[i:k])
            i = k
            continue
        m = search(text, i)
        if m is None:
            buf.append(text[i:])
            break
        j = m.start()
        if j > i:
            buf.append(text[i:j])
        c = text[j]
        if c == "\n":
            lines.append(_make_line(buf, first, phys, from_comment))
            buf = []
            phys += 1
            first = phys
            line_pos = j + 1
            from_comment = False
            i = j + 1
        elif c == "\\":
            sp = _SPLICE_RE.match(text, j)
            if sp is not None:
                phys += 1
                line_pos = i = sp.end()
            else:
                buf.append("\\")
                i = j + 1
        elif c == '"':
            sm = _STRING_RE.match(text, j)
            if sm is not None:
                buf.append(sm.group())
                i = sm.end()
            else:
                k = text.find("\n", j)
                k = n if k < 0 else k
                buf.append(text[j:k])
                i = k
                in_string = True
        elif text.startswith("/", j + 1):
            k = j
            while True:  # a line comment continues over spliced lines
                k = text.find("\n", k)
                if k < 0:
                    k = n
                    break
                back = k - 1
                while back > j and text[back] in " \t":
                    back -= 1
                if text[back] != "\\":
                    break
                phys += 1
                line_pos = k + 1
                k += 1
            i = k
        elif text.startswith("*", j + 1):
            k = text.find("*/", j + 2)
            if k < 0:
                raise PreprocessError(fname, phys, "unterminated comment", j - line_pos + 1)
            nl = text.count("\n", j, k)
            if nl == 0:
                buf.append(" " * (k + 2 - j))
            elif _starts_directive(buf, from_comment):
                buf.append(" ")
                phys += nl
                line_pos = text.rfind("\n", j, k) + 1
            else:
                lines.append(_make_line(buf, first, phys, from_comment))
                lines.extend(_Line("", p, p, False) for p in range(phys + 1, phys + nl))
                phys += nl
                first = phys
                line_pos = text.rfind("\n", j, k) + 1
                buf = [" " * (k + 2 - line_pos)]
                from_comment = True
            i = k + 2
        else:
            buf.append("/")
            i = j + 1
    # an unterminated last line, or one whose newline a final splice ate
    total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if (lines[-1].last if lines else 0) < total:
        lines.append(_make_line(buf, first, total, from_comment))
    return lines


# --------------------------------------------------------------------------
# Macros
# --------------------------------------------------------------------------


@dataclass
class _Macro:
    name: str
    params: tuple[str, ...] | None  # None for object-like macros
    variadic: bool
    body: list[_Tok]
    pindex: dict[str, int] = field(init=False)
    has_paste: bool = field(init=False)

    def __post_init__(self) -> None:
        self.pindex = {p: i for i, p in enumerate(self.params or ())}
        self.has_paste = any(t.is_punct("##") for t in self.body)

    def same_as(self, other: _Macro) -> bool:
        return (
            self.params == other.params
            and self.variadic == other.variadic
            and [(t.kind, t.text) for t in self.body] == [(t.kind, t.text) for t in other.body]
        )


_BUILTINS = frozenset({"__FILE__", "__LINE__", "__COUNTER__"})


def _parse_define(toks: list[_Tok]) -> _Macro:
    """Parse the tokens after ``#define``; raises _MacroError on bad syntax."""
    i = _skip_ws(toks, 0)
    if i >= len(toks):
        raise _MacroError("no macro name given in #define directive")
    if toks[i].kind != _ID:
        raise _MacroError("macro names must be identifiers")
    name = toks[i].text
    if name == "defined":
        raise _MacroError('"defined" cannot be used as a macro name')
    i += 1
    params: list[str] | None = None
    variadic = False
    if i < len(toks) and toks[i].is_punct("("):
        params, variadic, i = _parse_params(toks, i + 1)
    body: list[_Tok] = []
    for t in _strip_ws(toks[i:]):
        if t.kind == _WS:
            t = _Tok(_WS, " ")
        elif t.is_punct("##"):  # like cpp, "a ## ## b" pastes once
            prev = next((b for b in reversed(body) if b.kind != _WS), None)
            if prev is not None and prev.is_punct("##"):
                continue
        body.append(t)
    while body and body[-1].kind == _WS:
        body.pop()
    if body and (body[0].is_punct("##") or body[-1].is_punct("##")):
        raise _MacroError("'##' cannot appear at either end of a macro expansion")
    return _Macro(name, tuple(params) if params is not None else None, variadic, body)


def _parse_params(toks: list[_Tok], i: int) -> tuple[list[str], bool, int]:
    params: list[str] = []
    n = len(toks)
    i = _skip_ws(toks, i)
    if i < n and toks[i].is_punct(")"):
        return params, False, i + 1
    while True:
        i = _skip_ws(toks, i)
        if i >= n:
            raise _MacroError("missing ')' in macro parameter list")
        t = toks[i]
        variadic = False
        if t.is_punct("..."):
            params.append("__VA_ARGS__")
            variadic = True
        elif t.kind == _ID:
            if t.text == "__VA_ARGS__":
                raise _MacroError(
                    "__VA_ARGS__ can only appear in the expansion of a variadic macro"
                )
            if t.text in params:
                raise _MacroError(f'duplicate macro parameter "{t.text}"')
            params.append(t.text)
            j = _skip_ws(toks, i + 1)
            if j < n and toks[j].is_punct("..."):
                variadic = True
                i = j
        else:
            raise _MacroError(f'expected parameter name, found "{t.text}"')
        i = _skip_ws(toks, i + 1)
        if i >= n:
            raise _MacroError("missing ')' in macro parameter list")
        t = toks[i]
        if t.is_punct(")"):
            return params, variadic, i + 1
        if variadic:
            raise _MacroError("missing ')' after \"...\"")
        if not t.is_punct(","):
            raise _MacroError(f"expected ',' or ')', found \"{t.text}\"")
        i += 1


def _stringize(arg: list[_Tok], hs: frozenset[str]) -> _Tok:
    parts: list[str] = []
    space = False
    for t in arg:
        if t.kind == _WS:
            space = bool(parts)
            continue
        if space:
            parts.append(" ")
            space = False
        parts.append(t.text.replace("\\", "\\\\").replace('"', '\\"') if t.kind == _STR else t.text)
    return _Tok(_STR, '"' + "".join(parts) + '"', hs)


def _paste(left: _Tok, right: _Tok, hs: frozenset[str]) -> list[_Tok]:
    """Paste two tokens; if they do not form one token, keep both (asm-mode cpp)."""
    if left.kind == _MARK:
        return [right]
    if right.kind == _MARK:
        return [left]
    toks = _tokenize(left.text + right.text)
    if len(toks) != 1:
        toks = [left, right]
    return [_Tok(t.kind, t.text, hs) for t in toks]


# --------------------------------------------------------------------------
# #if expressions
# --------------------------------------------------------------------------

_MASK64 = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1
_INT_RE = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)([A-Za-z0-9_.]*)")
_INT_SUFFIX_RE = re.compile(r"(?:[uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)?")
_BINARY_PREC = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8,
    "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Val:
    """A #if value: cpp computes in intmax_t or uintmax_t (64 bits here)."""

    v: int
    unsigned: bool = False

    @staticmethod
    def make(v: int, unsigned: bool) -> _Val:
        if unsigned:
            return _Val(v & _MASK64, True)
        return _Val(((v + (1 << 63)) & _MASK64) - (1 << 63), False)


def _parse_int(text: str) -> _Val:
    m = _INT_RE.fullmatch(text)
    if m is None:
        raise _MacroError("floating constant in preprocessor expression")
    digits, suffix = m.group(1), m.group(2)
    is_hex = digits[:2] in ("0x", "0X")
    if (
        "." in suffix
        or (not is_hex and suffix[:1] in ("e", "E"))
        or (is_hex and suffix[:1] in ("p", "P"))
    ):
        raise _MacroError("floating constant in preprocessor expression")
    if not _INT_SUFFIX_RE.fullmatch(suffix):
        raise _MacroError(f'invalid suffix "{suffix}" on integer constant')
    if is_hex:
        value = int(digits[2:], 16)
    elif digits[:2] in ("0b", "0B"):
        value = int(digits[2:], 2)
    elif len(digits) > 1 and digits[0] == "0":
        bad = next((d for d in digits if d in "89"), None)
        if bad is not None:
            raise _MacroError(f'invalid digit "{bad}" in octal constant')
        value = int(digits, 8)
    else:
        value = int(digits)
    unsigned = "u" in suffix.lower() or value > _INT64_MAX
    return _Val.make(value, unsigned)


class _ExprParser:
    """Recursive-descent evaluator for #if; ``ev`` is False in skipped operands."""

    def __init__(self, toks: list[_Tok], directive: str) -> None:
        self.toks = [t for t in toks if t.kind != _WS]
        self.pos = 0
        self.directive = directive

    def _peek(self) -> _Tok | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def _peek_op(self) -> str | None:
        t = self._peek()
        return t.text if t is not None and t.kind == _PUNCT else None

    def evaluate(self) -> bool:
        if not self.toks:
            raise _MacroError(f"#{self.directive} with no expression")
        v = self._comma(True)
        t = self._peek()
        if t is not None:
            if t.is_punct(")"):
                raise _MacroError("missing '(' in expression")
            raise _MacroError(f'missing binary operator before token "{t.text}"')
        return v.v != 0

    def _comma(self, ev: bool) -> _Val:
        v = self._cond(ev)
        while self._peek_op() == ",":
            self.pos += 1
            v = self._cond(ev)
        return v

    def _cond(self, ev: bool) -> _Val:
        c = self._binary(1, ev)
        if self._peek_op() != "?":
            return c
        self.pos += 1
        taken = c.v != 0
        a = self._comma(ev and taken)
        if self._peek_op() != ":":
            raise _MacroError("'?' without following ':'")
        self.pos += 1
        b = self._cond(ev and not taken)
        return _Val.make((a if taken else b).v, a.unsigned or b.unsigned)

    def _binary(self, min_prec: int, ev: bool) -> _Val:
        lhs = self._unary(ev)
        while True:
            op = self._peek_op() or ""
            prec = _BINARY_PREC.get(op)
            if prec is None or prec < min_prec:
                return lhs
            self.pos += 1
            if op == "&&":
                rhs = self._binary(prec + 1, ev and lhs.v != 0)
                lhs = _Val(int(lhs.v != 0 and rhs.v != 0))
            elif op == "||":
                rhs = self._binary(prec + 1, ev and lhs.v == 0)
                lhs = _Val(int(lhs.v != 0 or rhs.v != 0))
            else:
                rhs = self._binary(prec + 1, ev)
                lhs = self._apply(op, lhs, rhs, ev)

    def _unary(self, ev: bool) -> _Val:
        t = self._peek()
        if t is None:
            prev = self.toks[self.pos - 1].text
            raise _MacroError(f"operator '{prev}' has no right operand")
        self.pos += 1
        if t.kind == _NUM:
            return _parse_int(t.text)
        if t.kind == _ID:
            return _Val(0)  # identifiers left after expansion are 0
        if t.kind == _PUNCT:
            if t.text in ("+", "-", "~", "!"):
                v = self._unary(ev)
                if t.text == "-":
                    return _Val.make(-v.v, v.unsigned)
                if t.text == "~":
                    return _Val.make(~v.v, v.unsigned)
                if t.text == "!":
                    return _Val(int(v.v == 0))
                return v
            if t.text == "(":
                if self._peek_op() == ")":
                    raise _MacroError("missing expression between '(' and ')'")
                v = self._comma(ev)
                if self._peek_op() != ")":
                    raise _MacroError("missing ')' in expression")
                self.pos += 1
                return v
            if t.text in _BINARY_PREC or t.text in ("?", ":", ","):
                raise _MacroError(f"operator '{t.text}' has no left operand")
        raise _MacroError(f'token "{t.text}" is not valid in preprocessor expressions')

    @staticmethod
    def _apply(op: str, a: _Val, b: _Val, ev: bool) -> _Val:
        if op in ("<<", ">>"):
            shift = b.v if op == "<<" else -b.v
            shift = max(-65, min(65, shift))
            r = a.v << shift if shift >= 0 else a.v >> -shift
            return _Val.make(r, a.unsigned)
        unsigned = a.unsigned or b.unsigned
        x = a.v & _MASK64 if unsigned else a.v
        y = b.v & _MASK64 if unsigned else b.v
        if op == "==":
            return _Val(int(x == y))
        if op == "!=":
            return _Val(int(x != y))
        if op == "<":
            return _Val(int(x < y))
        if op == ">":
            return _Val(int(x > y))
        if op == "<=":
            return _Val(int(x <= y))
        if op == ">=":
            return _Val(int(x >= y))
        if op in ("/", "%"):
            if y == 0:
                if ev:
                    raise _MacroError("division by zero in #if")
                return _Val(0, unsigned)
            q = abs(x) // abs(y)
            if (x < 0) != (y < 0):
                q = -q
            return _Val.make(q if op == "/" else x - y * q, unsigned)
        result = {
            "+": lambda: x + y,
            "-": lambda: x - y,
            "*": lambda: x * y,
            "&": lambda: x & y,
            "|": lambda: x | y,
            "^": lambda: x ^ y,
        }[op]()
        return _Val.make(result, unsigned)


# --------------------------------------------------------------------------
# The preprocessor proper
# --------------------------------------------------------------------------


@dataclass
class _Cond:
    """One open #if group."""

    directive: str  # the latest directive of the group, for error messages
    line: int  # line of the opening directive
    parent_active: bool
    taken: bool  # some branch of the group has been selected
    else_seen: bool = False


@dataclass
class _FileCtx:
    display: str
    dir: Path
    lines: list[_Line]
    depth: int
    i: int = 0
    active: bool = True
    conds: list[_Cond] = field(default_factory=list)
    # include-guard detection: 0 = nothing seen, 1 = inside the candidate
    # guard, 2 = guard closed, -1 = file is not guarded as a whole
    guard_state: int = 0
    guard_name: str = ""


class _Feed:
    """Gives the expander following text lines when a macro call spans lines."""

    def __init__(self, ctx: _FileCtx) -> None:
        self.ctx = ctx

    def pull(self) -> list[_Tok] | None:
        ctx = self.ctx
        if ctx.i >= len(ctx.lines) or ctx.lines[ctx.i].is_directive:
            return None
        ctx.i += 1
        return [_Tok(_WS, " ")] + _tokenize(ctx.lines[ctx.i - 1].text)

    def pull_if_paren(self) -> list[_Tok] | None:
        """Pull lines up to the next non-blank one if it starts with ``(``."""
        ctx, j = self.ctx, self.ctx.i
        lines = ctx.lines
        while j < len(lines) and not lines[j].is_directive and not lines[j].text.strip():
            j += 1
        if j >= len(lines) or lines[j].is_directive or not lines[j].text.lstrip().startswith("("):
            return None
        toks: list[_Tok] = []
        for k in range(ctx.i, j + 1):
            toks.append(_Tok(_WS, " "))
            toks.extend(_tokenize(lines[k].text))
        ctx.i = j + 1
        return toks


_CONDITIONALS = frozenset({"if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif"})
_IGNORED = frozenset({"line", "ident", "sccs", "assert", "unassert"})
_DIRECTIVE_RE = re.compile(r"#\s*([A-Za-z_][A-Za-z0-9_]*|[0-9]+)?")


class _Preprocessor:
    def __init__(
        self, include_dirs: Sequence[Path | str], defines: Mapping[str, str | None] | None
    ) -> None:
        self.include_dirs = [Path(d) for d in include_dirs]
        self.macros: dict[str, _Macro] = {}
        self.once: set[str] = set()
        self.guards: dict[str, str] = {}
        self.cache: dict[str, list[_Line]] = {}
        self.sources: dict[str, list[str]] = {}
        self.out: list[str] = []
        self.origins: list[SourceLine] = []
        self.warnings: list[str] = []
        self.counter = 0
        self.cur_file = _CMDLINE
        self.cur_line = 0
        for name, value in (defines or {}).items():
            self._define_cmdline(name, value)

    # -- entry points --------------------------------------------------

    def run(self, text: str, display: str) -> Preprocessed:
        key = os.path.realpath(display)
        lines = self._load_text(_normalize(text), display, key)
        self._run_file(display, lines, 0)
        body = "\n".join(self.out) + ("\n" if self.out else "")
        return Preprocessed(body, self.origins, self.warnings, self.sources)

    def _define_cmdline(self, name: str, value: str | None) -> None:
        text = f"{name} {'1' if value is None else value}"
        if "=" in name and value is None:  # accept "-DNAME=VALUE" spelled as one key
            head, _, tail = name.partition("=")
            text = f"{head} {tail}"
        try:
            macro = _parse_define(_tokenize(text))
        except _MacroError as e:
            raise PreprocessError(_CMDLINE, None, f"-D{name}: {e}") from None
        self.macros[macro.name] = macro

    # -- diagnostics and output ------------------------------------------

    def _error(
        self, message: str, line: int | None = None, col: int | None = None
    ) -> PreprocessError:
        return PreprocessError(self.cur_file, self.cur_line if line is None else line, message, col)

    def _warn(self, message: str) -> None:
        self.warnings.append(f"{self.cur_file}({self.cur_line}): warning: {message}")

    def _emit(self, text: str, display: str, line: int) -> None:
        self.out.append(text)
        self.origins.append(SourceLine(display, line))

    def _emit_blank(self, display: str, first: int, last: int) -> None:
        for p in range(first, last + 1):
            self.out.append("")
            self.origins.append(SourceLine(display, p))

    # -- files ----------------------------------------------------------

    def _load_text(self, text: str, display: str, key: str) -> list[_Line]:
        self.sources.setdefault(display, text.split("\n"))
        lines = self.cache.get(key)
        if lines is None:
            lines = _split_lines(text, display)
            self.cache[key] = lines
        return lines

    def _run_file(self, display: str, lines: list[_Line], depth: int) -> _FileCtx:
        ctx = _FileCtx(display, Path(display).parent, lines, depth)
        saved = (self.cur_file, self.cur_line)
        self.cur_file = display
        n = len(lines)
        while ctx.i < n:
            ln = lines[ctx.i]
            ctx.i += 1
            self.cur_line = ln.first
            if ln.is_directive:
                self._directive(ctx, ln)
            elif ctx.active:
                if ln.text.strip():
                    self._note_significant(ctx, None)
                self._text_line(ctx, ln)
            else:
                self._emit_blank(display, ln.first, ln.last)
        if ctx.conds:
            c = ctx.conds[-1]
            raise self._error(f"unterminated #{c.directive}", c.line)
        self.cur_file, self.cur_line = saved
        return ctx

    def _note_significant(self, ctx: _FileCtx, guard: str | None) -> None:
        """Track whether the whole file sits inside one ``#ifndef`` guard."""
        if ctx.guard_state == 0:
            if guard is not None:
                ctx.guard_state, ctx.guard_name = 1, guard
            else:
                ctx.guard_state = -1
        elif ctx.guard_state == 2:
            ctx.guard_state = -1

    # -- text lines -------------------------------------------------------

    def _has_macro(self, text: str) -> bool:
        macros = self.macros
        for word in _IDENT_RE.findall(text):
            if word in macros or word in _BUILTINS:
                return True
        return False

    def _text_line(self, ctx: _FileCtx, ln: _Line) -> None:
        if not self._has_macro(ln.text):
            self._emit(ln.text.rstrip(), ctx.display, ln.first)
            self._emit_blank(ctx.display, ln.first + 1, ln.last)
            return
        start = ctx.i
        try:
            toks = self._expand(_tokenize(ln.text), _Feed(ctx))
        except _MacroError as e:
            raise self._error(str(e)) from None
        self._emit(_render(toks).rstrip(), ctx.display, ln.first)
        self._emit_blank(ctx.display, ln.first + 1, ln.last)
        for k in range(start, ctx.i):
            self._emit_blank(ctx.display, ctx.lines[k].first, ctx.lines[k].last)

    # -- macro expansion ------------------------------------------------

    def _builtin(self, name: str) -> _Tok | None:
        if name == "__LINE__":
            return _Tok(_NUM, str(self.cur_line))
        if name == "__FILE__":
            return _Tok(_STR, '"' + self.cur_file.replace("\\", "\\\\").replace('"', '\\"') + '"')
        if name == "__COUNTER__":
            self.counter += 1
            return _Tok(_NUM, str(self.counter - 1))
        return None

    def _expand(self, toks: list[_Tok], feed: _Feed | None) -> list[_Tok]:
        out: list[_Tok] = []
        stack = toks[::-1]
        macros = self.macros
        while stack:
            t = stack.pop()
            if t.kind != _ID or t.text in t.hide:
                out.append(t)
                continue
            name = t.text
            m = macros.get(name)
            if m is None:
                b = self._builtin(name) if name in _BUILTINS else None
                if b is not None:
                    b.avoid = t.avoid
                out.append(b if b is not None else t)
                continue
            if m.params is None:
                body = self._subst(m, None, t.hide | {name})
            else:
                if not self._at_paren(stack, feed):
                    out.append(t)
                    continue
                args, rparen = self._collect_args(m, stack, feed)
                body = self._subst(m, args, (t.hide & rparen.hide) | {name})
            if stack:
                stack[-1].avoid = True
            if body:
                body[0].avoid = True
                stack.extend(reversed(body))
        return out

    @staticmethod
    def _at_paren(stack: list[_Tok], feed: _Feed | None) -> bool:
        """If the next non-blank token is ``(``, consume up to it and say so."""
        k = len(stack) - 1
        while k >= 0 and stack[k].kind == _WS:
            k -= 1
        if k < 0:
            more = feed.pull_if_paren() if feed is not None else None
            if more is None:
                return False
            stack[:] = more[::-1]
            k = len(stack) - 1
            while stack[k].kind == _WS:
                k -= 1
        if not stack[k].is_punct("("):
            return False
        del stack[k:]
        return True

    def _collect_args(
        self, m: _Macro, stack: list[_Tok], feed: _Feed | None
    ) -> tuple[list[list[_Tok]], _Tok]:
        assert m.params is not None
        nparams = len(m.params)
        args: list[list[_Tok]] = [[]]
        depth = 0
        while True:
            if not stack:
                more = feed.pull() if feed is not None else None
                if more is None:
                    raise _MacroError(f'unterminated argument list invoking macro "{m.name}"')
                stack.extend(reversed(more))
                continue
            t = stack.pop()
            if t.kind == _PUNCT:
                if t.text == "(":
                    depth += 1
                elif t.text == ")":
                    if depth == 0:
                        rparen = t
                        break
                    depth -= 1
                elif t.text == "," and depth == 0 and not (m.variadic and len(args) == nparams):
                    args.append([])
                    continue
            args[-1].append(t)
        args = [_strip_ws(a) for a in args]
        if nparams == 0:
            if len(args) == 1 and not args[0]:
                return [], rparen
            raise _MacroError(f'macro "{m.name}" passed {len(args)} arguments, but takes just 0')
        if len(args) < nparams:
            if m.variadic and len(args) == nparams - 1:
                args.append([])
            else:
                raise _MacroError(
                    f'macro "{m.name}" requires {nparams} arguments, but only {len(args)} given'
                )
        elif len(args) > nparams:
            raise _MacroError(
                f'macro "{m.name}" passed {len(args)} arguments, but takes just {nparams}'
            )
        return args, rparen

    def _subst(self, m: _Macro, args: list[list[_Tok]] | None, hs: frozenset[str]) -> list[_Tok]:
        """Substitute arguments into a copy of the body, adding hide set ``hs``.

        An empty operand of ``##`` is represented by a placemarker token while
        pasting, so that ``a ## b ## c`` with empty ``a`` and ``b`` gives ``c``.
        """
        body = m.body
        if args is None:
            if not m.has_paste:
                return [t.copy(hs) for t in body]
            args = []
        pindex = m.pindex
        va = m.params[-1] if m.params and m.variadic else None

        def raw(name: str) -> list[_Tok]:
            arg = args[pindex[name]]
            return [a.copy(hs) for a in arg] if arg else [_Tok(_MARK, "", hs)]

        expanded: dict[int, list[_Tok]] = {}
        out: list[_Tok] = []
        mark_next = False
        i, n = 0, len(body)
        while i < n:
            t = body[i]
            if t.is_punct("#"):
                j = _skip_ws(body, i + 1)
                if j < n and body[j].kind == _ID and body[j].text in pindex:
                    out.append(_stringize(args[pindex[body[j].text]], hs))
                    i = j + 1
                    continue
            elif t.is_punct("##"):
                while out[-1].kind == _WS:
                    out.pop()
                lhs = out.pop()
                j = _skip_ws(body, i + 1)
                rhs = body[j]
                is_param = rhs.kind == _ID and rhs.text in pindex
                right = raw(rhs.text) if is_param else [rhs.copy(hs)]
                if is_param and rhs.text == va and lhs.is_punct(","):
                    # GNU ", ## __VA_ARGS__": no paste; the comma goes if there are no args
                    if right[0].kind != _MARK:
                        out.append(lhs)
                        out.extend(right)
                else:
                    out.extend(_paste(lhs, right[0], hs))
                    out.extend(right[1:])
                i = j + 1
                continue
            elif t.kind == _ID and t.text in pindex:
                j = _skip_ws(body, i + 1)
                if j < n and body[j].is_punct("##"):
                    out.extend(raw(t.text))
                    i += 1
                    continue
                p = pindex[t.text]
                exp = expanded.get(p)
                if exp is None:
                    exp = self._expand([a.copy(_EMPTY) for a in args[p]], None)
                    expanded[p] = exp
                if exp:
                    first = len(out)
                    out.extend(a.copy(hs) for a in exp)
                    out[first].avoid = True
                mark_next = True
                i += 1
                continue
            c = t.copy(hs)
            if mark_next and c.kind != _WS:
                c.avoid = True
                mark_next = False
            out.append(c)
            i += 1
        return [t for t in out if t.kind != _MARK]

    # -- directives -------------------------------------------------------

    def _directive(self, ctx: _FileCtx, ln: _Line) -> None:
        stripped = ln.text.lstrip()
        col = len(ln.text) - len(stripped) + 1
        m = _DIRECTIVE_RE.match(stripped)
        assert m is not None
        name = m.group(1)
        rest = stripped[m.end() :]
        self._emit_blank(ctx.display, ln.first, ln.last)
        opens_guard = name in ("if", "ifndef") and not ctx.conds and ctx.active
        self._note_significant(ctx, self._guard_macro(name, rest) if opens_guard else None)
        if name in _CONDITIONALS:
            self._conditional(ctx, name, rest, ln, col)
            return
        if not ctx.active:
            return
        try:
            if name is None:
                if rest.strip():
                    raise self._error(
                        f"invalid preprocessing directive #{rest.split()[0]}", col=col
                    )
            elif name == "define":
                self._do_define(rest)
            elif name == "undef":
                self._do_undef(rest)
            elif name == "include":
                self._do_include(ctx, rest, col)
            elif name == "error":
                raise self._error(f"#error {rest.strip()}".rstrip(), col=col)
            elif name == "warning":
                self._warn(f"#warning {rest.strip()}".rstrip())
            elif name == "pragma":
                if rest.split() == ["once"]:
                    self.once.add(os.path.realpath(ctx.display))
            elif name in _IGNORED or name.isdigit():
                pass
            else:
                raise self._error(f"invalid preprocessing directive #{name}", col=col)
        except _MacroError as e:
            raise self._error(str(e), col=col) from None

    def _do_define(self, rest: str) -> None:
        macro = _parse_define(_tokenize(rest))
        old = self.macros.get(macro.name)
        if old is not None and not old.same_as(macro):
            self._warn(f'"{macro.name}" redefined')
        self.macros[macro.name] = macro

    def _do_undef(self, rest: str) -> None:
        name = self._macro_name(rest, "undef")
        self.macros.pop(name, None)

    def _macro_name(self, rest: str, directive: str) -> str:
        toks = _strip_ws(_tokenize(rest))
        if not toks:
            raise _MacroError(f"no macro name given in #{directive} directive")
        if toks[0].kind != _ID:
            raise _MacroError("macro names must be identifiers")
        if len(toks) > 1:
            self._warn(f"extra tokens at end of #{directive} directive")
        return toks[0].text

    # -- conditionals -----------------------------------------------------

    def _conditional(self, ctx: _FileCtx, name: str, rest: str, ln: _Line, col: int) -> None:
        try:
            if name in ("if", "ifdef", "ifndef"):
                if ctx.active:
                    cond = self._test(name, rest)
                    ctx.conds.append(_Cond(name, ln.first, True, cond))
                    ctx.active = cond
                else:
                    ctx.conds.append(_Cond(name, ln.first, False, True))
                return
            if not ctx.conds:
                raise self._error(f"#{name} without #if", col=col)
            c = ctx.conds[-1]
            if name == "endif":
                if rest.strip():
                    self._warn("extra tokens at end of #endif directive")
                ctx.conds.pop()
                ctx.active = c.parent_active
                if not ctx.conds and ctx.guard_state == 1:
                    ctx.guard_state = 2
                return
            if c.else_seen:
                raise self._error(f"#{name} after #else", col=col)
            if not ctx.conds[:-1] and ctx.guard_state == 1:
                ctx.guard_state = -1  # a top-level #else/#elif: not a plain guard
            c.directive = name
            if name == "else":
                if rest.strip():
                    self._warn("extra tokens at end of #else directive")
                c.else_seen = True
                ctx.active = c.parent_active and not c.taken
                c.taken = True
                return
            # #elif, #elifdef, #elifndef
            if not c.parent_active or c.taken:
                ctx.active = False
                return
            cond = self._test(name, rest)
            ctx.active = cond
            c.taken = cond
        except _MacroError as e:
            raise self._error(str(e), col=col) from None

    def _test(self, name: str, rest: str) -> bool:
        if name in ("ifdef", "elifdef"):
            return self._is_defined(self._macro_name(rest, name))
        if name in ("ifndef", "elifndef"):
            return not self._is_defined(self._macro_name(rest, name))
        return self._eval_if(rest, name)

    def _is_defined(self, name: str) -> bool:
        return name in self.macros or name in _BUILTINS or name == "__has_include"

    @staticmethod
    def _guard_macro(name: str, rest: str) -> str | None:
        """The guard macro if this opens ``#ifndef X`` or ``#if !defined(X)``."""
        if name == "ifndef":
            words = rest.split()
            return words[0] if len(words) == 1 else None
        if name == "if":
            m = re.fullmatch(r"\s*!\s*defined\s*(?:\(\s*(\w+)\s*\)|\s(\w+))\s*", rest)
            if m is not None:
                return m.group(1) or m.group(2)
        return None

    def _eval_if(self, rest: str, directive: str) -> bool:
        toks = self._replace_defined(_tokenize(rest))
        toks = self._expand(toks, None)
        toks = self._replace_defined(toks)
        return _ExprParser(toks, directive).evaluate()

    def _replace_defined(self, toks: list[_Tok]) -> list[_Tok]:
        """Replace ``defined X``, ``defined(X)`` and ``__has_include(...)`` by 0/1."""
        out: list[_Tok] = []
        i, n = 0, len(toks)
        while i < n:
            t = toks[i]
            if t.kind == _ID and t.text == "defined":
                j = _skip_ws(toks, i + 1)
                paren = j < n and toks[j].is_punct("(")
                if paren:
                    j = _skip_ws(toks, j + 1)
                if j >= n or toks[j].kind != _ID:
                    raise _MacroError('operator "defined" requires an identifier')
                value = self._is_defined(toks[j].text)
                j += 1
                if paren:
                    j = _skip_ws(toks, j)
                    if j >= n or not toks[j].is_punct(")"):
                        raise _MacroError("missing ')' after \"defined\"")
                    j += 1
                out.append(_Tok(_NUM, "1" if value else "0"))
                i = j
            elif t.kind == _ID and t.text == "__has_include":
                found, i = self._has_include(toks, i + 1)
                out.append(_Tok(_NUM, "1" if found else "0"))
            else:
                out.append(t)
                i += 1
        return out

    def _has_include(self, toks: list[_Tok], i: int) -> tuple[bool, int]:
        n = len(toks)
        i = _skip_ws(toks, i)
        if i >= n or not toks[i].is_punct("("):
            raise _MacroError("missing '(' after \"__has_include\"")
        j = _skip_ws(toks, i + 1)
        end = j
        while end < n and not toks[end].is_punct(")"):
            end += 1
        if end >= n:
            raise _MacroError("missing ')' after \"__has_include\" operand")
        spec = "".join(t.text for t in toks[j:end]).strip()
        parsed = self._parse_include_name(spec)
        if parsed is None:
            raise _MacroError('operator "__has_include" requires a header name')
        return self._resolve(parsed[0], parsed[1], Path(self.cur_file).parent) is not None, end + 1

    # -- #include ---------------------------------------------------------

    @staticmethod
    def _parse_include_name(spec: str) -> tuple[str, bool, str] | None:
        """Split ``"name" rest`` or ``<name> rest`` into (name, angle, rest)."""
        if spec.startswith('"'):
            end = spec.find('"', 1)
            if end > 0:
                return spec[1:end], False, spec[end + 1 :]
        elif spec.startswith("<"):
            end = spec.find(">", 1)
            if end > 0:
                return spec[1:end], True, spec[end + 1 :]
        return None

    def _resolve(self, name: str, angle: bool, here: Path) -> tuple[Path, str] | None:
        if os.path.isabs(name):
            return (Path(name), name) if os.path.isfile(name) else None
        dirs = ([] if angle else [here]) + self.include_dirs + [SYSTEM_INCLUDE_DIR]
        for d in dirs:
            candidate = d / name
            if candidate.is_file():
                return candidate, str(candidate)
        return None

    def _do_include(self, ctx: _FileCtx, rest: str, col: int) -> None:
        spec = rest.strip()
        parsed = self._parse_include_name(spec)
        if parsed is None and spec:
            spec = _render(self._expand(_tokenize(spec), None)).strip()
            parsed = self._parse_include_name(spec)
        if parsed is None:
            raise self._error('#include expects "FILENAME" or <FILENAME>', col=col)
        name, angle, tail = parsed
        if not name:
            raise self._error("empty filename in #include", col=col)
        if tail.strip():
            self._warn("extra tokens at end of #include directive")
        found = self._resolve(name, angle, ctx.dir)
        if found is None:
            raise self._error(f"#include: file not found: {name}", col=col)
        path, display = found
        depth = ctx.depth + 1
        if depth > MAX_INCLUDE_DEPTH:
            raise self._error(
                f"#include nested too deeply (depth {depth}, maximum {MAX_INCLUDE_DEPTH})", col=col
            )
        key = os.path.realpath(path)
        if key in self.once:
            return
        guard = self.guards.get(key)
        if guard is not None and guard in self.macros:
            return
        lines = self.cache.get(key)
        if lines is None or display not in self.sources:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as e:
                raise self._error(f"#include: cannot read {name}: {e.strerror}", col=col) from None
            lines = self._load_text(_normalize(text), display, key)
        sub = self._run_file(display, lines, depth)
        if sub.guard_state == 2:
            self.guards[key] = sub.guard_name


# --------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------


def preprocess_text(
    text: str,
    filename: str = "<input>",
    include_dirs: Sequence[Path | str] = (),
    defines: Mapping[str, str | None] | None = None,
) -> Preprocessed:
    """Preprocess ``text`` as if it were the contents of ``filename``.

    ``#include "x"`` looks next to ``filename`` first.  ``defines`` maps macro
    names to bodies; ``None`` defines the macro as ``1`` (like ``-DNAME``) and a
    key such as ``"F(x)"`` defines a function-like macro.
    """
    return _Preprocessor(include_dirs, defines).run(text, filename)


def preprocess(
    path: str | Path,
    include_dirs: Sequence[Path | str] = (),
    defines: Mapping[str, str | None] | None = None,
) -> Preprocessed:
    """Preprocess the file at ``path`` (see :func:`preprocess_text`)."""
    display = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise PreprocessError(display, None, f"cannot open file: {e.strerror}") from None
    return preprocess_text(text, display, include_dirs, defines)
